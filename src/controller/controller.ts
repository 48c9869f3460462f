import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import type { ObjectStore } from '../store/store';
import { Debouncer } from '../store/debounce';
import { objectNamespace, type KubeObject } from '../store/objects';
import type { ObjectStatus, StatusSink } from '../status/types';
import { buildGateways } from '../gateway/build';
import { BuildMemo } from '../gateway/build-memo';
import type { LastGoodCertificates } from '../gateway/last-good-certificates';
import { ValidityOverlay } from './validity-overlay';
import { FleetHold, heldAddresses } from './fleet-hold';
import { emptyWork, fallbackCause, firstKey, hasWork, requireFullBuild } from './pending-work';
import type { FullBuildCause, FullBuildReason, PendingWork } from './pending-work';
import { RejectionOverlay } from './rejection-overlay';
import { StatusPublisher } from './status-publisher';
import { addListenerSet } from '../gateway/incremental/listenerset';
import { updateRoutes, type RouteEdit } from '../gateway/incremental/routes';
import { addRoutes } from '../gateway/incremental/route-added';
import type { BuildState } from '../gateway/incremental/state';
import { translateFleet, type TranslateOptions } from '../envoy/translate';
import type { XdsCache } from '../xds/cache';
import type { FleetModel, SecretModel } from '../model/fleet';
import type { BuildOptions } from '../gateway/resolved';
import { reuseUnchanged } from '../model/reuse';
import { refreshClusterEndpoints } from '../gateway/backends';
import { secretToModel } from '../gateway/certificates';
import { refusedSliceEndpoints, type EndpointPolicy } from '../gateway/endpoint-guard';
import { ReferenceIndex, classifyChange, endpointSliceService, envoyServiceKeys } from './relevance';
import { clusterService } from '../model/names';
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
        if (impact === 'none') return;
        if (impact === 'full') requireFullBuild(this.pending, { reason: reason!, object: change.key });
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
            // A refused endpoint appears or goes: the routes using its Service change status.
            if (o && refusedSliceEndpoints(o, this.opts.endpoints ?? {}).length > 0)
              requireFullBuild(this.pending, { reason: 'refused_endpoint', object: change.key });
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
        } else if (work.added.size > 0) {
          // Only creations (and nothing else but unreferenced objects) may take the fast path.
          const only = work.secrets.size === 0 && work.routes.size === 0 && work.endpointServices.size === 0;
          const routesOnly = [...work.added.values()].every((o) => o.kind !== 'ListenerSet');
          if (!only) await this.fullBuild({ reason: 'mixed_changes', object: firstKey(work.added) });
          else if (routesOnly) {
            if (!(await this.refreshCreatedRoutes(work.added)))
              await this.fullBuild(this.fallback('route_created_fast_path_precondition', work.added));
          } else if (!(await this.refreshAdded(work.added)))
            await this.fullBuild(this.fallback('listenerset_fast_path_precondition', work.added));
        } else if (work.secrets.size > 0 && !this.refreshSecrets(work.secrets)) {
          // Some certificate became (or was) invalid: listener conditions and chains change.
          await this.fullBuild(this.fallback('certificate_validity_changed', work.secrets));
        } else if (work.routes.size > 0 && !(await this.refreshRoutes(work.routes))) {
          // A route edit that may change more than its own virtual hosts and status.
          await this.fullBuild(this.fallback('route_fast_path_precondition', work.routes));
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
   * Endpoint fast path: only EndpointSlices of referenced Services changed, so listeners,
   * routes and status cannot have changed. Recompute the affected clusters' endpoints and
   * re-translate; memoized translation returns the same objects for everything else, so only
   * the changed ClusterLoadAssignments get new bytes and versions.
   */
  private refreshEndpoints(services: Set<string>): void {
    const started = process.hrtime.bigint();
    try {
      for (const [name, model] of this.lastFleets) {
        const affected = model.clusters.filter((c) => services.has(clusterService(c.name) ?? ''));
        if (affected.length === 0) continue;
        const refreshed = new Map(
          refreshClusterEndpoints(this.opts.store, affected, this.opts.endpoints ?? {}).map((c) => [
            c.name,
            c,
          ]),
        );
        const clusters = model.clusters.map((c) => refreshed.get(c.name) ?? c);
        const next: FleetModel = { ...model, clusters };
        this.lastFleets.set(name, next);
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
   * Route fast path: existing HTTPRoutes/GRPCRoutes were edited and nothing else changed since
   * the last full build but certificate contents and endpoints (both kept current in lastFleets).
   * `updateRoutes` (gateway/incremental/routes.ts) checks that the edits cannot change attachment, listeners or
   * any other object's status, and recomputes the route configurations of the listeners those
   * routes are attached to in the last FleetModels (or rebuilds the affected fleets with the same
   * fleet assembly as a full build when it cannot show the clusters stay the same). The fleets' SecretModels are taken from lastFleets: a route edit does not change
   * which certificates a fleet serves, and the certificate fast path keeps their contents there
   * (the state's resolved listeners still hold the ones of the last full build). The edited
   * routes' statuses are published as changes (status-publisher.ts). Returns false (nothing published)
   * when a full build is needed instead.
   */
  private async refreshRoutes(changed: Map<string, KubeObject>): Promise<boolean> {
    if (this.lastBuildFailed || !this.state) return false;
    const started = process.hrtime.bigint();
    let statuses: ObjectStatus[];
    try {
      const edits: RouteEdit[] = [];
      for (const previous of changed.values()) {
        const current = this.opts.store.get(previous.kind, objectNamespace(previous), previous.metadata.name);
        if (!current) return false;
        edits.push({ previous, current });
      }
      const result = updateRoutes(this.opts.store, this.buildOptions(), this.memo, this.state, edits, (f) =>
        this.lastFleets.get(f),
      );
      const outside = (f: string) => !this.lastFleets.has(f) || this.hold.isHeld(f);
      if (!result || result.fleets.some((f) => outside(f.model.fleet))) return false;
      const fleets = result.fleets.map(({ model, patched }) => {
        // A patched model already shares every untouched node (and its secrets) with lastFleets.
        if (patched) return model;
        const previous = this.lastFleets.get(model.fleet)!;
        return reuseUnchanged(previous, { ...model, secrets: previous.secrets });
      });
      this.state = result.state;
      for (const fleet of fleets) {
        this.lastFleets.set(fleet.fleet, fleet);
        this.publishFleet(fleet);
      }
      // backendRefs may have changed: Services they name become relevant (see addRoute).
      for (const { current } of edits) this.references?.addRoute(current);
      statuses = result.changed;
      this.opts.metrics.builds.inc({ result: 'route' });
      this.observeBuild(started);
    } catch (err) {
      this.log.warn({ err }, 'route fast path failed; falling back to a full build');
      this.fastPathFailed = true;
      return false;
    }
    await this.publishStatusesNextTurn(() => this.statuses.publishChanges(statuses, []));
    return true;
  }

  /**
   * ListenerSet fast path: since the last full build, exactly one ListenerSet was created, maybe
   * with HTTPRoutes/GRPCRoutes that name only it (and Secrets no build referred to, which a build
   * reads from the store anyway). `addListenerSet` (gateway/incremental/listenerset.ts) checks that this can only
   * change the set's, its Gateway's and the new routes' statuses and add the set's own filter
   * chains, secrets and clusters to its Gateway's last FleetModel; otherwise it returns undefined
   * and this returns false (nothing published) for a full build. The reference index learns the
   * set's Secrets and the routes' Services, so their later changes are not missed.
   */
  private async refreshAdded(added: Map<string, KubeObject>): Promise<boolean> {
    if (this.lastBuildFailed || !this.state) return false;
    const started = process.hrtime.bigint();
    let statuses: ObjectStatus[];
    try {
      const current: KubeObject[] = [];
      for (const o of added.values()) {
        const now = this.opts.store.get(o.kind, objectNamespace(o), o.metadata.name);
        // Not there any more: a deletion, which pending.full already asks a full build for.
        if (!now) return false;
        current.push(now);
      }
      const sets = current.filter((o) => o.kind === 'ListenerSet');
      if (sets.length !== 1) return false;
      const routes = current.filter((o) => o.kind !== 'ListenerSet');
      const result = addListenerSet(
        this.opts.store,
        this.buildOptions(),
        this.memo,
        this.state,
        sets[0],
        routes,
        (f) => this.lastFleets.get(f),
      );
      // A held or unpublished fleet (fleet-hold.ts) is decided by a full build.
      const fleet = result?.fleet?.fleet;
      if (!result || (fleet && (!this.lastFleets.has(fleet) || this.hold.isHeld(fleet)))) return false;
      this.state = result.state;
      if (result.fleet) {
        this.lastFleets.set(result.fleet.fleet, result.fleet);
        this.publishFleet(result.fleet);
      }
      this.references?.addListenerOwner(sets[0]);
      for (const r of routes) this.references?.addRoute(r);
      statuses = result.changed;
      this.opts.metrics.builds.inc({ result: 'listenerset' });
      this.observeBuild(started);
    } catch (err) {
      this.log.warn({ err }, 'ListenerSet fast path failed; falling back to a full build');
      this.fastPathFailed = true;
      return false;
    }
    await this.publishStatusesNextTurn(() => this.statuses.publishChanges(statuses, []));
    return true;
  }

  /**
   * Route-creation fast path: since the last full build, only HTTPRoutes/GRPCRoutes were created
   * (and Secrets no build referred to). `addRoutes` (gateway/incremental/route-added.ts) attaches
   * them as a full build would and patches the route configurations, clusters and statuses they
   * change; otherwise it returns undefined and this returns false (nothing published) for a full
   * build. A held or unpublished fleet (fleet-hold.ts) is decided by a full build. The reference
   * index learns the routes' Services, so their later changes are not missed.
   */
  private async refreshCreatedRoutes(added: Map<string, KubeObject>): Promise<boolean> {
    if (this.lastBuildFailed || !this.state) return false;
    const started = process.hrtime.bigint();
    let statuses: ObjectStatus[];
    try {
      const routes: KubeObject[] = [];
      for (const o of added.values()) {
        const now = this.opts.store.get(o.kind, objectNamespace(o), o.metadata.name);
        // Not there any more: a deletion, which pending.full already asks a full build for.
        if (!now) return false;
        routes.push(now);
      }
      const result = addRoutes(this.opts.store, this.buildOptions(), this.memo, this.state, routes, (f) =>
        this.lastFleets.get(f),
      );
      if (!result || result.touched.some((f) => !this.lastFleets.has(f) || this.hold.isHeld(f))) return false;
      this.state = result.state;
      for (const fleet of result.fleets) {
        this.lastFleets.set(fleet.fleet, fleet);
        this.publishFleet(fleet);
      }
      for (const r of routes) this.references?.addRoute(r);
      statuses = result.changed;
      this.opts.metrics.builds.inc({ result: 'route_created' });
      this.observeBuild(started);
    } catch (err) {
      this.log.warn({ err }, 'route-creation fast path failed; falling back to a full build');
      this.fastPathFailed = true;
      return false;
    }
    await this.publishStatusesNextTurn(() => this.statuses.publishChanges(statuses, []));
    return true;
  }

  /**
   * Certificate fast path: only the content of Secrets that listeners refer to changed. A
   * Secret's only influence on a build is through `secretToModel` (certificates.ts): whether it is
   * a valid key pair (listener ResolvedRefs/Programmed, whether the listener's chains exist at all,
   * and whether a last good version is served instead) and, when valid, its SecretModel, which
   * also becomes its last good version. So when every changed Secret was valid at the last build
   * and is valid now, the listeners, routes and statuses of a full build are the same, and the
   * only difference in its FleetModels is the SecretModel of each changed Secret, which
   * `secretToModel` gives us exactly as the full build would. Those are swapped in (new objects
   * for the changed Secrets only; every other node keeps its identity), remembered as the last
   * good versions, and the fleets re-translated; statuses are left as they are. Returns false
   * (nothing published) when a full build is needed instead.
   */
  private refreshSecrets(changed: Map<string, KubeObject>): boolean {
    if (this.lastBuildFailed) return false;
    const started = process.hrtime.bigint();
    try {
      const replaced = new Map<string, SecretModel>();
      for (const before of changed.values()) {
        const namespace = objectNamespace(before);
        const current = this.opts.store.get('Secret', namespace, before.metadata.name);
        if (!current) return false;
        const was = secretToModel(before, namespace, this.memo.certificates);
        const now = secretToModel(current, namespace, this.memo.certificates);
        if (!was.ok || !now.ok || was.secret.name !== now.secret.name) return false;
        replaced.set(now.secret.name, now.secret);
      }
      const updates: FleetModel[] = [];
      for (const model of this.lastFleets.values()) {
        if (!model.secrets.some((s) => replaced.has(s.name))) continue;
        updates.push({ ...model, secrets: model.secrets.map((s) => replaced.get(s.name) ?? s) });
      }
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
