/**
 * Control-plane cost of one hostname change per listener layout (docs/xds.md §16): the bytes each
 * Envoy receives over SotW and over delta ADS, and the time from a new model to an accepted
 * snapshot (translation, encoding, consistency check: XdsCache.setFleet).
 *
 * Bytes are the response bodies Convoy's streams send, built with the streams' own encoders
 * (src/xds/encode.ts): SotW sends every Listener and every Cluster whenever one of them changed
 * (the xDS protocol requires the whole set for those two types) and only the changed
 * RouteConfigurations, assignments and Secrets; delta sends the changed resources and the names of
 * removed ones. The gRPC frame and the nonce (a few dozen bytes) are left out.
 */
import { TypeUrl } from '../../src/envoy/resources';
import { encodeDeltaBody, encodeSotwBody } from '../../src/xds/encode';
import type { CacheEntry } from '../../src/xds/snapshot';
import { issueLeaf } from '../pki';
import { hostnameOf } from '../world';
import { median, nowMs, round } from '../common';
import { ControlPlane } from './plane';
import type { LayoutPki } from './world';
import { LAYOUT_FLEET, LayoutWorld, type EdgeCases } from './world';
import type { ListenerLayout } from '../../src/envoy/translate/sni-dispatch';

const WHOLE_SET_TYPES: ReadonlySet<string> = new Set([TypeUrl.Listener, TypeUrl.Cluster]);

/** What one change cost. */
export interface ChangeCost {
  sotwBytes: number;
  deltaBytes: number;
  /** Types whose resources changed, with counts: `Listener +1 -0 ~1`. */
  types: string[];
  ms: number;
}

/** Publishes `next` and returns the bytes of the responses the change causes, and the time taken. */
function publishCost(cp: ControlPlane, next: () => ReturnType<LayoutWorld['model']>): ChangeCost {
  const before = cp.cache.snapshot(LAYOUT_FLEET)!;
  const t0 = nowMs();
  cp.publish(next());
  const ms = nowMs() - t0;
  const after = cp.cache.snapshot(LAYOUT_FLEET)!;
  let sotwBytes = 0;
  let deltaBytes = 0;
  const types: string[] = [];
  for (const type of Object.values(TypeUrl)) {
    const a = after.types[type];
    const b = before.types[type];
    if (a === b) continue;
    const changed: CacheEntry[] = [];
    for (const [name, e] of a.entries) if (b.entries.get(name)?.version !== e.version) changed.push(e);
    const removed = [...b.entries.keys()].filter((n) => !a.entries.has(n));
    if (changed.length === 0 && removed.length === 0) continue;
    types.push(`${type.split('.').pop()} ~${changed.length} -${removed.length}`);
    deltaBytes += encodeDeltaBody(type, '', changed, removed).length;
    sotwBytes += WHOLE_SET_TYPES.has(type)
      ? encodeSotwBody(type, a.version, a.sorted).length
      : changed.length
        ? encodeSotwBody(type, a.version, changed).length
        : 0;
  }
  return { sotwBytes, deltaBytes, types, ms };
}

/** The costs of adding, removing and re-certifying a hostname in a world of n, median over repeats. */
export function measureLayoutBytes(
  layout: ListenerLayout,
  n: number,
  edges: EdgeCases,
  certs: LayoutPki,
  repeats: number,
  threshold?: number,
): Record<'add' | 'remove' | 'recertify', ChangeCost & { msRuns: number[] }> {
  const world = new LayoutWorld(certs);
  const cp = new ControlPlane(layout, threshold);
  const base = Array.from({ length: n }, (_, i) => i);
  const plus = [...base, n];
  cp.publish(world.model(base, edges));
  const runs: Record<'add' | 'remove' | 'recertify', ChangeCost[]> = { add: [], remove: [], recertify: [] };
  const fresh = issueLeaf(certs.pki.ca, hostnameOf(0));
  for (let k = 0; k < repeats; k++) {
    runs.add.push(publishCost(cp, () => world.model(plus, edges)));
    runs.remove.push(publishCost(cp, () => world.model(base, edges)));
    world.recertify(0, k % 2 === 0 ? fresh : certs.leaf(0));
    runs.recertify.push(publishCost(cp, () => world.model(base, edges)));
  }
  const summary = (c: ChangeCost[]) => ({
    ...c[0],
    ms: round(median(c.map((x) => x.ms)), 2),
    msRuns: c.map((x) => round(x.ms, 2)),
  });
  return { add: summary(runs.add), remove: summary(runs.remove), recertify: summary(runs.recertify) };
}
