import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import type { ObjectStore } from '../store/store';
import { Debouncer } from '../store/debounce';
import type { KubeObject } from '../store/objects';
import type { ObjectStatus, StatusSink } from '../status/types';
import { buildGateways } from '../gateway/build';
import { BuildMemo } from '../gateway/build-memo';
import type { LastGoodCertificates } from '../gateway/last-good-certificates';
import { ValidityOverlay } from './validity-overlay';
import { FleetHold, heldAddresses } from './fleet-hold';
import { addStructural, emptyWork, fallbackCause, hasWork, requireFullBuild } from './pending-work';
import type { FullBuildCause, FullBuildReason, PendingWork } from './pending-work';
import { RejectionOverlay } from './rejection-overlay';
import { StatusPublisher } from './status-publisher';
import { applyWindow, hasStateChanges, windowDecline, windowResult } from './fast-paths';
import type { FastPathInputs, FastPathOutcome } from './fast-paths';
import type { BuildState } from '../gateway/incremental/state';
import { translateFleet, type TranslateOptions } from '../envoy/translate';
import type { XdsCache } from '../xds/cache';
import type { FleetModel } from '../model/fleet';
import type { BuildOptions } from '../gateway/resolved';
import { reuseUnchanged } from '../model/reuse';
import { refreshClusterEndpoints } from '../gateway/backends';
import { fleetsWithEndpoints, fleetsWithSecrets, replacedSecrets } from './fleet-refresh';
import type { EndpointPolicy } from '../gateway/endpoint-guard';
import { ReferenceIndex, classifyChange, envoyServiceKeys } from './relevance';
import { changesRefusals, endpointSliceService } from './relevance';
import type { FleetRejections, RejectionFeed } from '../xds/rejections';

export interface ControllerOptions {
  store: ObjectStore;
  cache: XdsCache;
  statusSinks: StatusSink[];
  logger: Logger;
  metrics: ConvoyMetrics;
  controllerName: string;
  /** Allow ExternalName Services as backends (BuildOptions.externalNameServices). */
  externalNameServices?: boolean;
  /** Which endpoint addresses may become Envoy endpoints (BuildOptions.endpoints). */
  endpoints?: EndpointPolicy;
  /** Source of Gateways' status.addresses (BuildOptions.gatewayAddresses). */
  gatewayAddresses?: BuildOptions['gatewayAddresses'];
  translate?: TranslateOptions;
  /** Quiet period after the last change before building. */
  debounceMs?: number;
  /** Upper bound on how long a burst can postpone a build. */
  maxDelayMs?: number;
  /** Clock, injectable for tests. */
  now?: () => Date;
  /**
   * What the fleets' Envoys rejected (the ADS server). Rejections become conditions on the
   * objects they come from, and a change to such an object offers the resource again.
   */
  rejections?: RejectionFeed;
  /**
   * What listeners have served, to start from (gateway/last-good-certificates.ts): an oracle
   * build is given a copy of the memory of the controller it checks. Empty by default.
   */
  lastGoodCertificates?: LastGoodCertificates;
  /**
   * What earlier builds over this same store remember (gateway/build-memo.ts), to start from
   * instead of an empty memo: a benchmark hands over the memo of the build it timed before. When
   * set, `lastGoodCertificates` is ignored (the memo carries its own).
   */
  memo?: BuildMemo;
  /**
   * Wall clock for certificates' validity periods (certificate-validity.ts); the real clock by
   * default. Separate from `now`, which only stamps conditions, so a test can freeze one and not
   * the other.
   */
  validityClock?: () => Date;
  /**
   * Called with every fleet model after each build pass (full or fast path), and the Gateways
   * whose objects must be left alone (not accepted, nothing held: fleet-hold.ts): the
   * managed-fleet provisioners converge on them (docs/architecture.md §13). Must not throw or block.
   */
  onFleets?: (fleets: readonly FleetModel[], untouched: readonly string[]) => void;
  /** Convoy provisions managed fleets, in Kubernetes or as local processes (BuildOptions.managedFleets). */
  managedFleets?: boolean | 'local';
  /** The most ports a ListenerPortRange may span (BuildOptions.maxPortRangePorts). */
  maxPortRangePorts?: number;
  /** Read legacy XListenerSets (BuildOptions.xListenerSets). */
  xListenerSets?: boolean;
  /** The dynamic port pool of XListenerSet listeners (BuildOptions.dynamicPorts). */
  dynamicPorts?: { first: number; last: number };
}

/**
 * Runs the pure middle: store → gateway model/fleet model + status → Envoy resources → xDS cache,
 * and hands statuses to the sinks (status-publisher.ts). Builds are coalesced; nothing is built before every
 * provider has synced, so Envoys never get a partial world after a restart.
 */

export class Controller {
  private readonly debouncer: Debouncer;
  private unsubscribe: (() => void)[] = [];
  private firstBuildDone = false;
  private building = false;
  private rebuildRequested = false;
  /** What the changes since the last build require. */
  private pending: PendingWork = emptyWork(true);
  /** The last full build failed: lastFleets may not match the store, fast paths must not patch them. */
  private lastBuildFailed = false;
  /** What the last full build knew (routes, attachment, statuses), for the route fast path. */
  private state: BuildState | undefined;
  /** What builds over this store remember between runs (gateway/build-memo.ts). */
  private readonly memo: BuildMemo;
  /** Models of the last full build, reused by the endpoint fast path. */
  private lastFleets = new Map<string, FleetModel>();
  private references: ReferenceIndex | undefined;
  private readonly log: Logger;
  /** What the fleets' Envoys reject now, laid over the statuses (rejection-overlay.ts). */
  private readonly rejections: RejectionOverlay;
  /** Served certificates' validity warnings, laid over the statuses (validity-overlay.ts). */
  private readonly validity: ValidityOverlay;
  /** Gateways that turned invalid keep serving their last accepted model (fleet-hold.ts). */
  private readonly hold = new FleetHold();
  /** A fast path threw since the last full build (its fallback's reason is fast_path_error). */
  private fastPathFailed = false;
  /** Lays the overlays over build statuses and hands the sinks what changed (status-publisher.ts). */
  private readonly statuses: StatusPublisher;

  constructor(private readonly opts: ControllerOptions) {
    this.log = opts.logger.child({ component: 'controller' });
    this.memo = opts.memo ?? new BuildMemo(opts.lastGoodCertificates?.clone());
    this.debouncer = new Debouncer(() => void this.build(), opts.debounceMs ?? 50, opts.maxDelayMs ?? 500);
    this.rejections = new RejectionOverlay(opts.rejections, this.log);
    this.validity = new ValidityOverlay(opts.validityClock ?? (() => new Date()), () =>
      this.republishOverlays(),
    );
    this.statuses = new StatusPublisher({
      sinks: opts.statusSinks,
      log: this.log,
      hold: this.hold,
      rejections: this.rejections,
      validity: this.validity,
      inputs: () => {
        const options = this.buildOptions();
        return {
          now: options.now ?? this.nowText(),
          fleets: this.lastFleets,
          gateways: this.state?.gateways,
          heldAddresses: (f) => heldAddresses(this.opts.store, this.lastFleets.get(f), options),
        };
      },
    });
  }

  start(): void {
    const { store, rejections, metrics } = this.opts;
    metrics.certificateExpiries = () => this.validity.expiries(this.lastFleets.values());
    if (rejections) {
      for (const view of rejections.rejections()) this.rejections.set(view);
      this.unsubscribe.push(rejections.onRejectionsChange((view) => this.onRejections(view)));
    }
    this.unsubscribe.push(
      store.onChange((change) => {
        if (this.rejections.noteReoffers(change.key) && store.isSynced()) this.debouncer.trigger();
        const { impact, reason } = classifyChange(change, this.references);
        // A refused endpoint appears or goes: the build's endpoint policy, which the fast paths
        // compile routes with, changes even when no route uses the Service yet.
        if (changesRefusals(change, this.opts.endpoints ?? {}))
          requireFullBuild(this.pending, { reason: 'refused_endpoint', object: change.key });
        else if (impact === 'none') return;
        if (impact === 'full') requireFullBuild(this.pending, { reason: reason!, object: change.key });
        else if (impact === 'structural')
          addStructural(
            this.pending,
            change.key,
            change.previous ?? (change as { object: KubeObject }).object,
            reason!,
          );
        else if (impact === 'added') {
          if (change.type === 'put') this.pending.added.set(change.key, change.object);
        } else if (impact === 'secret' || impact === 'route') {
          // Keep the object the last build saw (the first `previous` since then).
          const pending = impact === 'secret' ? this.pending.secrets : this.pending.routes;
          if (change.type === 'put' && change.previous && !pending.has(change.key))
            pending.set(change.key, change.previous);
        } else {
          for (const o of [change.type === 'put' ? change.object : undefined, change.previous]) {
            const service = o && endpointSliceService(o);
            if (service) this.pending.endpointServices.add(service);
          }
        }
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
    this.validity.stop();
    this.opts.metrics.certificateExpiries = () => [];
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
  }

  /** Schedules a full build for an input outside the store (protected ports: docs/operations.md §14). */
  requestFullBuild(): void {
    requireFullBuild(this.pending, { reason: 'full_build_requested' });
    if (this.opts.store.isSynced()) this.debouncer.trigger();
  }

  /** Resolves once no build is running or scheduled (tests, graceful shutdown). */
  async settle(): Promise<void> {
    while (this.building || this.debouncer.pending()) await new Promise((r) => setTimeout(r, 2));
  }

  /** Returns a copy of what listeners have served (the memory an oracle build must start from). */
  lastGoodCertificates(): LastGoodCertificates {
    return this.memo.lastGoodCertificates.clone();
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
        const work = this.pending;
        this.pending = emptyWork(false);
        if (work.full || !this.firstBuildDone) {
          await this.fullBuild(this.firstBuildDone ? work.cause : { reason: 'startup' });
        } else if (work.secrets.size > 0 && !this.refreshSecrets(work.secrets)) {
          // Some certificate became (or was) invalid: listener conditions and chains change.
          await this.fullBuild(this.fallback('certificate_validity_changed', work.secrets));
        } else if (hasStateChanges(work) && !(await this.refreshWindow(work))) {
          // Edits, removals, replacements, creations: the fast paths in turn (fast-paths.ts applyWindow).
          await this.fullBuild(this.windowFallback);
        } else if (work.endpointServices.size > 0) this.refreshEndpoints(work.endpointServices);
        // Yield so a burst of store events queued meanwhile can land before the next pass.
        await new Promise((r) => setImmediate(r));
      } while (this.rebuildRequested || hasWork(this.pending));
      this.rejections.flushReoffers();
      this.notifyFleets();
    } finally {
      this.building = false;
    }
  }

  /** Why a fast path over `changed` declined (pending-work.ts fallbackCause). */
  private fallback(reason: FullBuildReason, changed: Map<string, KubeObject>): FullBuildCause {
    return fallbackCause(reason, changed, this.lastBuildFailed, this.fastPathFailed);
  }

  /**
   * Runs a full build, first logging (info) and counting (convoy_full_builds_total) why no fast
   * path could: every fallback is visible (docs/operations.md §8).
   */
  private async fullBuild(cause: FullBuildCause = { reason: 'full_build_requested' }): Promise<void> {
    this.fastPathFailed = false;
    this.opts.metrics.fullBuilds.inc({ reason: cause.reason });
    this.log.info({ reason: cause.reason, object: cause.object }, 'full build');
    const statuses = this.buildOnce();
    if (statuses) await this.publishStatusesNextTurn(() => this.statuses.publishAll(statuses));
  }

  /**
   * Statuses are merged and handed to the sinks one event-loop turn after the snapshot: the new
   * snapshot's pushes start first, and no single turn holds the whole build.
   */
  private async publishStatusesNextTurn(publish: () => void): Promise<void> {
    await new Promise((r) => setImmediate(r));
    try {
      publish();
    } catch (err) {
      this.log.error({ err }, 'status publishing failed');
    }
  }

  /** Builds and publishes the fleets; returns the statuses to publish, or undefined on failure. */
  private buildOnce(): ObjectStatus[] | undefined {
    const { store, cache, metrics } = this.opts;
    const revision = store.revision;
    const started = process.hrtime.bigint();
    try {
      this.state = undefined;
      const result = buildGateways(store, this.buildOptions(), this.memo);
      this.state = result.state;
      const liveFleets = new Set<string>();
      const previous = this.lastFleets;
      const endpoints = this.opts.endpoints ?? {};
      const { fleets } = this.hold.decide(result.state.gateways, result.fleets, previous, (clusters) =>
        refreshClusterEndpoints(store, clusters, endpoints),
      );
      this.lastFleets = new Map();
      for (const built of fleets) {
        // Unchanged nodes keep their identity, so translation and encoding skip them (model/reuse.ts).
        const fleet = reuseUnchanged(previous.get(built.fleet), built);
        liveFleets.add(fleet.fleet);
        this.lastFleets.set(fleet.fleet, fleet);
        this.publishFleet(fleet);
      }
      for (const fleet of cache.fleets()) if (!liveFleets.has(fleet)) cache.removeFleet(fleet);
      this.references = this.referenceIndex();
      this.firstBuildDone = true;
      this.lastBuildFailed = false;
      metrics.builds.inc({ result: 'ok' });
      return result.statuses;
    } catch (err) {
      this.lastBuildFailed = true;
      metrics.builds.inc({ result: 'error' });
      this.log.error({ err }, 'build failed; last good configuration stays in service');
      return undefined;
    } finally {
      this.log.debug({ seconds: this.observeBuild(started), revision }, 'build finished');
    }
  }

  /**
   * Endpoint fast path: only EndpointSlices of referenced Services changed; the affected
   * clusters' endpoints are recomputed (fleet-refresh.ts) and the fleets re-translated.
   */
  private refreshEndpoints(services: Set<string>): void {
    const started = process.hrtime.bigint();
    try {
      const { store, endpoints } = this.opts;
      for (const next of fleetsWithEndpoints(this.lastFleets.values(), services, store, endpoints ?? {})) {
        this.lastFleets.set(next.fleet, next);
        this.publishFleet(next);
      }
      this.opts.metrics.builds.inc({ result: 'endpoints' });
    } catch (err) {
      this.opts.metrics.builds.inc({ result: 'error' });
      this.log.error({ err }, 'endpoint refresh failed; last good configuration stays in service');
    } finally {
      this.observeBuild(started);
    }
  }

  /** Records a build's (or fast path's) duration since `started`; returns it in seconds. */
  private observeBuild(started: bigint): number {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.opts.metrics.buildDuration.observe(seconds);
    return seconds;
  }

  private buildOptions(): BuildOptions {
    return {
      controllerName: this.opts.controllerName,
      externalNameServices: this.opts.externalNameServices,
      endpoints: this.opts.endpoints,
      gatewayAddresses: this.opts.gatewayAddresses,
      managedFleets: this.opts.managedFleets,
      ...(this.opts.maxPortRangePorts !== undefined
        ? { maxPortRangePorts: this.opts.maxPortRangePorts }
        : {}),
      ...(this.opts.xListenerSets ? { xListenerSets: true } : {}),
      ...(this.opts.dynamicPorts ? { dynamicPorts: this.opts.dynamicPorts } : {}),
      now: this.nowText(),
    };
  }

  /** The clock as conditions' lastTransitionTime spells it (seconds). */
  private nowText(): string {
    const now = (this.opts.now ?? (() => new Date()))();
    return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  /**
   * A fleet's rejections changed (RejectionFeed, debounced): the last build's statuses are laid
   * over with the new rejections and published again, if that changes any of them.
   */
  private onRejections(view: FleetRejections): void {
    this.rejections.set(view);
    this.republishOverlays();
  }

  /** Publishes the last build's statuses with the overlays as they are now, if that changes any. */
  private republishOverlays(): void {
    try {
      this.statuses.republish();
    } catch (err) {
      this.log.error({ err }, 'status publishing failed');
    }
  }

  /**
   * The state-based fast paths over one window (fast-paths.ts applyWindow): route edits, removals
   * and replacements, creations, in turn. When it declines, windowFallback says why.
   */
  private async refreshWindow(work: PendingWork): Promise<boolean> {
    const declined = windowDecline(work);
    const result = windowResult(this.opts.store, work);
    const attempt = (state: BuildState) => applyWindow(this.fastPathInputs(), state, work, declined);
    if (await this.runFastPath(result, `${result} window`, attempt)) return true;
    this.windowFallback = this.fallback(declined.reason, declined.changed);
    return false;
  }

  /** Why the last refreshWindow declined (its declining step's reason, or its first kind's). */
  private windowFallback: FullBuildCause = { reason: 'full_build_requested' };

  /** What every fast path reads: the store, the build options, the memo and the last fleets. */
  private fastPathInputs(): FastPathInputs {
    return { store: this.opts.store, options: this.buildOptions(), memo: this.memo, fleets: this.lastFleets };
  }

  /**
   * Runs one route or ListenerSet fast path: `attempt` works from the last build's state and
   * returns undefined when a full build is needed; its fleets are published, the reference index
   * learns what the objects refer to (so their later changes are not missed), and the statuses it
   * changed go to the status publisher one turn later. Returns false (nothing published) when the
   * attempt declined, touched a held or unpublished fleet (fleet-hold.ts: a full build decides
   * those), or threw.
   */
  private async runFastPath(
    result: string,
    what: string,
    attempt: (state: BuildState) => FastPathOutcome | undefined,
  ): Promise<boolean> {
    if (this.lastBuildFailed || !this.state) return false;
    const started = process.hrtime.bigint();
    let changed: ObjectStatus[];
    let removed: string[];
    try {
      const outcome = attempt(this.state);
      if (!outcome || outcome.touched.some((f) => !this.lastFleets.has(f) || this.hold.isHeld(f)))
        return false;
      this.state = outcome.state;
      for (const fleet of outcome.fleets) {
        this.lastFleets.set(fleet.fleet, fleet);
        this.publishFleet(fleet);
      }
      if (this.references) outcome.learn(this.references);
      this.memo.lastGoodCertificates.forget(outcome.listeners ?? []);
      changed = outcome.changed;
      removed = outcome.removed ?? [];
      this.opts.metrics.builds.inc({ result });
      this.observeBuild(started);
    } catch (err) {
      this.log.warn({ err }, `${what} fast path failed; falling back to a full build`);
      this.fastPathFailed = true;
      return false;
    }
    await this.publishStatusesNextTurn(() => this.statuses.publishChanges(changed, removed));
    return true;
  }

  /**
   * Certificate fast path: only the content of Secrets that listeners refer to changed, and each
   * was and is a valid key pair (fleet-refresh.ts replacedSecrets says why that changes nothing but
   * their SecretModels). Those are swapped into the fleets, remembered as the last good versions,
   * and the fleets re-translated; statuses are left as they are but for the validity overlay.
   * Returns false (nothing published) when a full build is needed instead.
   */
  private refreshSecrets(changed: Map<string, KubeObject>): boolean {
    if (this.lastBuildFailed) return false;
    const started = process.hrtime.bigint();
    try {
      const replaced = replacedSecrets(changed.values(), this.opts.store, this.memo);
      if (!replaced) return false;
      const updates = fleetsWithSecrets(this.lastFleets.values(), replaced);
      for (const secret of replaced.values()) this.memo.lastGoodCertificates.refresh(secret);
      for (const next of updates) {
        this.lastFleets.set(next.fleet, next);
        this.publishFleet(next);
      }
      this.opts.metrics.builds.inc({ result: 'secrets' });
      this.observeBuild(started);
      // The new certificates' validity periods may differ: the warnings are laid over again.
      this.republishOverlays();
      return true;
    } catch (err) {
      this.log.warn({ err }, 'certificate fast path failed; falling back to a full build');
      this.fastPathFailed = true;
      return false;
    }
  }

  /** Hands the current fleet models to onFleets; a failing callback is logged, never fatal. */
  private notifyFleets(): void {
    if (!this.opts.onFleets || !this.firstBuildDone) return;
    try {
      this.opts.onFleets([...this.lastFleets.values()], this.hold.untouched());
    } catch (err) {
      this.log.error({ err }, 'fleet provisioning hook failed');
    }
  }

  private publishFleet(fleet: FleetModel): void {
    try {
      const resources = translateFleet(fleet, this.opts.translate);
      const outcome = this.opts.cache.setFleet(fleet.fleet, resources);
      if (!outcome.ok) {
        this.log.error(
          { fleet: fleet.fleet, errors: outcome.errors },
          'snapshot refused; previous stays in service',
        );
      }
    } catch (err) {
      // One fleet's translation bug must not take the others down; its last snapshot stays.
      this.log.error({ fleet: fleet.fleet, err }, 'translation failed; previous snapshot stays in service');
    }
  }

  private referenceIndex(): ReferenceIndex | undefined {
    try {
      const svc = this.opts.gatewayAddresses?.service;
      return ReferenceIndex.fromStore(this.opts.store, svc ? envoyServiceKeys(svc, this.opts.store) : []);
    } catch (err) {
      // Without an index every change rebuilds, which is slower but always correct.
      this.log.warn({ err }, 'reference index failed; every change will trigger a full build');
      return undefined;
    }
  }
}
