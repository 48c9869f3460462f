import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import type { ObjectStore } from '../store/store';
import { Debouncer } from '../store/debounce';
import type { ObjectStatus, StatusSink } from '../status/types';
import { mergeStatus } from '../status/merge';
import { buildGateways } from '../gateway/build';
import { translateFleet, type TranslateOptions } from '../envoy/translate';
import type { XdsCache } from '../xds/cache';

export interface ControllerOptions {
  store: ObjectStore;
  cache: XdsCache;
  statusSinks: StatusSink[];
  logger: Logger;
  metrics: ConvoyMetrics;
  controllerName: string;
  translate?: TranslateOptions;
  /** Quiet period after the last change before building. */
  debounceMs?: number;
  /** Upper bound on how long a burst can postpone a build. */
  maxDelayMs?: number;
  /** Clock, injectable for tests. */
  now?: () => Date;
}

/**
 * Runs the pure middle: store → gateway model/DAG + status → Envoy resources → xDS cache,
 * and hands statuses to the sinks. Builds are coalesced; nothing is built before every
 * provider has synced, so Envoys never get a partial world after a restart.
 */
export class Controller {
  private readonly debouncer: Debouncer;
  private readonly statusByKey = new Map<string, ObjectStatus>();
  private unsubscribe: (() => void)[] = [];
  private firstBuildDone = false;
  private building = false;
  private rebuildRequested = false;
  private lastBuiltRevision = -1;
  private readonly log: Logger;

  constructor(private readonly opts: ControllerOptions) {
    this.log = opts.logger.child({ component: 'controller' });
    this.debouncer = new Debouncer(() => void this.build(), opts.debounceMs ?? 50, opts.maxDelayMs ?? 500);
  }

  start(): void {
    const { store } = this.opts;
    this.unsubscribe.push(
      store.onChange(() => {
        if (store.isSynced()) this.debouncer.trigger();
      }),
      store.onSynced(() => {
        if (store.isSynced()) this.debouncer.trigger();
      }),
    );
    if (store.isSynced()) this.debouncer.trigger();
  }

  stop(): void {
    this.debouncer.cancel();
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
  }

  /** True once the first complete build has been published to the cache. */
  isReady(): boolean {
    return this.firstBuildDone;
  }

  /** Builds now (used by tests and by the debouncer). Never throws. */
  async build(): Promise<void> {
    if (this.building) {
      this.rebuildRequested = true;
      return;
    }
    this.building = true;
    try {
      do {
        this.rebuildRequested = false;
        this.buildOnce();
        // Yield so a burst of store events queued meanwhile can land before the next pass.
        await new Promise((r) => setImmediate(r));
      } while (this.rebuildRequested || this.opts.store.revision !== this.lastBuiltRevision);
    } finally {
      this.building = false;
    }
  }

  private buildOnce(): void {
    const { store, cache, metrics } = this.opts;
    const revision = store.revision;
    const started = process.hrtime.bigint();
    const now = (this.opts.now ?? (() => new Date()))();
    try {
      const result = buildGateways(store, {
        controllerName: this.opts.controllerName,
        now: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      });
      const liveFleets = new Set<string>();
      for (const fleet of result.fleets) {
        liveFleets.add(fleet.fleet);
        try {
          const resources = translateFleet(fleet, this.opts.translate);
          const outcome = cache.setFleet(fleet.fleet, resources);
          if (!outcome.ok) {
            this.log.error(
              { fleet: fleet.fleet, errors: outcome.errors },
              'snapshot refused; previous stays in service',
            );
          }
        } catch (err) {
          // One fleet's translation bug must not take the others down; its last snapshot stays.
          this.log.error(
            { fleet: fleet.fleet, err },
            'translation failed; previous snapshot stays in service',
          );
        }
      }
      for (const fleet of cache.fleets()) if (!liveFleets.has(fleet)) cache.removeFleet(fleet);
      this.publishStatuses(result.statuses);
      this.lastBuiltRevision = revision;
      this.firstBuildDone = true;
      metrics.builds.inc({ result: 'ok' });
    } catch (err) {
      this.lastBuiltRevision = revision;
      metrics.builds.inc({ result: 'error' });
      this.log.error({ err }, 'build failed; last good configuration stays in service');
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.buildDuration.observe(seconds);
      this.log.debug({ seconds, revision }, 'build finished');
    }
  }

  private publishStatuses(statuses: ObjectStatus[]): void {
    const next = new Map<string, ObjectStatus>();
    for (const s of statuses) {
      const key = `${s.kind}/${s.metadata.namespace ?? ''}/${s.metadata.name}`;
      next.set(key, mergeStatus(this.statusByKey.get(key), s));
    }
    this.statusByKey.clear();
    for (const [k, v] of next) this.statusByKey.set(k, v);
    const merged = [...next.values()];
    for (const sink of this.opts.statusSinks) {
      try {
        sink.publish(merged);
      } catch (err) {
        this.log.error({ err }, 'status sink failed');
      }
    }
  }
}
