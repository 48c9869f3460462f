import type { ServerDuplexStream } from '@grpc/grpc-js';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import type { SnapshotSource } from './mirror-cache';
import type { BudgetWaiter, SendBudget } from './budget';
import { TypeUrl } from '../envoy/resources';
import { DEFERRED_REMOVAL_TYPES, PUSH_ORDER, typeLabel } from './served-types';
import type { FleetChange, FleetSnapshot } from './snapshot';
import { SplicedMessage, nonceTrailer } from './wire';
import type { StreamDebug, TypeDebug } from './debug-state';
import type { StreamIdentity } from './authorization';
import { attributeNack, namedParts, oneLineMessage } from './nack-attribution';
import type { ResourceVersion } from './nack-attribution';
import type { StreamRejection, StreamRejectionsView } from './rejections';
import { TypeState } from './type-state';
import type { Built, SentInfo } from './type-state';
import { resourceStatuses, type ResourceStatus } from './csds-state';

/** The parts of envoy.config.core.v3.Node the server uses. */
export interface NodeInfo {
  id?: string;
  cluster?: string;
  user_agent_name?: string;
  user_agent_version?: string;
}

/** The parts of google.rpc.Status (a request's error_detail) the server reads. */
export interface StatusDetail {
  code?: number;
  message?: string;
}

/** Why a stream was refused: the bounded label of convoy_xds_streams_refused_total. */
export type RefusalReason =
  | 'permission_denied'
  | 'unauthenticated'
  | 'stream_limit'
  | 'peer_stream_limit'
  | 'unknown_fleet'
  | 'invalid_request';

/** A refused stream's gRPC status and the metric label of why. */
export interface Refusal {
  code: GrpcStatus;
  details: string;
  reason: RefusalReason;
}

/** What a stream needs from the server: cache, logging, metrics, send budget and fleet bookkeeping. */
export interface StreamContext {
  readonly cache: SnapshotSource;
  readonly logger: Logger;
  readonly metrics: ConvoyMetrics;
  readonly budget: SendBudget;
  /** How long a stream may go without any write being flushed before it counts as stalled. */
  readonly stallTimeoutMs: number;
  /** Maps a node to its fleet; undefined refuses the stream. */
  fleetOf(node: NodeInfo): string | undefined;
  /** Whether the stream's identity may receive `fleet` (docs/security.md §2); undefined: it may. */
  authorize(stream: AdsStream, node: NodeInfo, fleet: string): Refusal | undefined;
  attach(stream: AdsStream): void;
  detach(stream: AdsStream): void;
  /** The resources this stream's Envoy rejects changed (see rejections.ts). */
  rejectionsChanged(stream: AdsStream): void;
}

/** Max responses handed to grpc-js per stream before waiting for write completions. */
export const MAX_INFLIGHT = 4;
/**
 * Responses that brought more resources than this to the client do not keep the list (a first
 * sync of thousands of clusters, times every stream); a NACK of one is attributed to the
 * resources Envoy's message names instead.
 */
const CHANGED_KEPT = 256;
/** Label of NACKs on streams of a fleet Convoy does not serve: metric labels name known fleets only. */
export const UNKNOWN_FLEET_LABEL = 'unknown';
/** Types that wait while the Envoy applies a CDS response that added clusters. */
const AFTER_CLUSTER_WARMING: ReadonlySet<string> = new Set([TypeUrl.Listener, TypeUrl.Route]);

let nextStreamId = 1;

/**
 * One ADS stream: node identity, per-type state, and an ordered, backpressured send loop.
 * Subclasses implement the SotW and delta request handling and response building.
 */
export abstract class AdsStream implements BudgetWaiter {
  readonly id = nextStreamId++;
  readonly connectedAt = Date.now();
  abstract readonly variant: 'sotw' | 'delta';
  node?: NodeInfo;
  fleet?: string;
  /** Who the client is (set by the server before the first request is read). */
  identity?: StreamIdentity;
  /** The client's IP address, the key of the per-client stream limit. */
  peerAddress = '';
  protected readonly types = new Map<string, TypeState>();
  protected log: Logger;
  private nonceSeq = 0;
  /** Responses handed to grpc-js and not yet flushed, and their bytes. */
  private inflight = 0;
  private inflightBytes = 0;
  /** The part of inflightBytes that counts against the server-wide send budget. */
  private budgetBytes = 0;
  /** Writes carry the epoch they were sent in; a stall starts a new one (their bytes were released). */
  private budgetEpoch = 0;
  /** When a write last completed, or the first of the current writes was handed over. */
  private lastProgress = Date.now();
  /** The Envoy stopped reading: nothing more is sent until everything handed over is flushed. */
  private stalled = false;
  private waitingDrain = false;
  private pumping = false;
  private held: Built | undefined;
  private heldLogged = false;
  closed = false;
  attached = false;
  /** fail() was called: the status is on its way, nothing more is read. */
  private failed = false;

  constructor(
    protected readonly ctx: StreamContext,
    protected readonly call: ServerDuplexStream<unknown, unknown>,
  ) {
    this.log = ctx.logger.child({ stream: this.id });
    call.on('data', (req: unknown) => {
      try {
        this.onRequest(req);
      } catch (e) {
        this.log.error({ err: e }, 'xds: request handling failed');
        this.fail(GrpcStatus.INTERNAL, 'internal error handling the request');
      }
    });
    call.on('end', () => {
      // Client half-closed: finish our side too.
      if (!this.closed) call.end();
    });
    call.on('error', (err: Error) => {
      this.log.debug({ err }, 'xds: stream error');
      this.close('error');
    });
    call.on('cancelled', () => this.close('cancelled'));
    call.on('close', () => this.close('closed'));
  }

  /** The client's address as grpc-js reports it, or 'unknown' once the call is gone. */
  get peer(): string {
    try {
      return this.call.getPeer();
    } catch {
      return 'unknown';
    }
  }

  /** Handles one request of the variant (SotW or delta) whose type URL is known. */
  protected abstract onTypedRequest(req: unknown, typeUrl: string): void;
  /** Builds the next response for one type, or undefined when it has nothing to send. */
  protected abstract build(st: TypeState, snap: FleetSnapshot, final: boolean): Built | undefined;
  /** The node a request carries, if any. */
  protected abstract requestNode(req: unknown): NodeInfo | undefined;
  /** The type URL a request names ('' when absent). */
  protected abstract requestTypeUrl(req: unknown): string;

  /**
   * Handles one request: the first must identify a node of a fleet this identity may receive,
   * before anything of the fleet is sent; then it is handed to the variant and the stream pumps.
   */
  private onRequest(req: unknown): void {
    if (this.closed || this.failed) return;
    if (!this.node) {
      const node = this.requestNode(req);
      if (!node)
        return this.fail(GrpcStatus.INVALID_ARGUMENT, 'the first request must carry node', 'invalid_request');
      const fleet = this.ctx.fleetOf(node);
      if (!fleet) {
        return this.fail(
          GrpcStatus.INVALID_ARGUMENT,
          'node.cluster must name the fleet (namespace/name of the Gateway)',
          'invalid_request',
        );
      }
      // Nothing of a fleet is sent before this check passed (docs/security.md §2).
      const refusal = this.ctx.authorize(this, node, fleet);
      if (refusal) return this.fail(refusal.code, refusal.details, refusal.reason);
      this.node = node;
      this.fleet = fleet;
      this.log = this.log.child({ node: node.id ?? '', fleet });
      this.ctx.attach(this);
      this.attached = true;
      this.log.debug({ peer: this.peer, variant: this.variant }, 'xds: stream connected');
    }
    const typeUrl = this.requestTypeUrl(req);
    if (!typeUrl)
      return this.fail(
        GrpcStatus.INVALID_ARGUMENT,
        'type_url is required on every ADS request',
        'invalid_request',
      );
    this.onTypedRequest(req, typeUrl);
    this.pump();
  }

  /** The state of one type on this stream, created on first use. */
  protected typeState(typeUrl: string): TypeState {
    let st = this.types.get(typeUrl);
    if (!st) {
      st = new TypeState(typeUrl);
      this.types.set(typeUrl, st);
      if (!st.served) this.log.info({ type: typeUrl }, 'xds: request for a type this server does not serve');
    }
    return st;
  }

  /** Records an ACK or NACK of a sent response. */
  protected onAnswer(
    st: TypeState,
    sent: SentInfo,
    req: { version: string; error?: StatusDetail | null },
  ): void {
    const now = Date.now();
    const type = typeLabel(st.typeUrl);
    if (!sent.answered) {
      sent.answered = true;
      this.ctx.metrics.xdsPushLatency.observe({ type }, Number(process.hrtime.bigint() - sent.hr) / 1e9);
    }
    if (req.error) {
      const message = req.error.message ?? '';
      st.nack = {
        version: sent.version,
        nonce: sent.nonce,
        message,
        code: req.error.code ?? 0,
        acceptedVersion: req.version,
        time: now,
      };
      const fleet =
        this.fleet !== undefined && this.ctx.cache.hasSnapshot(this.fleet) ? this.fleet : undefined;
      this.ctx.metrics.xdsNacks.inc({ type, fleet: fleet ?? UNKNOWN_FLEET_LABEL });
      const rejected = this.recordRejection(st, sent, message, now);
      this.log.warn(
        {
          nodeId: this.node?.id,
          fleet: this.fleet,
          type,
          version: sent.version,
          nonce: sent.nonce,
          message,
          resources: rejected.slice(0, 20),
        },
        'xds: NACK: Envoy rejected a response; it is resent only when its content or an object it comes from changes',
      );
    } else {
      st.acked = { version: req.version, nonce: sent.nonce, time: now };
      if (st.rejected.size > 0) {
        let cleared = false;
        for (const n of sent.carries) cleared = st.rejected.delete(n) || cleared;
        for (const r of sent.changed ?? []) cleared = st.rejected.delete(r.name) || cleared;
        if (cleared) this.ctx.rejectionsChanged(this);
      }
    }
  }

  /**
   * Records which resources a NACK rejects (nack-attribution.ts): the candidates are what the
   * response brought to the client plus the earlier rejections it carried again; when the
   * response brought too many to keep, the resources of the type that Envoy's message names.
   * Returns the names recorded as rejected.
   */
  private recordRejection(st: TypeState, sent: SentInfo, message: string, now: number): string[] {
    const candidates: ResourceVersion[] = [];
    if (sent.changed) candidates.push(...sent.changed);
    else {
      const ts = this.fleet ? this.ctx.cache.snapshot(this.fleet)?.types[st.typeUrl as TypeUrl] : undefined;
      for (const name of ts ? namedParts(message, ts.entries.keys()).keys() : []) {
        candidates.push(ts!.entries.get(name)!);
      }
    }
    for (const name of sent.carries) {
      const earlier = st.rejected.get(name);
      if (earlier) candidates.push({ name, version: earlier.version });
    }
    const { rejected, accepted } = attributeNack(message, candidates);
    for (const name of accepted) st.rejected.delete(name);
    for (const r of rejected) st.rejected.set(r.name, { version: r.version, message: r.message, time: now });
    if (rejected.length === 0) {
      this.log.info(
        { type: typeLabel(st.typeUrl), message: oneLineMessage(message) },
        'xds: the NACK names no resource of the response; it is not attributed to any object',
      );
    }
    this.ctx.rejectionsChanged(this);
    return rejected.map((r) => r.name);
  }

  /**
   * Sends these resources again when this Envoy rejected exactly their current version
   * (RejectionFeed.reoffer). Returns true when something was queued; the caller pumps.
   */
  reoffer(typeUrl: string, names: readonly string[]): boolean {
    const st = this.types.get(typeUrl);
    if (!st?.requested || st.rejected.size === 0 || !this.fleet || this.closed) return false;
    const ts = this.ctx.cache.snapshot(this.fleet)?.types[typeUrl as TypeUrl];
    if (!ts) return false;
    let queued = false;
    for (const name of names) {
      const rejection = st.rejected.get(name);
      const entry = ts.entries.get(name);
      if (!rejection || !entry || entry.version !== rejection.version || !st.interested(name)) continue;
      st.client.forget(name);
      st.addPending(name);
      queued = true;
    }
    if (queued) this.log.info({ type: typeLabel(typeUrl), names }, 'xds: offering rejected resources again');
    return queued;
  }

  /** True when this stream's Envoy holds a rejection of any resource. */
  hasRejections(): boolean {
    for (const st of this.types.values()) if (st.rejected.size > 0) return true;
    return false;
  }

  /** This stream's rejections, as the fleet aggregation reads them (rejections.ts). */
  rejectionsView(): StreamRejectionsView {
    const rejected = new Map<string, ReadonlyMap<string, StreamRejection>>();
    for (const [typeUrl, st] of this.types) if (st.rejected.size > 0) rejected.set(typeUrl, st.rejected);
    return {
      nodeId: this.node?.id ?? `stream-${this.id}`,
      rejected,
      interested: (typeUrl, name) => this.types.get(typeUrl)?.interested(name) ?? false,
    };
  }

  /**
   * The fleet's snapshot changed (called by the server for every stream of the fleet). Only marks
   * what must be re-evaluated; the server calls pump() afterwards.
   */
  applyFleetChange(change: FleetChange): void {
    if (this.closed || !change.snapshot) return;
    if (change.first) {
      for (const st of this.types.values()) if (st.requested) st.markAll();
    } else {
      for (const [type, names] of change.changed) {
        const st = this.types.get(type);
        if (st?.requested) this.noteChanged(st, names, false);
      }
      for (const [type, names] of change.removed) {
        const st = this.types.get(type);
        if (st?.requested) this.noteChanged(st, names, true);
      }
    }
  }

  /** Which changed names concern this stream. */
  protected noteChanged(st: TypeState, names: readonly string[], _removed: boolean): void {
    if (st.isWildcard) st.addPendingMany(names);
    else for (const n of names) if (st.explicit.has(n)) st.addPending(n);
  }

  /**
   * A cluster changed (or is new) on this stream: its ClusterLoadAssignment must be sent again in
   * the same push, even if unchanged, or Envoy keeps the updated cluster warming (docs/xds.md §7).
   */
  protected resendClusterLoadAssignment(snap: FleetSnapshot, clusterName: string): void {
    const eds = this.types.get(TypeUrl.Endpoint);
    if (!eds?.requested) return;
    const cla = snap.clusterEds.get(clusterName);
    if (cla === undefined || !eds.interested(cla)) return;
    eds.client.forget(cla);
    eds.addPending(cla);
  }

  /**
   * The next response in push order: SDS, CDS, EDS, LDS, RDS, then the removals of clusters and
   * their endpoints (make-before-break: routes move away from a cluster before it goes).
   */
  private buildNext(): Built | undefined {
    if (!this.fleet) return undefined;
    const snap = this.ctx.cache.snapshot(this.fleet);
    if (!snap) {
      if (!this.heldLogged && [...this.types.values()].some((st) => st.requested)) {
        this.heldLogged = true;
        this.log.info('xds: holding stream until the fleet has a snapshot');
      }
      return undefined;
    }
    for (const type of PUSH_ORDER) {
      const st = this.types.get(type);
      if (st?.hasWork()) {
        if (AFTER_CLUSTER_WARMING.has(type) && this.clustersWarming()) return undefined;
        const built = this.build(st, snap, false);
        if (built) return built;
      }
    }
    for (const type of DEFERRED_REMOVAL_TYPES) {
      const st = this.types.get(type);
      if (st?.hasWork()) {
        const built = this.build(st, snap, true);
        if (built) return built;
      }
    }
    return undefined;
  }

  /**
   * True while the Envoy has not answered a CDS response that added clusters. Envoy asks for the
   * endpoints of new clusters while it applies the response, before its ACK, and keeps them
   * warming until those arrive; a listener or route naming a cluster that is still warming
   * answers 503. So listeners, routes and the removals after them wait for that answer, and the
   * new clusters' endpoints, now subscribed, go first (docs/xds.md §7).
   */
  private clustersWarming(): boolean {
    const sent = this.types.get(TypeUrl.Cluster)?.sent;
    return sent !== undefined && sent.added > 0 && !sent.answered;
  }

  /** Sends as much as backpressure allows. Safe to call at any time. */
  pump(): void {
    if (this.pumping || this.closed) return;
    this.pumping = true;
    try {
      while (!this.closed && !this.stalled && !this.waitingDrain && this.inflight < MAX_INFLIGHT) {
        const next = this.held ?? this.buildNext();
        this.held = undefined;
        if (!next) break;
        const frameBytes = next.body.length + 16;
        if (!this.ctx.budget.tryAcquire(frameBytes, this)) {
          this.held = next;
          break;
        }
        this.send(next, frameBytes);
      }
    } catch (e) {
      // A bug here must not take the process down (pump runs from timers and other streams).
      this.log.error({ err: e }, 'xds: building a response failed');
      this.fail(GrpcStatus.INTERNAL, 'internal error building a response');
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Writes one built response with a fresh nonce and records it as sent; waits for 'drain' when
   * grpc-js buffers too much.
   */
  private send(b: Built, budgetBytes: number): void {
    const nonce = (++this.nonceSeq).toString(36);
    const msg = new SplicedMessage(b.body, nonceTrailer(nonce));
    const type = typeLabel(b.st.typeUrl);
    b.st.recordSent({
      version: b.version,
      nonce,
      time: Date.now(),
      hr: process.hrtime.bigint(),
      resources: b.resources,
      added: b.added,
      removed: b.removed,
      bytes: msg.byteLength,
      answered: false,
      changed: b.changed.length <= CHANGED_KEPT ? b.changed : undefined,
      carries: b.carries,
    });
    this.ctx.metrics.xdsPushes.inc({ type });
    this.ctx.metrics.xdsPushBytes.inc({ type }, msg.byteLength);
    if (this.inflight === 0) this.lastProgress = Date.now();
    this.inflight++;
    this.inflightBytes += budgetBytes;
    this.budgetBytes += budgetBytes;
    const epoch = this.budgetEpoch;
    if (this.log.isLevelEnabled('debug')) {
      this.log.debug(
        {
          type,
          version: b.version,
          nonce,
          resources: b.resources,
          removed: b.removed,
          bytes: msg.byteLength,
        },
        'xds: response sent',
      );
    }
    const ok = this.call.write(msg, () => this.onWritten(budgetBytes, epoch));
    if (!ok && !this.waitingDrain) {
      this.waitingDrain = true;
      this.call.once('drain', () => {
        this.waitingDrain = false;
        this.pump();
      });
    }
  }

  private onWritten(bytes: number, epoch: number): void {
    if (this.closed) return; // released in close()
    this.inflight--;
    this.inflightBytes -= bytes;
    this.lastProgress = Date.now();
    if (epoch === this.budgetEpoch) {
      this.budgetBytes -= bytes;
      this.ctx.budget.release(bytes);
    }
    if (this.stalled && this.inflight === 0) {
      this.stalled = false;
      this.ctx.metrics.xdsStalledStreams.dec();
      this.log.info('xds: stalled stream flushed everything; sending again');
    }
    this.pump();
  }

  /**
   * Called periodically by the server. A stream with unflushed writes and no write completed for
   * stallTimeoutMs has an Envoy that stopped reading (or a dead connection keepalive has not
   * caught yet): its bytes leave the send budget, so it cannot starve the other streams, and it
   * gets nothing more until what it holds is flushed. Its memory stays bounded by MAX_INFLIGHT
   * responses plus its pending names (docs/xds.md §11).
   */
  checkStall(now: number): void {
    if (this.closed || this.stalled || this.inflight === 0) return;
    if (now - this.lastProgress < this.ctx.stallTimeoutMs) return;
    this.stalled = true;
    this.budgetEpoch++;
    if (this.budgetBytes > 0) this.ctx.budget.release(this.budgetBytes);
    this.budgetBytes = 0;
    this.ctx.metrics.xdsStalledStreams.inc();
    this.log.warn(
      {
        nodeId: this.node?.id,
        fleet: this.fleet,
        unflushedResponses: this.inflight,
        unflushedBytes: this.inflightBytes,
      },
      'xds: stream stalled: the Envoy is not reading; its responses no longer hold the send budget',
    );
  }

  /** Ends the stream with an error status; `reason` counts it as a refusal. */
  fail(code: GrpcStatus, details: string, reason?: RefusalReason): void {
    if (this.closed || this.failed) return;
    this.failed = true;
    if (reason) this.ctx.metrics.xdsStreamsRefused.inc({ reason });
    this.log.warn({ code, details, peer: this.peerAddress }, 'xds: refusing stream');
    this.call.emit('error', { code, details });
  }

  /** Ends the stream from the server side (graceful: pending writes are flushed first). */
  end(): void {
    if (!this.closed) this.call.end();
  }

  /** Marks the stream closed and releases its budget, fleet attachment and rejections. */
  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.held = undefined;
    this.ctx.budget.forget(this);
    if (this.budgetBytes > 0) this.ctx.budget.release(this.budgetBytes);
    this.budgetBytes = 0;
    this.inflightBytes = 0;
    if (this.stalled) {
      this.stalled = false;
      this.ctx.metrics.xdsStalledStreams.dec();
    }
    this.ctx.detach(this);
    if (this.attached && this.hasRejections()) this.ctx.rejectionsChanged(this);
    if (this.attached) this.log.debug({ reason }, 'xds: stream closed');
  }

  /** The CSDS status of every resource of interest (csds-state.ts), per requested type in push order. */
  clientStatus(): { typeUrl: string; resources: ResourceStatus[] }[] {
    const snap = this.fleet !== undefined ? this.ctx.cache.snapshot(this.fleet) : undefined;
    return PUSH_ORDER.filter((type) => this.types.get(type)?.requested).map((type) => ({
      typeUrl: type,
      resources: resourceStatuses(this.types.get(type)!.statusInput(snap?.types[type])),
    }));
  }

  /** This stream's state as the debug endpoint shows it. */
  /**
   * The sync state of each type this stream requested: what convoy_xds_type_states counts at
   * every scrape, without building the whole debug view (which sorts every subscription).
   */
  *typeStates(): Iterable<TypeDebug['state']> {
    for (const st of this.types.values()) if (st.requested) yield st.state();
  }

  debug(): StreamDebug {
    const types: Record<string, TypeDebug> = {};
    for (const [typeUrl, st] of this.types) if (st.requested) types[typeUrl] = st.debug();
    return {
      id: this.id,
      nodeId: this.node?.id ?? '',
      fleet: this.fleet ?? '',
      variant: this.variant,
      connectedSince: new Date(this.connectedAt).toISOString(),
      peer: this.peer,
      held: this.fleet !== undefined && !this.ctx.cache.hasSnapshot(this.fleet),
      stalled: this.stalled,
      unflushed: { responses: this.inflight, bytes: this.inflightBytes },
      userAgent: [this.node?.user_agent_name, this.node?.user_agent_version].filter(Boolean).join('/'),
      types,
    };
  }
}
