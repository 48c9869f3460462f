/**
 * A simulated Envoy for the fan-out benchmarks: one ADS stream (SotW or delta) on its own HTTP/2
 * connection, subscribed the way Envoy subscribes:
 *  - wildcard CDS and LDS first;
 *  - from each CDS response, the EDS names of its clusters; from each LDS response, the RDS names of
 *    its HTTP connection managers and the SDS names of its TLS contexts;
 *  - every response ACKed at once, after the subscriptions it causes were sent.
 *
 * Responses are never fully decoded per client: resource names are read with a wire scan, and the
 * names a Listener or Cluster refers to are decoded once per content and process (memo below),
 * because every simulated Envoy of a process receives the same bytes. Requests are assembled from
 * cached byte blocks (a SotW request repeats every subscribed name; the block is shared).
 */
import * as grpc from '@grpc/grpc-js';
import { messageType } from '../src/envoy/protos';
import { fields, lenField } from '../src/xds/wire';
import { nowMs } from './common';

export const TYPE = {
  LDS: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  RDS: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  CDS: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  EDS: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  SDS: 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret',
} as const;

const SOTW_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const DELTA_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources';
const HCM_TYPE =
  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const DTLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';

export type Variant = 'sotw' | 'delta';

// ------------------------------------------------------------------------------------------------
// Response scanning

interface ScannedResource {
  name: string;
  /** Delta: the resource version. SotW: ''. */
  version: string;
  /** The resource message bytes (Any.value). */
  start: number;
  end: number;
}

interface Scanned {
  typeUrl: string;
  version: string;
  nonce: string;
  resources: ScannedResource[];
  removed: string[];
}

function str(buf: Buffer, s: number, e: number): string {
  return buf.toString('utf8', s, e);
}

/** `Any.value` range inside an Any at [s, e). */
function anyValue(buf: Buffer, s: number, e: number): [number, number] {
  for (const f of fields(buf, s, e)) if (f.field === 2 && f.wireType === 2) return [f.start!, f.end!];
  return [s, s];
}

/** Field 1 (the name of every served resource type) of a message at [s, e). */
function firstStringField(buf: Buffer, s: number, e: number): string {
  for (const f of fields(buf, s, e)) if (f.field === 1 && f.wireType === 2) return str(buf, f.start!, f.end!);
  return '';
}

function scan(raw: Buffer, variant: Variant): Scanned {
  const out: Scanned = { typeUrl: '', version: '', nonce: '', resources: [], removed: [] };
  for (const f of fields(raw)) {
    if (f.wireType !== 2) continue;
    const s = f.start!;
    const e = f.end!;
    switch (f.field) {
      case 1:
        out.version = str(raw, s, e);
        break;
      case 2:
        if (variant === 'sotw') {
          const [vs, ve] = anyValue(raw, s, e);
          out.resources.push({ name: firstStringField(raw, vs, ve), version: '', start: vs, end: ve });
        } else {
          let name = '';
          let version = '';
          let vs = 0;
          let ve = 0;
          for (const r of fields(raw, s, e)) {
            if (r.field === 3) name = str(raw, r.start!, r.end!);
            else if (r.field === 1) version = str(raw, r.start!, r.end!);
            else if (r.field === 2) [vs, ve] = anyValue(raw, r.start!, r.end!);
          }
          out.resources.push({ name, version, start: vs, end: ve });
        }
        break;
      case 4:
        out.typeUrl = str(raw, s, e);
        break;
      case 5:
        out.nonce = str(raw, s, e);
        break;
      case 6:
        if (variant === 'delta') out.removed.push(str(raw, s, e));
        break;
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// What a Listener or Cluster refers to, decoded once per content per process

interface Refs {
  rds: string[];
  sds: string[];
}

const listenerRefsMemo = new Map<string, Refs>();
const clusterEdsMemo = new Map<string, string>();

interface AnyMsg {
  type_url?: string;
  value?: Uint8Array;
}

function listenerRefs(bytes: Buffer): Refs {
  const listener = messageType('envoy.config.listener.v3.Listener').decode(bytes) as unknown as {
    filter_chains?: {
      filters?: { typed_config?: AnyMsg }[];
      transport_socket?: { typed_config?: AnyMsg };
    }[];
    default_filter_chain?: unknown;
  };
  const hcmType = messageType(HCM_TYPE.slice(HCM_TYPE.indexOf('/') + 1));
  const dtlsType = messageType(DTLS_TYPE.slice(DTLS_TYPE.indexOf('/') + 1));
  const rds = new Set<string>();
  const sds = new Set<string>();
  for (const fc of listener.filter_chains ?? []) {
    for (const f of fc.filters ?? []) {
      if (f.typed_config?.type_url === HCM_TYPE && f.typed_config.value) {
        const hcm = hcmType.decode(f.typed_config.value) as unknown as {
          rds?: { route_config_name?: string };
        };
        if (hcm.rds?.route_config_name) rds.add(hcm.rds.route_config_name);
      }
    }
    const ts = fc.transport_socket?.typed_config;
    if (ts?.type_url === DTLS_TYPE && ts.value) {
      const ctx = dtlsType.decode(ts.value) as unknown as {
        common_tls_context?: { tls_certificate_sds_secret_configs?: { name?: string }[] };
      };
      for (const c of ctx.common_tls_context?.tls_certificate_sds_secret_configs ?? [])
        if (c.name) sds.add(c.name);
    }
  }
  return { rds: [...rds].sort(), sds: [...sds].sort() };
}

function clusterEds(bytes: Buffer, name: string): string {
  const c = messageType('envoy.config.cluster.v3.Cluster').decode(bytes) as unknown as {
    type?: number;
    eds_cluster_config?: { service_name?: string };
  };
  // Cluster.DiscoveryType EDS = 3
  if (c.type !== 3 && !c.eds_cluster_config) return '';
  return c.eds_cluster_config?.service_name || name;
}

/** Memo key of one resource's content: the delta version, or the SotW type version + name. */
function contentKey(sc: Scanned, r: ScannedResource, raw: Buffer): string {
  if (r.version) return `${r.name}\0${r.version}`;
  if (sc.version) return `${r.name}\0${sc.version}`;
  return `${r.name}\0${raw.subarray(r.start, r.end).toString('base64')}`;
}

// ------------------------------------------------------------------------------------------------
// Request encoding from shared blocks

const namesBlocks = new WeakMap<readonly string[], Buffer>();

/** `repeated string resource_names(_subscribe) = 3`, encoded once per names array. */
function namesBlock(names: readonly string[]): Buffer {
  let b = namesBlocks.get(names);
  if (!b) {
    b = Buffer.concat(names.map((n) => lenField(3, n)));
    namesBlocks.set(names, b);
  }
  return b;
}

const typeFields = new Map<string, Buffer>();
function cachedField(field: number, value: string): Buffer {
  const k = `${field}\0${value}`;
  let b = typeFields.get(k);
  if (!b) {
    b = lenField(field, value);
    typeFields.set(k, b);
  }
  return b;
}

/** DiscoveryRequest: version_info 1, node 2, resource_names 3, type_url 4, response_nonce 5. */
function sotwRequest(
  typeUrl: string,
  names: readonly string[],
  version: string,
  nonce: string,
  node?: Buffer,
): Buffer {
  const parts: Buffer[] = [];
  if (version) parts.push(lenField(1, version));
  if (node) parts.push(lenField(2, node));
  if (names.length) parts.push(namesBlock(names));
  parts.push(cachedField(4, typeUrl));
  if (nonce) parts.push(lenField(5, nonce));
  return Buffer.concat(parts);
}

/**
 * DeltaDiscoveryRequest: node 1, type_url 2, resource_names_subscribe 3,
 * resource_names_unsubscribe 4, response_nonce 6.
 */
function deltaRequest(
  typeUrl: string,
  subscribe: readonly string[],
  unsubscribe: readonly string[],
  nonce: string,
  node?: Buffer,
): Buffer {
  const parts: Buffer[] = [];
  if (node) parts.push(lenField(1, node));
  parts.push(cachedField(2, typeUrl));
  if (subscribe.length) parts.push(namesBlock(subscribe));
  if (unsubscribe.length) parts.push(Buffer.concat(unsubscribe.map((n) => lenField(4, n))));
  if (nonce) parts.push(lenField(6, nonce));
  return Buffer.concat(parts);
}

/** Union of names arrays, memoized on the identity of the inputs (shared across clients). */
const unionMemo = new Map<string, string[]>();
const arrayIds = new WeakMap<readonly string[], number>();
let nextArrayId = 1;
function arrayId(a: readonly string[]): number {
  let id = arrayIds.get(a);
  if (id === undefined) {
    id = nextArrayId++;
    arrayIds.set(a, id);
  }
  return id;
}
function union(arrays: readonly (readonly string[])[]): readonly string[] {
  if (arrays.length === 1) return arrays[0];
  const key = arrays.map(arrayId).join(',');
  let u = unionMemo.get(key);
  if (!u) {
    const s = new Set<string>();
    for (const a of arrays) for (const n of a) s.add(n);
    u = [...s].sort();
    if (unionMemo.size > 1000) unionMemo.clear();
    unionMemo.set(key, u);
  }
  return u;
}

/** Names in `next` not in `prev`, and in `prev` not in `next`; memoized per array pair. */
const diffMemo = new WeakMap<readonly string[], WeakMap<readonly string[], [string[], string[]]>>();
function diff(prev: readonly string[], next: readonly string[]): [string[], string[]] {
  let inner = diffMemo.get(prev);
  if (!inner) {
    inner = new WeakMap();
    diffMemo.set(prev, inner);
  }
  let d = inner.get(next);
  if (!d) {
    const p = new Set(prev);
    const n = new Set(next);
    d = [next.filter((x) => !p.has(x)), prev.filter((x) => !n.has(x))];
    inner.set(next, d);
  }
  return d;
}

const EMPTY: readonly string[] = Object.freeze([]);

// ------------------------------------------------------------------------------------------------
// The simulated Envoy

export interface Expectation {
  typeUrl: string;
  name: string;
  /**
   * Met when the resource goes instead: a delta response removes it, or a state-of-the-world
   * response of its type no longer lists it (only Listener and Cluster responses list them all).
   */
  removed?: boolean;
}

export interface ArmStats {
  bytes: number;
  responses: number;
  resources: Record<string, number>;
  /** Time the last expected response was ACKed (absolute ms), once every expectation is met. */
  doneAt?: number;
  /** Time the first response carrying an expected resource arrived (absolute ms). */
  firstAt?: number;
}

/** PEM material for mTLS to the control plane (Convoy's default; docs/security.md §2). */
export interface SimTls {
  ca: string;
  cert: string;
  key: string;
}

export class SimEnvoy {
  readonly connectedAt = nowMs();
  syncedAt?: number;
  totalBytes = 0;
  totalResponses = 0;
  ended = false;
  error?: string;
  private readonly client: grpc.Client;
  private readonly call: grpc.ClientDuplexStream<Buffer, Buffer>;
  private readonly node: Buffer;
  private nodeSent = false;
  /** SotW per type: subscribed names, last ACKed version, last nonce. */
  private readonly sotw = new Map<string, { names: readonly string[]; version: string; nonce: string }>();
  /** Delta per type: current explicit subscription. */
  private readonly deltaSubs = new Map<string, readonly string[]>();
  /** Per listener / cluster name: what it refers to. */
  private readonly listenerRefs = new Map<string, Refs>();
  private readonly clusterEds = new Map<string, string>();
  private rdsNames: readonly string[] = EMPTY;
  private sdsNames: readonly string[] = EMPTY;
  private edsNames: readonly string[] = EMPTY;
  /** Names subscribed but not received yet, per named type. */
  private readonly pending = new Map<string, Set<string>>([
    [TYPE.RDS, new Set()],
    [TYPE.SDS, new Set()],
    [TYPE.EDS, new Set()],
  ]);
  private readonly acked = new Set<string>();
  private arm?: { id: number; expect: Expectation[]; met: boolean[]; stats: ArmStats };

  constructor(
    readonly id: string,
    readonly variant: Variant,
    address: string,
    fleet: string,
    private readonly onSynced: (s: SimEnvoy) => void,
    private readonly onDone: (s: SimEnvoy) => void,
    tls?: SimTls,
  ) {
    this.node = Buffer.from(
      messageType('envoy.config.core.v3.Node')
        .encode({ id, cluster: fleet, user_agent_name: 'envoy', locality: { zone: 'bench' } })
        .finish(),
    );
    const credentials = tls
      ? grpc.credentials.createSsl(Buffer.from(tls.ca), Buffer.from(tls.key), Buffer.from(tls.cert))
      : grpc.credentials.createInsecure();
    this.client = new grpc.Client(address, credentials, {
      'grpc.use_local_subchannel_pool': 1,
      'grpc.max_receive_message_length': -1,
      'grpc.max_send_message_length': -1,
    });
    this.call = this.client.makeBidiStreamRequest<Buffer, Buffer>(
      variant === 'sotw' ? SOTW_PATH : DELTA_PATH,
      (b) => b,
      (b) => b,
    );
    this.call.on('data', (raw: Buffer) => {
      try {
        this.onResponse(raw);
      } catch (e) {
        this.error = (e as Error).message;
      }
    });
    this.call.on('error', (e: Error) => {
      if (!this.ended) this.error = e.message;
    });
    this.call.on('status', () => (this.ended = true));
    // Envoy asks for clusters first, then listeners; both as (legacy) wildcard.
    this.subscribeNamed(TYPE.CDS, EMPTY, true);
    this.subscribeNamed(TYPE.LDS, EMPTY, true);
  }

  close(): void {
    this.ended = true;
    this.call.end();
    this.client.close();
  }

  /** Starts watching for responses that contain every expected (type, name). */
  setArm(id: number, expect: Expectation[]): void {
    this.arm = { id, expect, met: expect.map(() => false), stats: { bytes: 0, responses: 0, resources: {} } };
  }

  armStats(): ArmStats | undefined {
    return this.arm?.stats;
  }

  private write(bytes: Buffer): void {
    this.call.write(bytes);
  }

  private nodeOnce(): Buffer | undefined {
    if (this.nodeSent) return undefined;
    this.nodeSent = true;
    return this.node;
  }

  /** Replaces the subscription of a type (SotW: full list; delta: the difference). */
  private subscribeNamed(typeUrl: string, names: readonly string[], initial = false): void {
    if (this.variant === 'sotw') {
      const st = this.sotw.get(typeUrl) ?? { names: EMPTY, version: '', nonce: '' };
      if (!initial && st.names === names) return;
      st.names = names;
      this.sotw.set(typeUrl, st);
      this.write(sotwRequest(typeUrl, names, st.version, st.nonce, this.nodeOnce()));
      return;
    }
    const prev = this.deltaSubs.get(typeUrl) ?? EMPTY;
    if (!initial && prev === names) return;
    this.deltaSubs.set(typeUrl, names);
    const [sub, unsub] = initial ? [names as string[], []] : diff(prev, names);
    if (!initial && sub.length === 0 && unsub.length === 0) return;
    this.write(deltaRequest(typeUrl, sub, unsub, '', this.nodeOnce()));
  }

  private setNamed(typeUrl: string, names: readonly string[], current: readonly string[]): readonly string[] {
    if (names === current) return current;
    const pending = this.pending.get(typeUrl)!;
    const [added, removed] = diff(current, names);
    for (const n of added) pending.add(n);
    for (const n of removed) pending.delete(n);
    this.subscribeNamed(typeUrl, names);
    return names;
  }

  private ack(typeUrl: string, sc: Scanned): void {
    if (this.variant === 'sotw') {
      const st = this.sotw.get(typeUrl) ?? { names: EMPTY, version: '', nonce: '' };
      st.version = sc.version;
      st.nonce = sc.nonce;
      this.sotw.set(typeUrl, st);
      this.write(sotwRequest(typeUrl, st.names, st.version, st.nonce));
    } else {
      this.write(deltaRequest(typeUrl, EMPTY, EMPTY, sc.nonce));
    }
    this.acked.add(typeUrl);
  }

  private onResponse(raw: Buffer): void {
    const sc = scan(raw, this.variant);
    this.totalBytes += raw.length;
    this.totalResponses++;
    const type = sc.typeUrl;
    if (type === TYPE.LDS) this.learnListeners(sc, raw);
    else if (type === TYPE.CDS) this.learnClusters(sc, raw);
    else {
      const pending = this.pending.get(type);
      if (pending && pending.size) for (const r of sc.resources) pending.delete(r.name);
      if (pending && pending.size) for (const n of sc.removed) pending.delete(n);
    }
    this.ack(type, sc);
    const t = nowMs();
    this.noteArm(sc, raw.length, t);
    if (this.syncedAt === undefined && this.isSynced()) {
      this.syncedAt = t;
      this.onSynced(this);
    }
  }

  private learnListeners(sc: Scanned, raw: Buffer): void {
    if (this.variant === 'sotw') this.listenerRefs.clear();
    for (const n of sc.removed) this.listenerRefs.delete(n);
    for (const r of sc.resources) {
      const key = contentKey(sc, r, raw);
      let refs = listenerRefsMemo.get(key);
      if (!refs) {
        refs = listenerRefs(raw.subarray(r.start, r.end));
        listenerRefsMemo.set(key, refs);
      }
      this.listenerRefs.set(r.name, refs);
    }
    const all = [...this.listenerRefs.keys()].sort().map((n) => this.listenerRefs.get(n)!);
    // SDS first, then RDS, as Envoy initialises TLS contexts before the HCM's route provider.
    this.sdsNames = this.setNamed(TYPE.SDS, union(all.map((r) => r.sds)), this.sdsNames);
    this.rdsNames = this.setNamed(TYPE.RDS, union(all.map((r) => r.rds)), this.rdsNames);
  }

  private learnClusters(sc: Scanned, raw: Buffer): void {
    if (this.variant === 'sotw') this.clusterEds.clear();
    for (const n of sc.removed) this.clusterEds.delete(n);
    for (const r of sc.resources) {
      const key = contentKey(sc, r, raw);
      let eds = clusterEdsMemo.get(key);
      if (eds === undefined) {
        eds = clusterEds(raw.subarray(r.start, r.end), r.name);
        clusterEdsMemo.set(key, eds);
      }
      this.clusterEds.set(r.name, eds);
    }
    const key = this.variant === 'sotw' ? `sotw\0${sc.version}` : '';
    let names: readonly string[] | undefined = key ? edsListMemo.get(key) : undefined;
    if (!names) {
      const fresh = [...new Set([...this.clusterEds.values()].filter(Boolean))].sort();
      if (key) edsListMemo.set(key, fresh);
      names = fresh;
    }
    // Keep the same array when nothing changed, so no request is sent.
    if (names.length === this.edsNames.length && names.every((n, i) => n === this.edsNames[i]))
      names = this.edsNames;
    this.edsNames = this.setNamed(TYPE.EDS, names, this.edsNames);
  }

  private isSynced(): boolean {
    if (!this.acked.has(TYPE.LDS) || !this.acked.has(TYPE.CDS)) return false;
    for (const p of this.pending.values()) if (p.size) return false;
    return true;
  }

  private noteArm(sc: Scanned, bytes: number, t: number): void {
    const a = this.arm;
    if (!a) return;
    a.stats.bytes += bytes;
    a.stats.responses++;
    a.stats.resources[sc.typeUrl] = (a.stats.resources[sc.typeUrl] ?? 0) + sc.resources.length;
    if (a.stats.doneAt !== undefined) return;
    for (let i = 0; i < a.expect.length; i++) {
      if (a.met[i] || a.expect[i].typeUrl !== sc.typeUrl) continue;
      const { name, removed } = a.expect[i];
      const listed = sc.resources.some((r) => r.name === name);
      if (removed ? sc.removed.includes(name) || (this.variant === 'sotw' && !listed) : listed) {
        a.met[i] = true;
        a.stats.firstAt ??= t;
      }
    }
    if (a.met.every(Boolean)) {
      a.stats.doneAt = t;
      this.onDone(this);
    }
  }
}

const edsListMemo = new Map<string, readonly string[]>();
