import { Worker } from 'node:worker_threads';
import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import type { FleetModel } from '../model/fleet';
import type { ObjectStatus, StatusSink } from '../status/types';
import { statusKey } from '../status/types';
import type { ObjectStore, StoreChange } from '../store/store';
import { objectNamespace } from '../store/objects';
import type { MirrorCache } from '../xds/mirror-cache';
import type { RejectionFeed } from '../xds/rejections';
import {
  STORE_CHUNK,
  type BuildWorkerInit,
  type FromBuildWorker,
  type StoreOp,
} from './build-worker-protocol';
import { applyMetricCall } from './build-worker-runner';

export interface BuildWorkerHostOptions {
  /** The build thread's script (it calls runBuildWorker with its workerData). */
  entry: string;
  init: BuildWorkerInit;
  store: ObjectStore;
  /** What the ADS server serves from: the build thread's snapshots arrive here. */
  cache: MirrorCache;
  statusSinks: StatusSink[];
  logger: Logger;
  metrics: ConvoyMetrics;
  rejections?: RejectionFeed;
  onFleets?: (fleets: readonly FleetModel[], untouched: readonly string[]) => void;
  /** First restart delay after a crash; doubles up to 30 s while crashes repeat. */
  restartDelayMs?: number;
}

const MAX_RESTART_DELAY_MS = 30_000;

/**
 * Runs the Controller in a worker thread and keeps the serving thread's side of it
 * (docs/architecture.md §14): store changes go to the thread, snapshot deltas come back into the
 * MirrorCache the ADS server reads, statuses go to the sinks, fleet models to the provisioner,
 * metric updates into this thread's registry. Has the Controller's surface that `convoy serve`
 * uses (start, stop, requestFullBuild, isReady, settle). When the thread dies, the ADS server
 * keeps serving the last snapshots; the thread is restarted with the whole store after a delay
 * (logged, counted in convoy_build_worker_restarts_total).
 */
export class BuildWorkerHost {
  private worker: Worker | undefined;
  private ready = false;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private restartDelay: number;
  private unsubscribe: (() => void)[] = [];
  /** Store ops not yet posted: collected during one turn, sent in one message. */
  private queued: StoreOp[] = [];
  private flushScheduled = false;
  /** The whole store is being sent to a new thread: changes wait in `queued` until it is. */
  private sendingStore = false;
  /** Statuses as the build thread last sent them, by key. */
  private statuses = new Map<string, ObjectStatus>();
  /** The changed statuses of the publication being received (its chunks so far). */
  private statusChanges: ObjectStatus[] = [];
  private settles = new Map<number, () => void>();
  private nextSettle = 0;
  private readonly log: Logger;

  constructor(private readonly opts: BuildWorkerHostOptions) {
    this.log = opts.logger.child({ component: 'build-thread' });
    this.restartDelay = opts.restartDelayMs ?? 1000;
  }

  start(): void {
    const { store, rejections } = this.opts;
    this.unsubscribe.push(
      store.onChange((change) => this.enqueue(change)),
      store.onSynced(() => {
        if (store.isSynced() && !this.sendingStore) this.post({ t: 'synced' });
      }),
    );
    if (rejections)
      this.unsubscribe.push(rejections.onRejectionsChange((view) => this.post({ t: 'rejections', view })));
    this.spawn();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    const worker = this.worker;
    this.worker = undefined;
    for (const done of this.settles.values()) done();
    this.settles.clear();
    if (worker) await worker.terminate();
  }

  /** Schedules a full build for an input outside the store (Controller.requestFullBuild). */
  requestFullBuild(): void {
    this.post({ t: 'full-build' });
  }

  /** True once a build thread's first complete build reached the MirrorCache (stays true across restarts). */
  isReady(): boolean {
    return this.ready;
  }

  /** Resolves once the build thread has no build running or scheduled and its results arrived here. */
  settle(): Promise<void> {
    if (!this.worker) return Promise.resolve();
    const id = this.nextSettle++;
    return new Promise((resolve) => {
      this.settles.set(id, resolve);
      this.post({ t: 'settle', id });
    });
  }

  /** Ends the build thread as a crash would (tests; the host restarts it). */
  async terminateWorker(): Promise<void> {
    await this.worker?.terminate();
  }

  private spawn(): void {
    const worker = new Worker(this.opts.entry, { workerData: this.opts.init });
    this.worker = worker;
    worker.on('message', (m: FromBuildWorker) => this.onMessage(m));
    worker.on('error', (err) => this.log.error({ err }, 'build thread failed'));
    worker.on('exit', (code) => this.onExit(worker, code));
    void this.sendStore(worker);
  }

  /**
   * Sends the whole store to a new thread, a chunk of a few hundred objects per event-loop turn
   * (each clone stays short, streams are served in between), then the changes made meanwhile.
   * Objects in the store are never mutated, only replaced, so the chunks of the list made at the
   * start followed by the queued changes give the thread the store as it is now.
   */
  private async sendStore(worker: Worker): Promise<void> {
    this.sendingStore = true;
    this.queued = [];
    const objects = this.opts.store.kinds().flatMap((k) => this.opts.store.list(k));
    for (let i = 0; i < objects.length; i += STORE_CHUNK) {
      if (worker !== this.worker) return;
      const ops = objects.slice(i, i + STORE_CHUNK).map((object): StoreOp => ({ op: 'put', object }));
      worker.postMessage({ t: 'store', ops });
      await new Promise((r) => setImmediate(r));
    }
    if (worker !== this.worker) return;
    this.sendingStore = false;
    const ops = this.queued;
    this.queued = [];
    if (ops.length) worker.postMessage({ t: 'store', ops });
    for (const view of this.opts.rejections?.rejections() ?? [])
      worker.postMessage({ t: 'rejections', view });
    if (this.opts.store.isSynced()) worker.postMessage({ t: 'synced' });
  }

  private onExit(worker: Worker, code: number): void {
    if (worker !== this.worker) return;
    this.worker = undefined;
    this.queued = [];
    for (const done of this.settles.values()) done();
    this.settles.clear();
    if (this.stopped) return;
    this.opts.metrics.buildWorkerRestarts.inc();
    this.log.error(
      { code, restartInMs: this.restartDelay },
      'build thread exited; the last snapshots stay in service until it is back',
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopped) this.spawn();
    }, this.restartDelay);
    this.restartDelay = Math.min(this.restartDelay * 2, MAX_RESTART_DELAY_MS);
  }

  private enqueue(change: StoreChange): void {
    if (!this.worker) return; // the next thread gets the whole store
    const o = change.type === 'put' ? change.object : change.previous;
    this.queued.push(
      change.type === 'put'
        ? { op: 'put', object: change.object }
        : { op: 'delete', kind: o.kind, namespace: objectNamespace(o), name: o.metadata.name },
    );
    if (this.flushScheduled || this.sendingStore) return;
    this.flushScheduled = true;
    // Every change of this turn (a provider's batch) goes in one message.
    queueMicrotask(() => {
      this.flushScheduled = false;
      const ops = this.queued;
      this.queued = [];
      if (ops.length) this.post({ t: 'store', ops });
    });
  }

  private post(message: Parameters<Worker['postMessage']>[0]): void {
    this.worker?.postMessage(message);
  }

  private onMessage(m: FromBuildWorker): void {
    try {
      this.handle(m);
    } catch (err) {
      this.log.error({ err, message: m.t }, 'build thread message failed');
    }
  }

  private handle(m: FromBuildWorker): void {
    switch (m.t) {
      case 'fleet':
        this.opts.cache.apply(m.delta);
        return;
      case 'fleets':
        this.opts.cache.keepOnly(m.fleets);
        return;
      case 'ready':
        this.ready = true;
        this.restartDelay = this.opts.restartDelayMs ?? 1000;
        return;
      case 'statuses':
        try {
          this.receiveStatuses(m);
        } finally {
          // After this turn: the next chunk cannot land in the same one.
          setImmediate(() => this.post({ t: 'status-ack' }));
        }
        return;
      case 'fleet-models':
        this.opts.onFleets?.(m.models, m.untouched);
        return;
      case 'expiries':
        this.opts.metrics.certificateExpiries = () => m.expiries;
        return;
      case 'metric':
        applyMetricCall(this.opts.metrics, m.field, m.method, m.args);
        return;
      case 'reoffer':
        this.opts.rejections?.reoffer(m.fleet, m.resources);
        return;
      case 'settled':
        this.settles.get(m.id)?.();
        this.settles.delete(m.id);
        return;
    }
  }

  /**
   * Takes a chunk of status changes; on the last chunk publishes them: every status in the
   * thread's order after a full publication (`keys`), else the changes and the keys gone.
   */
  private receiveStatuses(m: Extract<FromBuildWorker, { t: 'statuses' }>): void {
    if (m.reset) {
      this.statuses = new Map();
      this.statusChanges = [];
    }
    for (const s of m.changed) this.statuses.set(statusKey(s), s);
    this.statusChanges.push(...m.changed);
    if (!m.last) return;
    const changed = this.statusChanges;
    this.statusChanges = [];
    if (!m.keys) {
      const removed = m.removed ?? [];
      for (const key of removed) this.statuses.delete(key);
      this.toSinks((sink) => sink.publishChanges(changed, removed));
      return;
    }
    const next = new Map<string, ObjectStatus>();
    for (const key of m.keys) {
      const s = this.statuses.get(key);
      if (s) next.set(key, s);
    }
    this.statuses = next;
    const all = [...next.values()];
    this.toSinks((sink) => sink.publish(all));
  }

  /** Hands a publication to every status sink; a failing sink is logged, the others still get it. */
  private toSinks(publish: (sink: StatusSink) => void): void {
    for (const sink of this.opts.statusSinks) {
      try {
        publish(sink);
      } catch (err) {
        this.log.error({ err }, 'status sink failed');
      }
    }
  }
}
