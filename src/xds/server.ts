import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import { messageType } from '../envoy/protos';
import type { XdsCache } from './cache';
import { SendBudget } from './budget';
import { releaseDecodedMessageBuffers } from './grpc-decoder-release';
import { DeltaStream } from './delta';
import type { FleetDebug, XdsDebugState } from './debug-state';
import { PUSH_ORDER } from './served-types';
import { decodeSotwRequest } from './request';
import type { FleetChange } from './snapshot';
import { SotwStream } from './sotw';
import type { AdsStream, NodeInfo, StreamContext } from './stream';

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
  cache: XdsCache;
  logger: Logger;
  metrics: ConvoyMetrics;
  /** With `ca`, clients must present a certificate signed by it (mTLS). */
  tls?: { cert: Buffer; key: Buffer; ca?: Buffer };
  /** Node → fleet. Default: `node.cluster`. Returning undefined refuses the stream. */
  fleetOf?: (node: NodeInfo) => string | undefined;
  /** Server-wide cap on response bytes queued in grpc-js and not yet flushed. Default 32 MiB. */
  sendBudgetBytes?: number;
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
 * snapshot of the fleet named by its node (see docs/xds.md).
 */
export class AdsServer {
  private readonly cache: XdsCache;
  private readonly logger: Logger;
  private readonly metrics: ConvoyMetrics;
  private readonly tls: AdsServerOptions['tls'];
  private readonly server: grpc.Server;
  private readonly streams = new Set<AdsStream>();
  private readonly byFleet = new Map<string, Set<AdsStream>>();
  private readonly budget: SendBudget;
  private readonly ctx: StreamContext;
  private readonly unsubscribe: () => void;
  private readonly wakeQueue = new Set<AdsStream>();
  private wakeScheduled = false;
  private readonly stallTimer: NodeJS.Timeout;

  constructor(opts: AdsServerOptions) {
    this.cache = opts.cache;
    this.logger = opts.logger;
    this.metrics = opts.metrics;
    this.tls = opts.tls;
    this.budget = new SendBudget(opts.sendBudgetBytes ?? 32 * 1024 * 1024);
    const fleetOf = opts.fleetOf ?? ((node: NodeInfo) => node.cluster || undefined);
    this.ctx = {
      cache: this.cache,
      logger: this.logger,
      metrics: this.metrics,
      budget: this.budget,
      stallTimeoutMs: opts.stallTimeoutMs ?? 10_000,
      fleetOf,
      attach: (s) => this.attach(s),
      detach: (s) => this.detach(s),
    };
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
        this.track(new SotwStream(this.ctx, call)),
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<unknown, unknown>) =>
        this.track(new DeltaStream(this.ctx, call)),
    });
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
    const creds = this.tls
      ? grpc.ServerCredentials.createSsl(
          this.tls.ca ?? null,
          [{ cert_chain: this.tls.cert, private_key: this.tls.key }],
          this.tls.ca !== undefined,
        )
      : grpc.ServerCredentials.createInsecure();
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, creds, (err, port) => {
        if (err) return reject(err);
        this.logger.info(
          { address, port, tls: !!this.tls, mtls: !!this.tls?.ca },
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
      cache: this.cache.stats(),
      sendBudget: {
        limitBytes: this.budget.limitBytes,
        inflightBytes: this.budget.inflightBytes,
        waitingStreams: this.budget.waiting,
      },
    };
  }

  /** Number of open streams (all fleets). */
  get streamCount(): number {
    return this.streams.size;
  }

  private track(stream: AdsStream): void {
    this.streams.add(stream);
  }

  private attach(stream: AdsStream): void {
    let set = this.byFleet.get(stream.fleet!);
    if (!set) {
      set = new Set();
      this.byFleet.set(stream.fleet!, set);
    }
    set.add(stream);
  }

  private detach(stream: AdsStream): void {
    this.streams.delete(stream);
    this.wakeQueue.delete(stream);
    if (stream.fleet === undefined) return;
    const set = this.byFleet.get(stream.fleet);
    if (set) {
      set.delete(stream);
      if (set.size === 0) this.byFleet.delete(stream.fleet);
    }
  }

  private onFleetChange(change: FleetChange): void {
    const set = this.byFleet.get(change.fleet);
    if (!set) return;
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
