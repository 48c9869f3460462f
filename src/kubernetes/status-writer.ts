import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import type { ObjectStore } from '../store/store';
import type { KubeObject } from '../store/objects';
import { objectKey, objectNamespace } from '../store/objects';
import { Backoff, sleep } from './backoff';
import { KubeClient, retryAfterMsOf, statusCodeOf } from './client';
import { objectPath, resourceForKind } from './resources';
import { canonicalJson, mergeStatus, statusesEqual } from '../status/merge';
import type { ObjectStatus, StatusSink } from '../status/types';
import { WriteWindow } from './write-window';
import { statusWindowMetrics } from './metrics';
import type { StatusWindowMetrics } from './metrics';

/** Holds the options of the status writer. */
export interface KubernetesStatusWriterOptions {
  client?: KubeClient;
  kubeconfig?: string;
  /** GatewayClass controllerName Convoy owns; route parents carrying it are ours. */
  controllerName: string;
  logger: Logger;
  metrics?: ConvoyMetrics;
  /**
   * The store the Kubernetes provider fills. When given, a status already present on the
   * observed object is not written again (a new leader then writes only what differs).
   */
  store?: ObjectStore;
  /**
   * Writes in flight at most (default 32). The API server's priority and fairness decides how fast
   * they go; a 429 pauses every writer for the time it asks (docs/gateway-api.md §16). Within
   * that, the watch lag of the writes' echoes decides how many are in flight (write-window.ts).
   */
  concurrency?: number;
  /** Echo lag (ms) above which the write window shrinks (WriteWindow targetLagMs; default 100). */
  targetEchoLagMs?: number;
  /** An optional client-side limit: sustained write rate (requests per second) and burst. Off by default. */
  qps?: number;
  burst?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Attempts per write when the object keeps changing under us (409 Conflict). */
  conflictRetries?: number;
  /**
   * Returns true while Convoy pushes configuration to Envoys (xDS bytes waiting to go out). No
   * new write starts meanwhile, except one every `busyWriteEveryMs`, so that status never stops;
   * writes in flight finish (docs/gateway-api.md §16, "Pushes first").
   */
  pushing?: () => boolean;
  /** While `pushing`, one write may start this often (ms; default 1,000). */
  busyWriteEveryMs?: number;
}

/** How often workers held back by a push look again whether it is over (ms). */
const PUSH_RECHECK_MS = 25;

const ROUTE_KINDS = new Set(['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute']);

/**
 * The status list each kind shares with other controllers, entry by entry (controllerName):
 * routes' `parents`, policies' `ancestors` (docs/gateway-api.md §24).
 */
const SHARED_LIST: Record<string, 'parents' | 'ancestors'> = {
  HTTPRoute: 'parents',
  GRPCRoute: 'parents',
  TLSRoute: 'parents',
  BackendTLSPolicy: 'ancestors',
};

/** The field manager of Convoy's status writes (visible in metadata.managedFields). */
export const STATUS_FIELD_MANAGER = 'convoy';

type WriteResult = 'written' | 'unchanged' | 'gone';

/**
 * Writes the statuses of Convoy's objects to the API server's status subresource
 * (docs/gateway-api.md §16).
 *
 * publish() never blocks the build: it records the latest status per object and a few workers
 * write them, never two writes of one object at once, and only while this replica is the leader.
 * There is no fixed client-side rate: the API server's priority and fairness answers 429 when it
 * wants us slower, and every worker then waits the time it names.
 *
 * A write is merge → PUT with the object's resourceVersion (optimistic concurrency). The object
 * comes from the provider's store when it has one, so a write is one request; otherwise, and after
 * a 409 Conflict, it is read first (GET) and merged again. For routes only the status.parents entries whose controllerName
 * is ours are replaced; other controllers' entries are kept. Conditions keep their stored
 * lastTransitionTime when their status did not change, and nothing is written when the merged
 * status equals the stored one apart from lastTransitionTime. A 404 means the object is gone:
 * nothing is written.
 */
export class KubernetesStatusWriter implements StatusSink {
  readonly client: KubeClient;
  private readonly ownsClient: boolean;
  private readonly log: Logger;
  private readonly backoff: Backoff;
  /** The latest status published for each object Convoy owns. */
  private readonly latest = new Map<string, ObjectStatus>();
  /** Objects whose latest status still has to be written (in publish order). */
  private readonly pending = new Map<string, ObjectStatus>();
  /**
   * Per object, the status last applied (written, or found already there): the fingerprint of
   * what we wanted and of what the API server stored (which may differ by pruned fields).
   */
  private readonly applied = new Map<string, { desired: string; stored: string }>();
  /** Final writes that remove our parents from routes Convoy no longer manages. */
  private readonly cleanups = new WeakSet<ObjectStatus>();
  /** Objects being written now: a second write of the same object waits for the first. */
  private readonly inFlight = new Set<string>();
  private leader = false;
  private stopped = false;
  private readonly wakers: (() => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private readonly workers: Promise<void>;
  private readonly stopSignal = new AbortController();
  private tokens: number;
  private lastRefill = Date.now();
  /** Until when (epoch ms) every worker waits, after the API server answered 429. */
  private pausedUntil = 0;
  /** How many writes may be in flight, from the watch lag of their echoes (write-window.ts). */
  private readonly window: WriteWindow;
  /** Per object, the write whose echo the watch has not delivered yet. */
  private readonly awaitingEcho = new Map<
    string,
    { resourceVersion: string; answeredAt: number; generation: number }
  >();
  /** Echoes the watch delivered before their write's answer was read, by object. */
  private readonly earlyEchoes = new Map<string, string>();
  private readonly windowMetrics?: StatusWindowMetrics;
  /** When the last write started (epoch ms): while Convoy pushes, one may start per busyWriteEveryMs. */
  private lastStartAt = 0;
  /** The one timer that wakes the workers held back by a push. */
  private pushTimer?: NodeJS.Timeout;

  constructor(private readonly o: KubernetesStatusWriterOptions) {
    this.ownsClient = !o.client;
    this.client = o.client ?? KubeClient.fromKubeconfig(o.kubeconfig);
    this.log = o.logger.child({ component: 'status-writer' });
    this.backoff = new Backoff(o.backoffBaseMs ?? 500, o.backoffMaxMs ?? 10_000);
    this.tokens = o.burst ?? 20;
    const concurrency = Math.max(1, o.concurrency ?? 32);
    this.window = new WriteWindow({ max: concurrency, targetLagMs: o.targetEchoLagMs });
    this.windowMetrics = o.metrics ? statusWindowMetrics(o.metrics) : undefined;
    this.windowMetrics?.window.set(this.window.limit);
    this.workers = Promise.all(Array.from({ length: concurrency }, () => this.work())).then(() => undefined);
  }

  /**
   * Records a build's full set of statuses and queues those not yet stored.
   *
   * An object missing from the set is no longer Convoy's: a route gets one final write that removes
   * our parents; anything else is forgotten.
   */
  publish(statuses: ObjectStatus[]): void {
    const seen = new Set<string>();
    for (const s of statuses) {
      const key = this.record(s);
      if (key !== undefined) seen.add(key);
    }
    for (const [key, previous] of [...this.latest]) if (!seen.has(key)) this.forget(key, previous);
    this.notify();
  }

  /**
   * Records a fast path's changes (StatusSink.publishChanges): the changed statuses are queued as
   * in `publish`, and each removed object is treated as one missing from a full set.
   */
  publishChanges(changed: ObjectStatus[], removed: string[]): void {
    for (const s of changed) this.record(s);
    for (const key of removed) {
      const previous = this.latest.get(key);
      if (previous) this.forget(key, previous);
    }
    this.notify();
  }

  /** Records the latest status of an object and queues it unless stored already; returns its key. */
  private record(s: ObjectStatus): string | undefined {
    if (!resourceForKind(s.kind)) return undefined;
    const key = keyOfStatus(s);
    this.latest.set(key, s);
    if (this.applied.get(key)?.desired === fingerprint(s) && this.observedAgrees(key, s))
      this.pending.delete(key);
    else this.pending.set(key, s);
    return key;
  }

  /**
   * Lets go of an object that is no longer Convoy's. A route keeps other controllers' parents, so
   * ours are removed once (a final write with no parents of ours); anything else is simply forgotten.
   */
  private forget(key: string, previous: ObjectStatus): void {
    if (this.cleanups.has(previous)) return;
    this.applied.delete(key);
    const shared = SHARED_LIST[previous.kind];
    if (shared) {
      const cleanup: ObjectStatus = { ...previous, status: { [shared]: [] } };
      this.cleanups.add(cleanup);
      this.latest.set(key, cleanup);
      this.pending.set(key, cleanup);
    } else {
      this.latest.delete(key);
      this.pending.delete(key);
    }
  }

  /**
   * Turns writing on (leader) or off.
   *
   * Only the leader writes. Gaining leadership re-checks every known status.
   */
  setLeader(leader: boolean): void {
    if (leader === this.leader) return;
    this.leader = leader;
    this.log.info({ leader }, leader ? 'writing status as leader' : 'not leader; status writes paused');
    if (leader) {
      // Another replica may have written since we last did; trust only the API server now.
      this.applied.clear();
      for (const [key, s] of this.latest) if (!this.pending.has(key)) this.pending.set(key, s);
      this.backoff.reset();
    }
    this.notify();
  }

  /** Returns whether this writer currently writes (this replica leads). */
  get isLeader(): boolean {
    return this.leader;
  }

  /** Returns the number of objects whose status still has to be written. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Resolves when nothing is pending or being written (tests, graceful shutdown). */
  idle(): Promise<void> {
    if (this.pending.size === 0 && this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops the worker after its current write and closes a client it created. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopSignal.abort();
    if (this.pushTimer) clearTimeout(this.pushTimer);
    this.notify();
    await this.workers;
    if (this.ownsClient) this.client.close();
  }

  /**
   * Returns whether a new write waits for Convoy's push to Envoys to go out first; then arms one
   * timer that wakes the workers to look again. Status still moves: one write per
   * busyWriteEveryMs goes while pushes last (docs/gateway-api.md §16, "Pushes first").
   */
  private heldBackByPush(): boolean {
    if (!this.o.pushing?.()) return false;
    if (Date.now() - this.lastStartAt >= (this.o.busyWriteEveryMs ?? 1000)) return false;
    this.pushTimer ??= setTimeout(() => {
      this.pushTimer = undefined;
      this.notify();
    }, PUSH_RECHECK_MS);
    return true;
  }

  /** Wakes every worker that waits for work. */
  private notify(): void {
    for (const w of this.wakers.splice(0)) w();
  }

  /** Takes the oldest pending status whose object is not being written now, or undefined. */
  private takeNext(): [string, ObjectStatus] | undefined {
    for (const [key, status] of this.pending) {
      if (this.inFlight.has(key)) continue;
      this.pending.delete(key);
      this.inFlight.add(key);
      return [key, status];
    }
    return undefined;
  }

  /**
   * Returns the provider's copy of the object when it carries a resourceVersion, else undefined.
   * Its spec and metadata may be trimmed: a PUT to the status subresource takes only the status
   * (and the resourceVersion as a precondition) from the body.
   */
  private observedWithVersion(s: ObjectStatus): KubeObject | undefined {
    const observed = this.o.store?.get(s.kind, objectNamespace(s), s.metadata.name);
    return observed?.metadata.resourceVersion ? observed : undefined;
  }

  /** Returns whether the object as last observed by the provider (if any) already has this status. */
  private observedAgrees(key: string, s: ObjectStatus): boolean {
    const observed = this.o.store?.get(s.kind, objectNamespace(s), s.metadata.name);
    if (!observed) return true;
    const current = (observed.status ?? {}) as Record<string, unknown>;
    return this.alreadyStored(key, s, current);
  }

  /**
   * Returns whether `current` already is what writing `s` would store: equal once composed, or what
   * the API server stored the last time we wrote this same status.
   */
  private alreadyStored(key: string, s: ObjectStatus, current: Record<string, unknown>): boolean {
    if (sameStatus(current, this.compose(s.kind, current, s.status))) return true;
    const applied = this.applied.get(key);
    return (
      applied !== undefined &&
      applied.desired === fingerprint(s) &&
      applied.stored === statusFingerprint(current)
    );
  }

  /** One worker: writes pending statuses while leader, with backoff on errors, until stopped. */
  private async work(): Promise<void> {
    while (!this.stopped) {
      const held = this.leader && this.pending.size > 0 && this.heldBackByPush();
      const next =
        this.leader && !held && this.inFlight.size < this.window.limit ? this.takeNext() : undefined;
      if (!next) {
        if (this.pending.size === 0 && this.inFlight.size === 0)
          for (const w of this.idleWaiters.splice(0)) w();
        await new Promise<void>((resolve) => this.wakers.push(resolve));
        continue;
      }
      const [key, status] = next;
      this.lastStartAt = Date.now();
      const generation = this.window.generation;
      try {
        await this.takeToken();
        if (!this.leader || this.stopped) {
          this.requeue(key, status);
          continue;
        }
        const { result, stored, resourceVersion } = await this.write(key, status);
        this.o.metrics?.statusWrites.inc({ result });
        if (result === 'written' && resourceVersion) this.awaitEcho(key, resourceVersion, generation);
        if (this.latest.get(key) === status && this.cleanups.has(status)) {
          this.latest.delete(key);
        } else if (this.latest.get(key) === status && stored) {
          this.applied.set(key, { desired: fingerprint(status), stored: statusFingerprint(stored) });
        }
        this.backoff.reset();
        if (result === 'written') this.log.debug({ object: key }, 'status written');
      } catch (err) {
        if (this.stopped) break; // the request was aborted by stop()
        this.o.metrics?.statusWrites.inc({ result: 'error' });
        const code = statusCodeOf(err);
        if (code === 422 || code === 400) {
          // The API server refuses this status (schema validation); retrying cannot help.
          this.log.error({ object: key, err: (err as Error).message }, 'status rejected by the API server');
        } else if (code === 429) {
          // Priority and fairness asks every client of this flow to slow down: all workers pause.
          this.requeue(key, status);
          const delay = retryAfterMsOf(err) ?? this.backoff.next();
          this.pausedUntil = Math.max(this.pausedUntil, Date.now() + delay);
          this.log.debug({ object: key, retryInMs: delay }, 'status writes throttled by the API server');
        } else {
          this.requeue(key, status);
          const delay = this.backoff.next();
          this.log.warn(
            { object: key, err: (err as Error).message, retryInMs: delay },
            'status write failed',
          );
          await sleep(delay, this.stopSignal.signal);
        }
      } finally {
        this.inFlight.delete(key);
        this.earlyEchoes.delete(key);
        // A slot of the window is free, and a newer status of this object may have arrived
        // while it was being written.
        if (this.pending.size > 0) this.notify();
      }
    }
  }

  /**
   * Takes a watch event of an object (its kind, namespace, name and resourceVersion), as the
   * provider's informer receives it. When it is the echo of a status write, its delay since the
   * write's answer is the watch lag of that kind, and the write window follows it
   * (write-window.ts). Cheap: one map lookup per event.
   */
  observeEcho(kind: string, namespace: string, name: string, resourceVersion: string): void {
    const key = objectKey(kind, namespace, name);
    const awaited = this.awaitingEcho.get(key);
    if (!awaited) {
      // The answer of a write in flight may be read after its echo.
      if (this.inFlight.has(key)) this.earlyEchoes.set(key, resourceVersion);
      return;
    }
    if (awaited.resourceVersion !== resourceVersion) return;
    this.awaitingEcho.delete(key);
    this.sampleLag(Date.now() - awaited.answeredAt, awaited.generation);
  }

  /** Returns how many status writes may be in flight now (the write window). */
  get writeWindow(): number {
    return this.window.limit;
  }

  /** Remembers a write's answer until its echo arrives (or counts it now when it came first). */
  private awaitEcho(key: string, resourceVersion: string, generation: number): void {
    if (this.earlyEchoes.get(key) === resourceVersion) {
      this.earlyEchoes.delete(key);
      this.sampleLag(0, generation);
      return;
    }
    this.awaitingEcho.set(key, { resourceVersion, answeredAt: Date.now(), generation });
  }

  /** Feeds one echo lag to the window and the metrics; wakes workers when the window grew. */
  private sampleLag(lagMs: number, generation: number): void {
    const before = this.window.limit;
    this.window.observe(lagMs, generation);
    this.windowMetrics?.echoLag.observe(Math.max(0, lagMs) / 1000);
    if (this.window.limit !== before) {
      this.windowMetrics?.window.set(this.window.limit);
      if (this.window.limit > before) this.notify();
    }
  }

  /** Puts a status back in the queue unless a newer one for its object arrived meanwhile. */
  private requeue(key: string, status: ObjectStatus): void {
    if (!this.pending.has(key) && this.latest.get(key) === status) this.pending.set(key, status);
  }

  /**
   * Waits until a write may go: after any 429 pause, and for a token when a client-side limit is
   * set (qps tokens per second, at most burst saved up).
   */
  private async takeToken(): Promise<void> {
    while (!this.stopped && Date.now() < this.pausedUntil)
      await sleep(this.pausedUntil - Date.now(), this.stopSignal.signal);
    const qps = this.o.qps;
    if (qps === undefined) return;
    const burst = this.o.burst ?? 20;
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(burst, this.tokens + ((now - this.lastRefill) / 1000) * qps);
      this.lastRefill = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await sleep(Math.ceil(((1 - this.tokens) / qps) * 1000), this.stopSignal.signal);
      if (this.stopped) return;
    }
  }

  /** Writes one status: GET, compose, PUT with the resourceVersion, re-read on 409 Conflict. */
  private async write(
    key: string,
    s: ObjectStatus,
  ): Promise<{ result: WriteResult; stored?: Record<string, unknown>; resourceVersion?: string }> {
    const resource = resourceForKind(s.kind);
    if (!resource) return { result: 'gone' };
    const path = objectPath(resource, s.metadata.namespace, s.metadata.name);
    const attempts = this.o.conflictRetries ?? 5;
    for (let attempt = 1; ; attempt++) {
      // The first try trusts the provider's copy (its resourceVersion makes a stale copy a 409);
      // a conflict reads the object from the API server.
      let current = attempt === 1 ? this.observedWithVersion(s) : undefined;
      try {
        current ??= await this.client.request<KubeObject>('GET', path, { signal: this.stopSignal.signal });
      } catch (err) {
        if (statusCodeOf(err) === 404) return { result: 'gone' };
        throw err;
      }
      const currentStatus = (current.status ?? {}) as Record<string, unknown>;
      if (this.alreadyStored(key, s, currentStatus)) return { result: 'unchanged', stored: currentStatus };
      const next = this.compose(s.kind, currentStatus, s.status);
      if (!this.leader) throw new Error('lost leadership before writing');
      try {
        const updated = await this.client.request<KubeObject>('PUT', `${path}/status`, {
          query: { fieldManager: STATUS_FIELD_MANAGER },
          body: statusUpdateBody(current, next),
          signal: this.stopSignal.signal,
        });
        return {
          result: 'written',
          stored: (updated.status ?? {}) as Record<string, unknown>,
          resourceVersion: updated.metadata?.resourceVersion,
        };
      } catch (err) {
        const code = statusCodeOf(err);
        if (code === 404) return { result: 'gone' };
        if (code === 409 && attempt < attempts) {
          this.o.metrics?.statusWrites.inc({ result: 'conflict' });
          continue;
        }
        throw err;
      }
    }
  }

  /**
   * Returns the status to store: ours, with other controllers' route parents kept, and
   * lastTransitionTime carried over from the stored status for unchanged conditions.
   */
  compose(
    kind: string,
    current: Record<string, unknown>,
    desired: Record<string, unknown>,
  ): Record<string, unknown> {
    let next = withSchemaDefaults(desired);
    const shared = SHARED_LIST[kind];
    if (shared) {
      const ours = (p: unknown) => isRecord(p) && p.controllerName === this.o.controllerName;
      const stored = current[shared];
      const wanted = next[shared];
      const others = Array.isArray(stored) ? stored.filter((p) => !ours(p)) : [];
      const mine = Array.isArray(wanted) ? wanted.filter(ours) : [];
      // A route that never had a parents list (and gets none of ours) is left without one; a
      // policy's ancestors list is required by its CRD, so it is always written.
      if (others.length || mine.length || Array.isArray(stored) || shared === 'ancestors')
        next[shared] = [...others, ...mine];
      else delete next[shared];
    }
    next = mergeStatus(
      { apiVersion: '', kind: '', metadata: { name: '' }, status: current },
      { apiVersion: '', kind: '', metadata: { name: '' }, status: next },
    ).status;
    return next;
  }
}

/**
 * Returns the body of a PUT to an object's status subresource: its identity, the resourceVersion
 * it was read at (the precondition that makes a concurrent change a 409) and the new status.
 *
 * The API server takes only status from a status PUT and keeps spec and metadata as stored, so
 * sending them costs bytes and serialisation on both sides and changes nothing
 * (docs/gateway-api.md §16).
 */
export function statusUpdateBody(current: KubeObject, status: Record<string, unknown>): KubeObject {
  const { name, namespace, resourceVersion } = current.metadata;
  const metadata: KubeObject['metadata'] = { name, resourceVersion };
  if (namespace !== undefined) metadata.namespace = namespace;
  return { apiVersion: current.apiVersion, kind: current.kind, metadata, status };
}

/** Returns whether `kind` is a route kind (its status is shared with other controllers by parent). */
export function isRouteKind(kind: string): boolean {
  return ROUTE_KINDS.has(kind);
}

/** Returns whether `v` is a plain object (not null, not an array). */
function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Returns the store key of the object a status belongs to. */
function keyOfStatus(s: ObjectStatus): string {
  return objectKey(s.kind, objectNamespace(s), s.metadata.name);
}

/** Wraps a status subresource as an ObjectStatus without identity, for the merge helpers. */
function asStatus(status: Record<string, unknown>): ObjectStatus {
  return { apiVersion: '', kind: '', metadata: { name: '' }, status };
}

/** Returns whether two status subresources are equal apart from lastTransitionTime. */
function sameStatus(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return statusesEqual(asStatus(a), asStatus(b));
}

/**
 * Returns the status with the defaults the Gateway API CRD schemas apply inside status filled in
 * (v1.6.1: parentRef group and kind, address type, supportedKinds group).
 *
 * What we compare is then what gets stored.
 */
export function withSchemaDefaults(status: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...status };
  if (Array.isArray(status.parents)) {
    out.parents = status.parents.map((p) => {
      if (!isRecord(p) || !isRecord(p.parentRef)) return p;
      return { ...p, parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', ...p.parentRef } };
    });
  }
  if (Array.isArray(status.addresses)) {
    out.addresses = status.addresses.map((a) => (isRecord(a) ? { type: 'IPAddress', ...a } : a));
  }
  if (Array.isArray(status.listeners)) {
    out.listeners = status.listeners.map((l) => {
      if (!isRecord(l) || !Array.isArray(l.supportedKinds)) return l;
      return {
        ...l,
        supportedKinds: l.supportedKinds.map((k) =>
          isRecord(k) ? { group: 'gateway.networking.k8s.io', ...k } : k,
        ),
      };
    });
  }
  return out;
}

/** Returns a canonical string of a status subresource without lastTransitionTimes. */
function statusFingerprint(status: Record<string, unknown>): string {
  return canonicalJson(stripTimes(status));
}

/** Returns a canonical string of an object's identity and status without lastTransitionTimes. */
function fingerprint(s: ObjectStatus): string {
  return canonicalJson([s.kind, s.metadata.namespace ?? '', s.metadata.name, stripTimes(s.status)]);
}

/** Returns a deep copy of `v` without any `lastTransitionTime` key. */
function stripTimes(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripTimes);
  if (isRecord(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v)) if (k !== 'lastTransitionTime') out[k] = stripTimes(val);
    return out;
  }
  return v;
}
