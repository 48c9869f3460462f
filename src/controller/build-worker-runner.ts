import { Counter, Gauge, Histogram } from 'prom-client';
import type { Logger } from '../observability/logger';
import { ConvoyMetrics } from '../observability/metrics';
import type { ObjectStatus, StatusSink } from '../status/types';
import { statusKey } from '../status/types';
import { ObjectStore } from '../store/store';
import type { TranslateOptions } from '../envoy/translate';
import { XdsCache } from '../xds/cache';
import { FleetDeltaEncoder } from '../xds/snapshot-delta';
import type { FleetRejections, RejectionFeed } from '../xds/rejections';
import { Controller } from './controller';
import {
  STATUS_CHUNK,
  provisioningModel,
  type BuildWorkerInit,
  type FromBuildWorker,
  type ToBuildWorker,
} from './build-worker-protocol';

/** The build thread's side of a message channel (worker_threads' parentPort, or a test's port). */
export interface BuildWorkerPort {
  postMessage(message: FromBuildWorker, transfer?: ArrayBuffer[]): void;
  on(event: 'message', listener: (message: ToBuildWorker) => void): void;
}

/** The source name under which the serving thread's store is mirrored (one source: it is synced or not). */
const SERVING_STORE = 'serving-thread';

/**
 * Runs the Controller in the build thread (docs/architecture.md §14): a copy of the store fed by
 * the serving thread's store changes, the Controller with its fast paths and full builds, and an
 * XdsCache whose every accepted change goes back as a FleetDelta. Statuses, fleet models, metric
 * updates and rejection re-offers go back as messages. Returns the Controller (tests).
 */
export function runBuildWorker(
  port: BuildWorkerPort,
  init: BuildWorkerInit,
  translate: TranslateOptions,
  logger: Logger,
): Controller {
  const store = new ObjectStore();
  store.registerSource(SERVING_STORE);
  const metrics = new ConvoyMetrics();
  forwardMetricCalls(metrics, (field, method, args) =>
    port.postMessage({ t: 'metric', field, method, args }),
  );
  const cache = new XdsCache({ logger, metrics });
  const encoder = new FleetDeltaEncoder();
  cache.onChange((change) => {
    const delta = encoder.encode(change);
    port.postMessage({ t: 'fleet', delta }, [delta.bytes]);
  });
  const rejections = new ForwardedRejections((fleet, resources) =>
    port.postMessage({ t: 'reoffer', fleet, resources }),
  );
  let ready = false;
  const statuses = new StatusDeltaSink(port);
  let expiries: { listener: string; notAfter: number }[] = [];
  const controller = new Controller({
    ...init.controller,
    store,
    cache,
    statusSinks: [statuses],
    logger,
    metrics,
    translate,
    rejections,
    onFleets: (fleets, untouched) => {
      if (!ready) {
        ready = true;
        port.postMessage({ t: 'fleets', fleets: cache.fleets() });
        port.postMessage({ t: 'ready' });
      }
      const now = [...metrics.certificateExpiries()];
      if (!sameExpiries(now, expiries)) port.postMessage({ t: 'expiries', expiries: now });
      expiries = now;
      if (init.fleetModels)
        port.postMessage({
          t: 'fleet-models',
          models: fleets.map(provisioningModel),
          untouched: [...untouched],
        });
    },
  });
  port.on('message', (m) => {
    switch (m.t) {
      case 'store':
        for (const op of m.ops) {
          if (op.op === 'put') store.put(op.object);
          else store.delete(op.kind, op.namespace, op.name);
        }
        return;
      case 'synced':
        store.markSynced(SERVING_STORE);
        return;
      case 'rejections':
        rejections.set(m.view);
        return;
      case 'full-build':
        controller.requestFullBuild();
        return;
      case 'status-ack':
        statuses.acknowledged();
        return;
      case 'settle':
        void controller
          .settle()
          .then(() => statuses.drained())
          .then(() => port.postMessage({ t: 'settled', id: m.id }));
        return;
    }
  });
  controller.start();
  return controller;
}

/**
 * Sends the Controller's statuses to the serving thread as changes: only statuses whose object
 * differs from the last one sent for their key (the Controller keeps an unchanged status's
 * identity). A full publication carries the full key order on its last chunk; a fast path's
 * changes carry the keys that went instead, so they cost what changed, not the world. Chunks are
 * paced: the next goes when the serving thread acknowledged the previous one ('status-ack'), so
 * receiving the 15,000 statuses of a first build is many short turns there, with streams served in
 * between, not one long one.
 */
export class StatusDeltaSink implements StatusSink {
  private sent = new Map<string, ObjectStatus>();
  private first = true;
  private readonly outbox: FromBuildWorker[] = [];
  private inFlight = false;
  private drainedWaiters: (() => void)[] = [];

  constructor(private readonly port: Pick<BuildWorkerPort, 'postMessage'>) {}

  publish(statuses: ObjectStatus[]): void {
    const next = new Map<string, ObjectStatus>();
    const changed: ObjectStatus[] = [];
    for (const s of statuses) {
      const key = statusKey(s);
      next.set(key, s);
      if (this.sent.get(key) !== s) changed.push(s);
    }
    this.sent = next;
    this.send(changed, { keys: [...next.keys()] });
  }

  publishChanges(changed: ObjectStatus[], removed: string[]): void {
    for (const key of removed) this.sent.delete(key);
    for (const s of changed) this.sent.set(statusKey(s), s);
    this.send(changed, { removed });
  }

  /** Queues `changed` in chunks; the last carries `end` (the full key order, or the keys gone). */
  private send(changed: ObjectStatus[], end: { keys: string[] } | { removed: string[] }): void {
    const reset = this.first;
    this.first = false;
    for (let i = 0; i === 0 || i < changed.length; i += STATUS_CHUNK) {
      const last = i + STATUS_CHUNK >= changed.length;
      this.outbox.push({
        t: 'statuses',
        reset: reset && i === 0,
        changed: changed.slice(i, i + STATUS_CHUNK),
        last,
        ...(last ? end : {}),
      });
    }
    this.sendNext();
  }

  /** The serving thread took the last chunk sent. */
  acknowledged(): void {
    this.inFlight = false;
    this.sendNext();
  }

  /** Resolves once every status chunk was acknowledged. */
  drained(): Promise<void> {
    if (!this.inFlight && this.outbox.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainedWaiters.push(resolve));
  }

  private sendNext(): void {
    if (this.inFlight) return;
    const message = this.outbox.shift();
    if (!message) {
      const waiters = this.drainedWaiters;
      this.drainedWaiters = [];
      for (const w of waiters) w();
      return;
    }
    this.inFlight = true;
    this.port.postMessage(message);
  }
}

/** The rejections the serving thread's ADS server reports, as the build thread's Controller reads them. */
class ForwardedRejections implements RejectionFeed {
  private readonly views = new Map<string, FleetRejections>();
  private readonly listeners = new Set<(view: FleetRejections) => void>();

  constructor(private readonly sendReoffer: RejectionFeed['reoffer']) {}

  set(view: FleetRejections): void {
    if (view.resources.length === 0) this.views.delete(view.fleet);
    else this.views.set(view.fleet, view);
    for (const l of this.listeners) l(view);
  }

  rejections(): FleetRejections[] {
    return [...this.views.values()];
  }

  onRejectionsChange(listener: (view: FleetRejections) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  reoffer(fleet: string, resources: readonly { typeUrl: string; name: string }[]): void {
    this.sendReoffer(
      fleet,
      resources.map((r) => ({ typeUrl: r.typeUrl, name: r.name })),
    );
  }
}

/** The metric methods a build thread may call; the serving thread applies exactly these. */
export const FORWARDED_METRIC_METHODS: readonly string[] = ['inc', 'dec', 'set', 'observe', 'reset'];

/**
 * Replaces the update methods of every counter, gauge and histogram of `metrics` by a call to
 * `send`, so the build thread's metric updates land in the serving thread's registry (the one
 * /metrics reads). Every metric field is covered, so a metric added later is forwarded too.
 */
export function forwardMetricCalls(
  metrics: ConvoyMetrics,
  send: (field: string, method: string, args: unknown[]) => void,
): void {
  for (const [field, value] of Object.entries(metrics)) {
    if (!(value instanceof Counter || value instanceof Gauge || value instanceof Histogram)) continue;
    const target = value as unknown as Record<string, unknown>;
    for (const method of FORWARDED_METRIC_METHODS) {
      if (typeof target[method] !== 'function') continue;
      target[method] = (...args: unknown[]) => send(field, method, args);
    }
  }
}

/** Applies a forwarded metric call to the serving thread's metrics; unknown fields or methods are ignored. */
export function applyMetricCall(
  metrics: ConvoyMetrics,
  field: string,
  method: string,
  args: unknown[],
): void {
  const value = (metrics as unknown as Record<string, unknown>)[field];
  if (!(value instanceof Counter || value instanceof Gauge || value instanceof Histogram)) return;
  if (!FORWARDED_METRIC_METHODS.includes(method)) return;
  const fn = (value as unknown as Record<string, unknown>)[method];
  if (typeof fn === 'function') (fn as (...a: unknown[]) => void).apply(value, args);
}

/** True when both lists name the same listeners with the same expiry, in the same order. */
function sameExpiries(
  a: readonly { listener: string; notAfter: number }[],
  b: readonly { listener: string; notAfter: number }[],
): boolean {
  return (
    a.length === b.length && a.every((e, i) => e.listener === b[i].listener && e.notAfter === b[i].notAfter)
  );
}
