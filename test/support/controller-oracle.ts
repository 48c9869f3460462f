/**
 * A full-build oracle for the controller's fast paths (docs/architecture.md §8): a Controller run
 * over a store of given objects, and what it serves (every fleet's resources, byte for byte) and
 * last published (statuses), to compare an incrementally maintained controller with a fresh one.
 */
import { Controller, type ControllerOptions } from '../../src/controller/controller';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { silentLogger } from '../../src/observability/logger';
import { XdsCache } from '../../src/xds/cache';
import { TypeUrl } from '../../src/envoy/resources';
import type { ObjectStatus } from '../../src/status/types';
import { StatusView } from '../../src/status/view';
import type { KubeObject } from '../../src/store/objects';
import { ObjectStore } from '../../src/store/store';
import type { LastGoodCertificates } from '../../src/gateway/last-good-certificates';
import { CONTROLLER } from './objects';

/** A started Controller with its store, cache, metrics and every status list it published. */
export interface Running {
  store: ObjectStore;
  cache: XdsCache;
  metrics: ConvoyMetrics;
  controller: Controller;
  published: ObjectStatus[][];
}

/**
 * Starts a Controller over `store` (marked synced for a source "test") with the settings every
 * controller test shares, one status sink collecting what it publishes and `extra` on top, and
 * waits until it settles. Tests set the options they exercise through `extra`.
 */
export async function startController(
  store: ObjectStore,
  extra: Partial<ControllerOptions> = {},
): Promise<Running> {
  store.registerSource('test');
  store.markSynced('test');
  const metrics = new ConvoyMetrics();
  const cache = new XdsCache({ logger: silentLogger(), metrics });
  const published: ObjectStatus[][] = [];
  const controller = new Controller({
    store,
    cache,
    statusSinks: [new StatusView((s) => published.push(s))],
    logger: silentLogger(),
    metrics,
    controllerName: CONTROLLER,
    debounceMs: 1,
    maxDelayMs: 5,
    ...extra,
  });
  controller.start();
  await controller.settle();
  return { store, cache, metrics, controller, published };
}

/**
 * Runs a Controller over a store holding `objects` until it settles; `lastGood` is the memory of
 * served certificates it starts from (an oracle gets the one of the controller it checks).
 */
export async function runController(
  objects: KubeObject[],
  lastGood?: LastGoodCertificates,
): Promise<Running> {
  const store = new ObjectStore();
  for (const o of objects) store.put(o);
  return startController(store, {
    now: () => new Date('2026-03-01T12:00:00Z'),
    lastGoodCertificates: lastGood,
  });
}

/** Returns convoy_builds_total by result. */
export async function buildCounts(metrics: ConvoyMetrics): Promise<Record<string, number>> {
  const m = await metrics.builds.get();
  return Object.fromEntries(m.values.map((v) => [String(v.labels.result), v.value]));
}

/** Every fleet's resources: `fleet type` → name → version and bytes (base64). */
export function servedResources(cache: XdsCache): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const fleet of cache.fleets().sort()) {
    const snap = cache.snapshot(fleet)!;
    for (const type of Object.values(TypeUrl)) {
      const entries = snap.types[type]?.entries;
      if (!entries) continue;
      const byName: Record<string, string> = {};
      for (const [name, e] of entries)
        byName[name] = `${e.version} ${Buffer.from(e.bytes).toString('base64')}`;
      out[`${fleet} ${type}`] = byName;
    }
  }
  return out;
}

/** The last published statuses, sorted by object, without lastTransitionTime (a clock reading). */
export function lastStatuses(r: Running): unknown {
  const last = r.published.at(-1) ?? [];
  const key = (s: ObjectStatus) => `${s.kind}/${s.metadata.namespace}/${s.metadata.name}`;
  return withoutTimes([...last].sort((a, b) => key(a).localeCompare(key(b))));
}

function withoutTimes(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutTimes);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (k !== 'lastTransitionTime') out[k] = withoutTimes(x);
    return out;
  }
  return v;
}
