import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { decodeMessage, messageType } from '../../src/envoy/protos';
import { fields } from '../../src/xds/wire';

/**
 * A small programmable ADS client (SotW and delta) for tests, the fan-out e2e test and benchmarks.
 *
 * It speaks raw bytes on the ADS method paths: requests are encoded with protobufjs, responses are
 * kept as bytes and only their envelope (type, version, nonce, resource names, removed names) is
 * read with a cheap wire scan. `decode: true` also decodes every response fully.
 */

const SOTW_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const DELTA_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources';
const REQ = 'envoy.service.discovery.v3.DiscoveryRequest';
const DELTA_REQ = 'envoy.service.discovery.v3.DeltaDiscoveryRequest';
const RESP = 'envoy.service.discovery.v3.DiscoveryResponse';
const DELTA_RESP = 'envoy.service.discovery.v3.DeltaDiscoveryResponse';

export interface ClientNode {
  id: string;
  cluster: string;
  [key: string]: unknown;
}

export interface AdsClientOptions {
  address: string;
  variant?: 'sotw' | 'delta';
  node: ClientNode;
  /** ACK every response automatically (default true). */
  autoAck?: boolean;
  /** Decides per response: return an error message to NACK it instead of ACKing (needs autoAck). */
  nack?: (r: AdsResponse) => string | undefined;
  /** Fully decode every response into `decoded` (default false). */
  decode?: boolean;
  /** Keep every response in `responses` (default true); otherwise only the latest per type. */
  keepResponses?: boolean;
  /** Put `node` on every request instead of only the first. */
  nodeOnEveryRequest?: boolean;
  credentials?: grpc.ChannelCredentials;
  channelOptions?: grpc.ChannelOptions;
}

export interface AdsResponse {
  /** Sequence number of the response on this client (0-based). */
  seq: number;
  typeUrl: string;
  /** SotW version_info, or delta system_version_info. */
  version: string;
  nonce: string;
  /** Names of the resources in the response, in order. */
  names: string[];
  /** Delta only: per-resource versions. */
  versions: Record<string, string>;
  /** Delta only. */
  removed: string[];
  raw: Buffer;
  receivedAt: number;
  /** Full protobufjs decode (Anys as { '@type', ... }) when `decode` is set. */
  decoded?: Record<string, unknown>;
}

interface SotwTypeState {
  names: string[];
  ackedVersion: string;
  nonce: string;
}

/** Reads the envelope of an encoded (Delta)DiscoveryResponse without decoding resources. */
export function scanResponse(
  raw: Buffer,
  variant: 'sotw' | 'delta',
): Omit<AdsResponse, 'seq' | 'receivedAt' | 'raw'> {
  const str = (s: number, e: number) => raw.toString('utf8', s, e);
  const out = {
    typeUrl: '',
    version: '',
    nonce: '',
    names: [] as string[],
    versions: {} as Record<string, string>,
    removed: [] as string[],
  };
  for (const f of fields(raw)) {
    if (f.wireType !== 2) continue;
    const s = f.start!;
    const e = f.end!;
    switch (f.field) {
      case 1:
        out.version = str(s, e);
        break;
      case 2:
        if (variant === 'sotw') {
          // Any{type_url = 1, value = 2}; every served resource has its name in field 1.
          for (const a of fields(raw, s, e))
            if (a.field === 2) out.names.push(firstString(raw, a.start!, a.end!));
        } else {
          let name = '';
          let version = '';
          for (const r of fields(raw, s, e)) {
            if (r.field === 3) name = str(r.start!, r.end!);
            else if (r.field === 1) version = str(r.start!, r.end!);
          }
          out.names.push(name);
          out.versions[name] = version;
        }
        break;
      case 4:
        out.typeUrl = str(s, e);
        break;
      case 5:
        out.nonce = str(s, e);
        break;
      case 6:
        if (variant === 'delta') out.removed.push(str(s, e));
        break;
    }
  }
  return out;
}

/** Returns field 1 (a string) of the message in raw[start, end), or '' when it has none. */
function firstString(raw: Buffer, start: number, end: number): string {
  for (const f of fields(raw, start, end))
    if (f.field === 1 && f.wireType === 2) return raw.toString('utf8', f.start!, f.end!);
  return '';
}

/** Runs one ADS stream as a simulated Envoy (see the file comment). */
export class AdsClient extends EventEmitter {
  readonly variant: 'sotw' | 'delta';
  readonly responses: AdsResponse[] = [];
  /** Latest response per type URL (kept even when keepResponses is false). */
  readonly latest = new Map<string, AdsResponse>();
  /** Count of responses per type URL. */
  readonly counts = new Map<string, number>();
  /** Resolves with the final status when the stream ends. */
  readonly status: Promise<grpc.StatusObject>;
  private readonly opts: AdsClientOptions;
  private readonly client: grpc.Client;
  private readonly call: grpc.ClientDuplexStream<Buffer, Buffer>;
  private readonly sotw = new Map<string, SotwTypeState>();
  private readonly deltaNames = new Map<string, Set<string>>();
  private nodeSent = false;
  private seq = 0;
  private ended = false;

  constructor(opts: AdsClientOptions) {
    super();
    this.opts = opts;
    this.variant = opts.variant ?? 'sotw';
    this.client = new grpc.Client(opts.address, opts.credentials ?? grpc.credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
      'grpc.max_receive_message_length': -1,
      ...opts.channelOptions,
    });
    const path = this.variant === 'sotw' ? SOTW_PATH : DELTA_PATH;
    this.call = this.client.makeBidiStreamRequest<Buffer, Buffer>(
      path,
      (b) => b,
      (b) => b,
    );
    this.status = new Promise((resolve) => {
      this.call.on('status', (s: grpc.StatusObject) => {
        this.ended = true;
        resolve(s);
        this.emit('status', s);
      });
    });
    this.call.on('error', (err) => this.emit('stream-error', err));
    this.call.on('data', (raw: Buffer) => this.onData(raw));
  }

  static connect(opts: AdsClientOptions): AdsClient {
    return new AdsClient(opts);
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Sends an arbitrary request object (DiscoveryRequest or DeltaDiscoveryRequest fields). */
  send(request: Record<string, unknown>): void {
    const req = { ...request };
    if (!this.nodeSent || this.opts.nodeOnEveryRequest) {
      if (req.node === undefined) req.node = this.opts.node;
      this.nodeSent = true;
    }
    const type = messageType(this.variant === 'sotw' ? REQ : DELTA_REQ);
    this.call.write(Buffer.from(type.encode(type.fromObject(req)).finish()));
  }

  /** Sends raw request bytes. */
  sendRaw(bytes: Buffer): void {
    this.nodeSent = true;
    this.call.write(bytes);
  }

  /**
   * SotW: sets the full name list for a type and sends it (with the last ACKed version and the
   * latest nonce). Delta: subscribes/unsubscribes the difference to the current set.
   * `names` = [] means legacy wildcard on a first request for LDS/CDS.
   */
  subscribe(typeUrl: string, names: string[], initialVersions?: Record<string, string>): void {
    if (this.variant === 'sotw') {
      const st = this.sotwState(typeUrl);
      st.names = [...names];
      this.send({
        type_url: typeUrl,
        resource_names: st.names,
        version_info: st.ackedVersion,
        response_nonce: st.nonce,
      });
      return;
    }
    const cur = this.deltaNames.get(typeUrl);
    const next = new Set(names);
    const sub = cur ? names.filter((n) => !cur.has(n)) : names;
    const unsub = cur ? [...cur].filter((n) => !next.has(n)) : [];
    this.deltaNames.set(typeUrl, next);
    this.send({
      type_url: typeUrl,
      resource_names_subscribe: sub,
      resource_names_unsubscribe: unsub,
      ...(initialVersions && { initial_resource_versions: initialVersions }),
    });
  }

  /** Delta: explicit subscribe/unsubscribe lists. */
  deltaSubscribe(typeUrl: string, subscribe: string[], unsubscribe: string[] = [], nonce = ''): void {
    const cur = this.deltaNames.get(typeUrl) ?? new Set<string>();
    for (const n of subscribe) cur.add(n);
    for (const n of unsubscribe) cur.delete(n);
    this.deltaNames.set(typeUrl, cur);
    this.send({
      type_url: typeUrl,
      resource_names_subscribe: subscribe,
      resource_names_unsubscribe: unsubscribe,
      response_nonce: nonce,
    });
  }

  ack(r: AdsResponse): void {
    if (this.variant === 'sotw') {
      const st = this.sotwState(r.typeUrl);
      st.ackedVersion = r.version;
      st.nonce = r.nonce;
      this.send({
        type_url: r.typeUrl,
        version_info: r.version,
        response_nonce: r.nonce,
        resource_names: st.names,
      });
    } else {
      this.send({ type_url: r.typeUrl, response_nonce: r.nonce });
    }
  }

  nack(r: AdsResponse, message: string): void {
    const error_detail = { code: 3, message };
    if (this.variant === 'sotw') {
      const st = this.sotwState(r.typeUrl);
      st.nonce = r.nonce;
      this.send({
        type_url: r.typeUrl,
        version_info: st.ackedVersion,
        response_nonce: r.nonce,
        resource_names: st.names,
        error_detail,
      });
    } else {
      this.send({ type_url: r.typeUrl, response_nonce: r.nonce, error_detail });
    }
  }

  /** The SotW version last ACKed for a type. */
  ackedVersion(typeUrl: string): string {
    return this.sotw.get(typeUrl)?.ackedVersion ?? '';
  }

  /**
   * Resolves with the first response (at index >= `since` in `responses`, or arriving later) that
   * matches. Rejects after `timeoutMs`.
   */
  waitFor(
    pred: (r: AdsResponse) => boolean,
    opts: { since?: number; timeoutMs?: number } = {},
  ): Promise<AdsResponse> {
    const since = opts.since ?? 0;
    for (const r of this.responses) if (r.seq >= since && pred(r)) return Promise.resolve(r);
    return new Promise((resolve, reject) => {
      const onResponse = (r: AdsResponse) => {
        if (r.seq >= since && pred(r)) {
          cleanup();
          resolve(r);
        }
      };
      const onStatus = (s: grpc.StatusObject) => {
        cleanup();
        reject(new Error(`stream ended (${s.code} ${s.details}) while waiting for a response`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no matching response within ${opts.timeoutMs ?? 10_000} ms`));
      }, opts.timeoutMs ?? 10_000);
      const cleanup = () => {
        clearTimeout(timer);
        this.off('response', onResponse);
        this.off('status', onStatus);
      };
      this.on('response', onResponse);
      this.on('status', onStatus);
    });
  }

  /** The next response of a type after the current end of `responses`. */
  next(typeUrl?: string, timeoutMs = 10_000): Promise<AdsResponse> {
    return this.waitFor((r) => typeUrl === undefined || r.typeUrl === typeUrl, {
      since: this.seq,
      timeoutMs,
    });
  }

  /** Number of responses received so far (the next response's seq). */
  get received(): number {
    return this.seq;
  }

  /**
   * Stops reading responses (like an Envoy that is too busy to read): once grpc-js's small buffer
   * and the HTTP/2 flow-control window are full, the server's writes to this stream stall.
   */
  pause(): void {
    this.call.pause();
  }

  resume(): void {
    this.call.resume();
  }

  /** Half-closes the stream and closes the channel. */
  close(): void {
    if (!this.ended) this.call.end();
    this.client.close();
  }

  /** Cancels the stream abruptly (like a crashed Envoy). */
  cancel(): void {
    this.call.cancel();
    this.client.close();
  }

  private sotwState(typeUrl: string): SotwTypeState {
    let st = this.sotw.get(typeUrl);
    if (!st) {
      st = { names: [], ackedVersion: '', nonce: '' };
      this.sotw.set(typeUrl, st);
    }
    return st;
  }

  private onData(raw: Buffer): void {
    const r: AdsResponse = {
      seq: this.seq++,
      ...scanResponse(raw, this.variant),
      raw,
      receivedAt: Date.now(),
    };
    if (this.opts.decode) r.decoded = decodeMessage(this.variant === 'sotw' ? RESP : DELTA_RESP, raw);
    if (this.opts.keepResponses !== false) this.responses.push(r);
    this.latest.set(r.typeUrl, r);
    this.counts.set(r.typeUrl, (this.counts.get(r.typeUrl) ?? 0) + 1);
    if (this.opts.autoAck !== false) {
      const message = this.opts.nack?.(r);
      if (message !== undefined) this.nack(r, message);
      else this.ack(r);
    } else if (this.variant === 'sotw') {
      // Track the nonce so later subscribe() calls are not stale.
      this.sotwState(r.typeUrl).nonce = r.nonce;
    }
    this.emit('response', r);
  }
}
