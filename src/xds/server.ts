import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import { messageType } from '../envoy/protos';
import type { SnapshotSource } from './mirror-cache';
import { SendBudget } from './budget';
import { releaseDecodedMessageBuffers } from './grpc-decoder-release';
import { DeltaStream } from './delta';
import type { FleetDebug, XdsDebugState } from './debug-state';
import { PUSH_ORDER, typeLabel } from './served-types';
import { decodeSotwRequest } from './request';
import type { FleetChange } from './snapshot';
import { SotwStream } from './sotw';
import type { AdsStream, NodeInfo, Refusal, StreamContext } from './stream';
import { RejectionTracker, aggregateRejections } from './rejections';
import type { FleetRejections, RejectionFeed } from './rejections';
import {
  ANONYMOUS_AUTHENTICATOR,
  CERTIFICATE_AUTHENTICATOR,
  describeFleets,
  mayServe,
} from './authorization';
import type { XdsAuthenticator } from './authorization';
import { StreamAdmission, peerAddress } from './admission';
import type { StreamLimits } from './admission';
import { ReloadableServerCredentials, TlsFileWatcher } from './tls-credentials';
import type { TlsFiles, TlsMaterial } from './tls-credentials';
import { formatDuration } from '../util/duration';
import { csdsHandlers, csdsServiceDefinition } from './csds';

export const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
export const SOTW_METHOD = `/${ADS_SERVICE}/StreamAggregatedResources`;
export const DELTA_METHOD = `/${ADS_SERVICE}/DeltaAggregatedResources`;

const identity = (b: Buffer): Buffer => b;

/**
 * The ADS service with pass-through responses (the server hands grpc-js pre-encoded bytes, see
 * wire.ts SplicedMessage, so responses are never re-encoded). Delta requests are decoded with
 * protobufjs; SotW requests with request.ts, which leaves the repeated resource names encoded.
 */
export function adsServiceDefinition(): grpc.ServiceDefinition {
  const deltaReq = messageType('envoy.service.discovery.v3.DeltaDiscoveryRequest');
  return {
    StreamAggregatedResources: {
      path: SOTW_METHOD,
      requestStream: true,
      responseStream: true,
      requestSerialize: identity,
      requestDeserialize: decodeSotwRequest,
      responseSerialize: identity,
      responseDeserialize: identity,
      originalName: 'streamAggregatedResources',
    },
    DeltaAggregatedResources: {
      path: DELTA_METHOD,
      requestStream: true,
      responseStream: true,
      requestSerialize: identity,
      requestDeserialize: (b: Buffer) => deltaReq.decode(b),
      responseSerialize: identity,
      responseDeserialize: identity,
      originalName: 'deltaAggregatedResources',
    },
  };
}

export interface AdsServerOptions {
  cache: SnapshotSource;
  logger: Logger;
  metrics: ConvoyMetrics;
  /** Fixed TLS material. With `ca`, clients must present a certificate signed by it (mTLS). */
  tls?: TlsMaterial;
  /** mTLS with material read from files, reloaded when they change (takes precedence over `tls`). */
  tlsFiles?: TlsFiles;
  /** Who a client is. Default: its certificate under mTLS, anonymous (any fleet) otherwise. */
  authenticator?: XdsAuthenticator;
  /** Caps on open streams, in total and per client address. Default: none. */
  limits?: StreamLimits;
  /**
   * A stream whose fleet has no snapshot (no such Gateway) for this long, or that sent no first
   * request, is closed with NOT_FOUND; the Envoy retries later. Default: never.
   */
  unknownFleetTimeoutMs?: number;
  /** Node → fleet. Default: `node.cluster`. Returning undefined refuses the stream. */
  fleetOf?: (node: NodeInfo) => string | undefined;
  /** Server-wide cap on response bytes queued in grpc-js and not yet flushed. Default 32 MiB. */
  sendBudgetBytes?: number;
  /** Bytes handed to grpc-js per event-loop turn before the rest wait a turn (docs/xds.md §11.1). Default 4 MiB. */
  sendTurnBytes?: number;
  /**
   * How long a stream may hold unflushed responses without any of them being flushed before it
   * counts as stalled and stops holding send budget (docs/xds.md §11). Default 10 s.
   */
  stallTimeoutMs?: number;
  /** Extra or overriding grpc-js server options. */
  grpcOptions?: grpc.ServerOptions;
}

/** Streams of a fleet are woken in batches so a fan-out does not block the event loop for long. */
const PUMP_BATCH = 128;

/**
 * Aggregated Discovery Service (SotW and delta) over @grpc/grpc-js, serving each Envoy the
 * snapshot of the fleet named by its node (see docs/xds.md). It is also the controller's
 * RejectionFeed: what the Envoys of each fleet rejected (rejections.ts).
 */
export class AdsServer implements RejectionFeed {
  private readonly cache: SnapshotSource;
  private readonly logger: Logger;
  private readonly metrics: ConvoyMetrics;
  private readonly tls: TlsMaterial | undefined;
  private readonly tlsWatcher: TlsFileWatcher | undefined;
  private readonly authenticator: XdsAuthenticator;
  private readonly admission: StreamAdmission;
  private readonly unknownFleetTimeoutMs: number | undefined;
  private readonly unknownFleetTimers = new Map<AdsStream, NodeJS.Timeout>();
  private credentials: ReloadableServerCredentials | undefined;
  private readonly server: grpc.Server;
  private readonly streams = new Set<AdsStream>();
  private readonly byFleet = new Map<string, Set<AdsStream>>();
  private readonly budget: SendBudget;
  private readonly ctx: StreamContext;
  private readonly unsubscribe: () => void;
  private readonly wakeQueue = new Set<AdsStream>();
  private wakeScheduled = false;
  private readonly rejectionTracker: RejectionTracker;
  private readonly stallTimer: NodeJS.Timeout;

  constructor(opts: AdsServerOptions) {
    this.cache = opts.cache;
    this.logger = opts.logger;
    this.metrics = opts.metrics;
    if (opts.tlsFiles) {
      // Read now, so bad files fail startup with a clear message instead of every handshake.
      this.tlsWatcher = new TlsFileWatcher(opts.tlsFiles, {
        logger: this.logger,
        onChange: (material) => this.credentials?.update(material),
      });
      this.tls = this.tlsWatcher.material;
    } else {
      this.tls = opts.tls;
    }
    const mtls = this.tls?.ca !== undefined;
    this.authenticator = opts.authenticator ?? (mtls ? CERTIFICATE_AUTHENTICATOR : ANONYMOUS_AUTHENTICATOR);
    this.admission = new StreamAdmission(opts.limits ?? {});
    this.unknownFleetTimeoutMs = opts.unknownFleetTimeoutMs;
    this.metrics.xdsStreamCounts = () => this.streamCounts();
    this.budget = new SendBudget(opts.sendBudgetBytes ?? 32 * 1024 * 1024, opts.sendTurnBytes);
    const fleetOf = opts.fleetOf ?? ((node: NodeInfo) => node.cluster || undefined);
    this.ctx = {
      cache: this.cache,
      logger: this.logger,
      metrics: this.metrics,
      budget: this.budget,
      stallTimeoutMs: opts.stallTimeoutMs ?? 10_000,
      fleetOf,
      authorize: (s, node, fleet) => this.authorize(s, node, fleet),
      attach: (s) => this.attach(s),
      detach: (s) => this.detach(s),
      rejectionsChanged: (s) => {
        if (s.fleet !== undefined) this.rejectionTracker.markChanged(s.fleet);
      },
    };
    this.rejectionTracker = new RejectionTracker(
      (fleet) => this.collectRejections(fleet),
      (err) => this.logger.error({ err }, 'xds: a rejection listener failed'),
    );
    // grpc-js would otherwise pin each call's last request buffers (grpc-decoder-release.ts).
    releaseDecodedMessageBuffers(this.logger);
    this.server = new grpc.Server({
      // Envoy's HTTP/2 keepalive pings must be accepted, with or without active calls.
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.http2.min_ping_interval_without_data_ms': 10_000,
      'grpc.http2.max_ping_strikes': 0,
      // Detect dead Envoys: ping each connection every 30 s, drop it after 10 s without an answer.
      'grpc.keepalive_time_ms': 30_000,
      'grpc.keepalive_timeout_ms': 10_000,
      // Delta reconnects carry initial_resource_versions for every resource.
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
      'grpc.max_send_message_length': -1,
      'grpc.max_concurrent_streams': 1_000_000,
      'grpc-node.max_session_memory': 64,
      ...opts.grpcOptions,
    });
    const def = adsServiceDefinition();
    this.server.addService(def, {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<unknown, unknown>) =>
        this.track(new SotwStream(this.ctx, call), call),
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<unknown, unknown>) =>
        this.track(new DeltaStream(this.ctx, call), call),
    });
    // Client status of every connected Envoy, for operators only (docs/security.md §2.6).
    this.server.addService(
      csdsServiceDefinition(),
      csdsHandlers({
        authenticator: this.authenticator,
        logger: this.logger,
        metrics: this.metrics,
        clients: () =>
          [...this.streams]
            .filter((s) => s.attached && !s.closed && s.node !== undefined)
            .map((s) => ({ node: s.node!, clientStatus: () => s.clientStatus() })),
      }),
    );
    this.unsubscribe = this.cache.onChange((change) => this.onFleetChange(change));
    // One timer for every stream: a quarter of the stall timeout bounds how late a stall is seen.
    this.stallTimer = setInterval(
      () => {
        const now = Date.now();
        for (const s of this.streams) s.checkStall(now);
      },
      Math.max(50, this.ctx.stallTimeoutMs / 4),
    );
    this.stallTimer.unref();
  }

  /** Binds `host:port` (port 0 picks a free port) and resolves with the bound port. */
  listen(address: string): Promise<number> {
    if (this.tls) this.credentials ??= new ReloadableServerCredentials(this.tls);
    const creds = this.credentials ?? grpc.ServerCredentials.createInsecure();
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, creds, (err, port) => {
        if (err) return reject(err);
        this.tlsWatcher?.start();
        this.logger.info(
          { address, port, tls: !!this.tls, mtls: !!this.tls?.ca, reloading: !!this.tlsWatcher },
          'xds: ADS server listening',
        );
        resolve(port);
      });
    });
  }

  /**
   * Stops accepting streams, ends the open ones (Envoys keep their config and reconnect
   * elsewhere), waits up to `graceMs` for them to finish, then forces the shutdown.
   */
  stop(graceMs = 5_000): Promise<void> {
    this.unsubscribe();
    this.tlsWatcher?.stop();
    for (const t of this.unknownFleetTimers.values()) clearTimeout(t);
    this.unknownFleetTimers.clear();
    this.rejectionTracker.stop();
    clearInterval(this.stallTimer);
    for (const s of this.streams) s.end();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.logger.warn({ streams: this.streams.size }, 'xds: forcing shutdown after the grace period');
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      timer.unref();
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Counts (stream, type) pairs per fleet and sync state for the convoy_xds_type_states gauge, as
   * typeStateCounts (debug-state.ts) does over debugState() but at the cost of one state per
   * pair: a scrape must not hold the event loop for the debug view of every stream.
   */
  typeStateCounts(): { fleet: string; state: string; count: number }[] {
    const counts = new Map<string, { fleet: string; state: string; count: number }>();
    for (const s of this.streams) {
      if (!s.attached) continue;
      const fleet = s.fleet !== undefined && this.cache.snapshot(s.fleet) ? s.fleet : 'unknown';
      for (const state of s.typeStates()) {
        const key = `${fleet}\0${state}`;
        const c = counts.get(key) ?? { fleet, state, count: 0 };
        c.count++;
        counts.set(key, c);
      }
    }
    return [...counts.values()];
  }

  /**
   * Returns whether response bytes are waiting to go out: handed to grpc-js and not yet flushed,
   * or queued for the send budget. The status writer starts no new write meanwhile, so that a
   * push to the fleet goes first (docs/gateway-api.md §16, "Pushes first").
   */
  get sending(): boolean {
    return this.budget.inflightBytes > 0 || this.budget.waiting > 0;
  }

  debugState(): XdsDebugState {
    const fleets: FleetDebug[] = [];
    const names = new Set([...this.cache.fleets(), ...this.byFleet.keys()]);
    for (const fleet of [...names].sort()) {
      const snap = this.cache.snapshot(fleet);
      const types: FleetDebug['types'] = {};
      if (snap)
        for (const t of PUSH_ORDER)
          types[t] = { version: snap.types[t].version, resources: snap.types[t].entries.size };
      fleets.push({ fleet, streams: this.byFleet.get(fleet)?.size ?? 0, types });
    }
    return {
      time: new Date().toISOString(),
      streams: [...this.streams].filter((s) => s.attached).map((s) => s.debug()),
      fleets,
      rejections: this.rejectionTracker.current(),
      cache: this.cache.stats(),
      sendBudget: {
        limitBytes: this.budget.limitBytes,
        inflightBytes: this.budget.inflightBytes,
        waitingStreams: this.budget.waiting,
      },
    };
  }

  rejections(): FleetRejections[] {
    return this.rejectionTracker.current();
  }

  onRejectionsChange(listener: (view: FleetRejections) => void): () => void {
    return this.rejectionTracker.subscribe(listener);
  }

  reoffer(fleet: string, resources: readonly { typeUrl: string; name: string }[]): void {
    const byType = new Map<string, string[]>();
    for (const r of resources) byType.set(r.typeUrl, [...(byType.get(r.typeUrl) ?? []), r.name]);
    for (const s of this.byFleet.get(fleet) ?? []) {
      let queued = false;
      for (const [typeUrl, names] of byType) queued = s.reoffer(typeUrl, names) || queued;
      if (queued) this.wakeQueue.add(s);
    }
    this.scheduleWake();
  }

  /** The fleet's rejections from its connected streams and its current snapshot. */
  private collectRejections(fleet: string): FleetRejections {
    const snap = this.cache.snapshot(fleet);
    const streams = [...(this.byFleet.get(fleet) ?? [])].filter((s) => s.attached && !s.closed);
    return aggregateRejections(
      fleet,
      streams.map((s) => s.rejectionsView()),
      (typeUrl, name) => snap?.types[typeUrl as keyof typeof snap.types]?.entries.has(name) ?? false,
    );
  }

  /** Number of open streams (all fleets). */
  get streamCount(): number {
    return this.streams.size;
  }

  /** Number of distinct client addresses with open streams. */
  get peerCount(): number {
    return this.admission.peers;
  }

  /**
   * Admits a new call (stream limits, then the client's identity) before it reads a request; a
   * refused call gets its status at once and never holds a slot.
   */
  private track(stream: AdsStream, call: grpc.ServerDuplexStream<unknown, unknown>): void {
    stream.peerAddress = peerAddress(stream.peer);
    const refused = this.admission.admit(stream.peerAddress);
    if (refused) return stream.fail(grpc.status.RESOURCE_EXHAUSTED, refused.details, refused.reason);
    this.streams.add(stream);
    let identity;
    try {
      identity = this.authenticator.identify(call);
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message, peer: stream.peerAddress },
        'xds: identifying a client failed',
      );
    }
    if (!identity) return stream.fail(grpc.status.UNAUTHENTICATED, 'no client identity', 'unauthenticated');
    stream.identity = identity;
    this.armUnknownFleetTimer(stream);
  }

  /** The stream's identity must name `fleet`; otherwise PERMISSION_DENIED, logged and counted. */
  private authorize(stream: AdsStream, node: NodeInfo, fleet: string): Refusal | undefined {
    const identity = stream.identity;
    if (!identity)
      return { code: grpc.status.UNAUTHENTICATED, details: 'no client identity', reason: 'unauthenticated' };
    if (mayServe(identity, fleet)) return undefined;
    this.logger.warn(
      {
        peer: stream.peerAddress,
        nodeId: clip(node.id ?? ''),
        fleet: clip(fleet),
        identity: identity.description,
        allowedFleets: describeFleets(identity),
      },
      'xds: permission denied: the client identity does not name the fleet it asked for',
    );
    return {
      code: grpc.status.PERMISSION_DENIED,
      details: `this client's identity does not allow fleet ${JSON.stringify(clip(fleet))}`,
      reason: 'permission_denied',
    };
  }

  private attach(stream: AdsStream): void {
    let set = this.byFleet.get(stream.fleet!);
    if (!set) {
      set = new Set();
      this.byFleet.set(stream.fleet!, set);
    }
    set.add(stream);
    if (this.cache.hasSnapshot(stream.fleet!)) this.clearUnknownFleetTimer(stream);
    // The fleet's "N of M Envoys" changes.
    if (this.rejectionTracker.hasRejections(stream.fleet!)) this.rejectionTracker.markChanged(stream.fleet!);
  }

  private detach(stream: AdsStream): void {
    if (this.streams.delete(stream)) this.admission.release(stream.peerAddress);
    this.clearUnknownFleetTimer(stream);
    this.wakeQueue.delete(stream);
    if (stream.fleet === undefined) return;
    const set = this.byFleet.get(stream.fleet);
    if (set) {
      set.delete(stream);
      if (set.size === 0) this.byFleet.delete(stream.fleet);
    }
    if (this.rejectionTracker.hasRejections(stream.fleet)) this.rejectionTracker.markChanged(stream.fleet);
  }

  /**
   * Starts the bounded wait of a stream that has no served fleet yet (no first request, or no
   * such Gateway): when it ends the stream is closed, so invented fleet names cannot pin
   * streams (and their memory) forever.
   */
  private armUnknownFleetTimer(stream: AdsStream): void {
    const ms = this.unknownFleetTimeoutMs;
    if (ms === undefined || stream.closed || this.unknownFleetTimers.has(stream)) return;
    const timer = setTimeout(() => {
      this.unknownFleetTimers.delete(stream);
      if (stream.closed || (stream.fleet !== undefined && this.cache.hasSnapshot(stream.fleet))) return;
      const what =
        stream.fleet === undefined
          ? 'no first request with a node arrived'
          : `no Gateway ${JSON.stringify(clip(stream.fleet))} is served by this control plane`;
      stream.fail(grpc.status.NOT_FOUND, `${what} within ${formatDuration(ms)}`, 'unknown_fleet');
    }, ms);
    timer.unref();
    this.unknownFleetTimers.set(stream, timer);
  }

  private clearUnknownFleetTimer(stream: AdsStream): void {
    const t = this.unknownFleetTimers.get(stream);
    if (t === undefined) return;
    clearTimeout(t);
    this.unknownFleetTimers.delete(stream);
  }

  /** Stream counts for the convoy_xds_streams gauge; fleets without a snapshot are "unknown". */
  private streamCounts(): { fleet: string; variant: string; streams: number }[] {
    const counts = new Map<string, { fleet: string; variant: string; streams: number }>();
    for (const [fleet, set] of this.byFleet) {
      const label = this.cache.hasSnapshot(fleet) ? fleet : 'unknown';
      for (const s of set) {
        const key = `${label}\0${s.variant}`;
        const c = counts.get(key) ?? { fleet: label, variant: s.variant, streams: 0 };
        c.streams++;
        counts.set(key, c);
      }
    }
    return [...counts.values()];
  }

  private onFleetChange(change: FleetChange): void {
    if (!change.snapshot) {
      // The fleet is gone: its NACK series go with it, so labels stay bounded by the fleets served.
      for (const type of PUSH_ORDER)
        this.metrics.xdsNacks.remove({ type: typeLabel(type), fleet: change.fleet });
    }
    // A removed resource (or fleet) takes its rejections with it.
    if (this.rejectionTracker.hasRejections(change.fleet)) this.rejectionTracker.markChanged(change.fleet);
    const set = this.byFleet.get(change.fleet);
    if (!set) return;
    if (!change.snapshot) {
      // The Gateway is gone: its Envoys wait at most the timeout for it to come back.
      for (const s of set) this.armUnknownFleetTimer(s);
      return;
    }
    if (change.first) for (const s of set) this.clearUnknownFleetTimer(s);
    // Marking is cheap and done for every stream at once; sending is spread over event-loop turns.
    for (const s of set) {
      s.applyFleetChange(change);
      this.wakeQueue.add(s);
    }
    this.scheduleWake();
  }

  private scheduleWake(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      let n = 0;
      for (const s of this.wakeQueue) {
        this.wakeQueue.delete(s);
        s.pump();
        if (++n >= PUMP_BATCH) break;
      }
      if (this.wakeQueue.size > 0) this.scheduleWake();
    });
  }
}

/** Client-chosen text (node.id, node.cluster) shortened for logs and messages. */
function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
