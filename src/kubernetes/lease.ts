import { hostname } from 'node:os';
import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import { sleep } from './backoff';
import { KubeClient, statusCodeOf } from './client';
import { leaderGauge } from './metrics';

/** Holds the options of leader election (defaults as client-go's). */
export interface LeaderElectionOptions {
  client?: KubeClient;
  kubeconfig?: string;
  logger: Logger;
  metrics?: ConvoyMetrics;
  /** Lease name; default convoy-leader. */
  name?: string;
  /** Lease namespace; default $POD_NAMESPACE, else convoy-system. */
  namespace?: string;
  /** Default: hostname_pid (the pod name in Kubernetes, plus the process id). */
  identity?: string;
  /** How long a Lease is honoured after its last renewal; default 15 s. */
  leaseDurationMs?: number;
  /** The leader gives up when it could not renew for this long; default 10 s. */
  renewDeadlineMs?: number;
  /** Interval between acquire/renew attempts; default 2 s. */
  retryPeriodMs?: number;
  onStartedLeading?: () => void;
  onStoppedLeading?: () => void;
  /** Called when another identity is seen holding the Lease. */
  onNewLeader?: (identity: string) => void;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

/** Returns a time as RFC 3339 with microseconds, the MicroTime format the Lease API expects. */
function microTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Elects a leader among Convoy replicas on a coordination.k8s.io/v1 Lease (docs/operations.md §10).
 *
 * The semantics are client-go's leaderelection package: every write carries the resourceVersion
 * read just before (optimistic concurrency); a Lease held by someone else counts as expired only
 * after leaseDuration has passed on OUR clock since we last saw its record change (clock skew
 * between replicas does not matter); the leader renews every retryPeriod and steps down when it
 * could not renew within renewDeadline, before anyone else may take over; a graceful stop releases
 * the Lease so a standby takes over at once.
 */
export class LeaderElector {
  readonly client: KubeClient;
  readonly identity: string;
  readonly name: string;
  readonly namespace: string;
  private readonly ownsClient: boolean;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly log: Logger;
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private leading = false;
  /** The record as we last saw it, and when (our clock) it last changed. */
  private observed?: { key: string; at: number; lease: Lease };
  private lastRenew = 0;
  private knownLeader = '';

  constructor(private readonly o: LeaderElectionOptions) {
    this.ownsClient = !o.client;
    this.client = o.client ?? KubeClient.fromKubeconfig(o.kubeconfig);
    this.identity = o.identity ?? `${hostname()}_${process.pid}`;
    this.name = o.name ?? 'convoy-leader';
    this.namespace = o.namespace ?? process.env.POD_NAMESPACE ?? 'convoy-system';
    this.leaseDurationMs = o.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = o.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = o.retryPeriodMs ?? 2_000;
    if (!(this.leaseDurationMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryPeriodMs)) {
      throw new Error('leader election needs leaseDuration > renewDeadline > retryPeriod');
    }
    this.log = o.logger.child({ component: 'leader-election', lease: `${this.namespace}/${this.name}` });
  }

  /** Returns whether this replica currently leads. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Returns the identity last seen holding the Lease ('' if none). */
  get leader(): string {
    return this.knownLeader;
  }

  /** Starts campaigning (once; later calls do nothing). */
  start(): void {
    if (this.loop) return;
    if (this.o.metrics) leaderGauge(this.o.metrics).set({ lease: `${this.namespace}/${this.name}` }, 0);
    this.loop = this.run();
  }

  /** Stops campaigning; a leader releases the Lease first (best effort, 2 s). */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    if (this.leading) {
      await this.release();
      this.setLeading(false);
    }
    if (this.ownsClient) this.client.close();
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.namespace)}/leases`;
  }

  /** Tries to acquire or renew every round and steps up or down by the outcome, until stopped. */
  private async run(): Promise<void> {
    const signal = this.abort.signal;
    this.log.info({ identity: this.identity }, 'campaigning for leadership');
    while (!signal.aborted) {
      const ok = await this.tryAcquireOrRenew().catch((err: unknown) => {
        this.log.warn({ err: (err as Error).message }, 'lease update failed');
        return false;
      });
      if (signal.aborted) break;
      if (ok) this.lastRenew = Date.now();
      if (this.leading && !ok && this.knownLeader && this.knownLeader !== this.identity) {
        this.log.warn({ leader: this.knownLeader }, 'another replica holds the lease; stepping down');
        this.setLeading(false);
      } else if (this.leading && !ok && Date.now() - this.lastRenew >= this.renewDeadlineMs) {
        this.log.warn(
          { renewDeadlineMs: this.renewDeadlineMs },
          'could not renew the lease in time; stepping down',
        );
        this.setLeading(false);
      } else if (!this.leading && ok) {
        this.setLeading(true);
      }
      await sleep(this.nextAttemptInMs(), signal);
    }
  }

  /**
   * Returns the delay before the next round: retryPeriod, or less for a standby whose observed
   * Lease expires sooner.
   *
   * A standby that watches someone else's Lease tries again right when it expires, so a crashed
   * leader is replaced leaseDuration after its last renewal was seen.
   */
  private nextAttemptInMs(): number {
    const lease = this.observed?.lease;
    const holder = lease?.spec.holderIdentity;
    if (this.leading || !lease || !holder || holder === this.identity) return this.retryPeriodMs;
    const expiresAt = this.observed!.at + (lease.spec.leaseDurationSeconds ?? 15) * 1000;
    return Math.max(10, Math.min(this.retryPeriodMs, expiresAt - Date.now() + 5));
  }

  /** Records a change of leadership: the leader gauge, a log line and the callback. */
  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    if (this.o.metrics)
      leaderGauge(this.o.metrics).set({ lease: `${this.namespace}/${this.name}` }, leading ? 1 : 0);
    if (leading) {
      this.log.info({ identity: this.identity }, 'became leader');
      this.o.onStartedLeading?.();
    } else {
      this.log.info({ identity: this.identity }, 'stopped leading');
      this.o.onStoppedLeading?.();
    }
  }

  /**
   * Records a Lease as read: when its spec last changed (our clock), and a new holder (logged and
   * reported to onNewLeader).
   */
  private observe(lease: Lease): void {
    const key = JSON.stringify(lease.spec);
    if (!this.observed || this.observed.key !== key) this.observed = { key, at: Date.now(), lease };
    else this.observed.lease = lease;
    const holder = lease.spec.holderIdentity ?? '';
    if (holder !== this.knownLeader) {
      this.knownLeader = holder;
      if (holder && holder !== this.identity) {
        this.log.info({ leader: holder }, 'new leader observed');
        this.o.onNewLeader?.(holder);
      }
    }
  }

  /** Runs one round of acquire-or-renew and returns whether we hold the Lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const timeoutMs = Math.max(1000, this.retryPeriodMs);
    const spec = (previous?: LeaseSpec): LeaseSpec => {
      const taking = previous?.holderIdentity !== this.identity;
      return {
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.max(1, Math.ceil(this.leaseDurationMs / 1000)),
        acquireTime: taking || !previous?.acquireTime ? microTime(now) : previous.acquireTime,
        renewTime: microTime(now),
        leaseTransitions: (previous?.leaseTransitions ?? 0) + (previous && taking ? 1 : 0),
      };
    };
    let lease: Lease;
    try {
      lease = await this.client.request<Lease>('GET', `${this.path}/${encodeURIComponent(this.name)}`, {
        timeoutMs,
        signal: this.abort.signal,
      });
    } catch (err) {
      if (statusCodeOf(err) !== 404) throw err;
      const created = await this.client
        .request<Lease>('POST', this.path, {
          query: { fieldManager: 'convoy-leader-election' },
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.name, namespace: this.namespace },
            spec: spec(),
          },
          timeoutMs,
          signal: this.abort.signal,
        })
        .catch((e: unknown) => {
          if (statusCodeOf(e) === 409) return undefined; // someone else created it first
          throw e;
        });
      if (!created) return false;
      this.observe(created);
      return true;
    }
    this.observe(lease);
    const holder = lease.spec.holderIdentity ?? '';
    if (holder && holder !== this.identity) {
      const durationMs = (lease.spec.leaseDurationSeconds ?? 15) * 1000;
      if (Date.now() - this.observed!.at < durationMs) return false;
      this.log.info({ previous: holder }, 'lease expired; taking over');
    }
    const updated = await this.client
      .request<Lease>('PUT', `${this.path}/${encodeURIComponent(this.name)}`, {
        query: { fieldManager: 'convoy-leader-election' },
        body: { ...lease, spec: spec(lease.spec) },
        timeoutMs,
        signal: this.abort.signal,
      })
      .catch((e: unknown) => {
        if (statusCodeOf(e) === 409) return undefined; // the record changed since our GET
        throw e;
      });
    if (!updated) return false;
    this.observe(updated);
    return true;
  }

  /** Gives up a Lease we hold (holder cleared, duration 1 s) so a standby takes over at once. */
  private async release(): Promise<void> {
    const lease = this.observed?.lease;
    if (!lease || lease.spec.holderIdentity !== this.identity) return;
    try {
      await this.client.request('PUT', `${this.path}/${encodeURIComponent(this.name)}`, {
        body: {
          ...lease,
          spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime() },
        },
        timeoutMs: 2000,
      });
      this.log.info('released the lease');
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not release the lease');
    }
  }
}
