/**
 * Reads EnvoyFleet parameters (docs/architecture.md §13): the objects a GatewayClass's
 * spec.parametersRef and a Gateway's spec.infrastructure.parametersRef name. The API server (or,
 * in file mode, src/validation) checked their schema; every field is still read as untrusted, and
 * anything unexpected becomes a problem (InvalidParameters), never an exception.
 */
import { isIP } from 'node:net';
import type { KubeObject } from '../store/objects';
import type { StoreView } from './resolved';
import type { EnvoyLogLevel, ServiceType, Toleration, WorkloadKind } from '../model/managed-fleet';
import { FLEET_PARAMETERS_GROUP, FLEET_PARAMETERS_KIND } from '../model/managed-fleet';
import { parseDuration } from '../util/duration';
import { isAbsoluteFilePath } from '../util/file-path';
import { parseHostPort, type HostPort } from '../util/host-port';

/** One vendor-prefixed routability of a class: the Service it gets. */
export interface CustomRoutability {
  name: string;
  serviceType: ServiceType;
  annotations: Record<string, string>;
}

/** The fields of one EnvoyFleet spec that are set; merging takes the Gateway's over the class's. */
export interface FleetParameters {
  managed?: boolean;
  workload: {
    kind?: WorkloadKind;
    replicas?: number;
    image?: string;
    resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
    nodeSelector?: Record<string, string>;
    tolerations?: Toleration[];
    logLevel?: EnvoyLogLevel;
    drainTimeoutSeconds?: number;
  };
  service: {
    type?: ServiceType;
    annotations?: Record<string, string>;
    externalTrafficPolicy?: 'Cluster' | 'Local';
  };
  accessLog?: { format?: 'off' | 'json' | 'text'; path?: string };
  tracing?: { collector?: { host: string; port: number }; samplingPercent?: number };
  routability?: string;
  /** Local Envoy processes only (docs/operations.md §14). */
  local?: { bindAddress?: string };
  /** Class only: the routabilities the class provides, the first being its default. */
  routabilities?: string[];
  /** Class only: how a Private routability is made (a provider preset and/or annotations). */
  privateLoadBalancer?: { provider?: string; annotations?: Record<string, string> };
  /** Class only: vendor-prefixed routabilities. */
  customRoutabilities?: CustomRoutability[];
}

export type ParametersResult = { parameters: FleetParameters } | { problem: string };

const WORKLOAD_KINDS = ['Deployment', 'DaemonSet'];
const SERVICE_TYPES = ['LoadBalancer', 'NodePort', 'ClusterIP'];
const LOG_LEVELS = ['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off'];
const TRAFFIC_POLICIES = ['Cluster', 'Local'];

class Invalid extends Error {}

function record(v: unknown, path: string): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw new Invalid(`${path}: expected an object`);
  return v as Record<string, unknown>;
}

function oneOf<T extends string>(v: unknown, allowed: readonly string[], path: string): T | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !allowed.includes(v))
    throw new Invalid(`${path}: expected one of ${allowed.join(', ')}`);
  return v as T;
}

function stringMap(v: unknown, path: string): Record<string, string> | undefined {
  const r = record(v, path);
  if (!r) return undefined;
  const out: Record<string, string> = {};
  for (const k of Object.keys(r).sort()) {
    if (typeof r[k] !== 'string') throw new Invalid(`${path}.${k}: expected a string`);
    out[k] = r[k] as string;
  }
  return out;
}

function text(v: unknown, path: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v === '') throw new Invalid(`${path}: expected a non-empty string`);
  return v;
}

function tolerations(v: unknown, path: string): Toleration[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new Invalid(`${path}: expected a list`);
  return v.map((t, i) => {
    const r = record(t, `${path}[${i}]`) ?? {};
    const out: Toleration = {};
    for (const k of ['key', 'operator', 'value', 'effect'] as const) {
      if (r[k] !== undefined) out[k] = text(r[k], `${path}[${i}].${k}`);
    }
    if (typeof r.tolerationSeconds === 'number') out.tolerationSeconds = r.tolerationSeconds;
    return out;
  });
}

function workload(v: unknown): FleetParameters['workload'] {
  const w = record(v, 'spec.workload') ?? {};
  const out: FleetParameters['workload'] = {};
  const kind = oneOf<WorkloadKind>(w.kind, WORKLOAD_KINDS, 'spec.workload.kind');
  if (kind) out.kind = kind;
  if (w.replicas !== undefined) {
    if (!Number.isInteger(w.replicas) || (w.replicas as number) < 0 || (w.replicas as number) > 1000)
      throw new Invalid('spec.workload.replicas: expected a whole number from 0 to 1000');
    out.replicas = w.replicas as number;
  }
  const image = text(w.image, 'spec.workload.image');
  if (image) out.image = image;
  const res = record(w.resources, 'spec.workload.resources');
  if (res) {
    const requests = stringMap(res.requests, 'spec.workload.resources.requests');
    const limits = stringMap(res.limits, 'spec.workload.resources.limits');
    out.resources = { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
  }
  const nodeSelector = stringMap(w.nodeSelector, 'spec.workload.nodeSelector');
  if (nodeSelector) out.nodeSelector = nodeSelector;
  const tol = tolerations(w.tolerations, 'spec.workload.tolerations');
  if (tol) out.tolerations = tol;
  const logLevel = oneOf<EnvoyLogLevel>(w.logLevel, LOG_LEVELS, 'spec.workload.logLevel');
  if (logLevel) out.logLevel = logLevel;
  const drain = text(w.drainTimeout, 'spec.workload.drainTimeout');
  if (drain) {
    let ms: number;
    try {
      ms = parseDuration(drain, 'spec.workload.drainTimeout');
    } catch (err) {
      throw new Invalid((err as Error).message);
    }
    if (ms > 3_600_000) throw new Invalid('spec.workload.drainTimeout: at most 1h');
    out.drainTimeoutSeconds = Math.ceil(ms / 1000);
  }
  return out;
}

function customRoutabilities(v: unknown): CustomRoutability[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new Invalid('spec.customRoutabilities: expected a list');
  return v.map((c, i) => {
    const path = `spec.customRoutabilities[${i}]`;
    const r = record(c, path) ?? {};
    const name = text(r.name, `${path}.name`);
    if (!name || !name.includes('/')) throw new Invalid(`${path}.name: expected a vendor-prefixed name`);
    return {
      name,
      serviceType: oneOf<ServiceType>(r.serviceType, SERVICE_TYPES, `${path}.serviceType`) ?? 'LoadBalancer',
      annotations: stringMap(r.annotations, `${path}.annotations`) ?? {},
    };
  });
}

/** Reads spec.accessLog: a format and an absolute file path (Envoy opens it on its host). */
function accessLog(v: unknown): FleetParameters['accessLog'] {
  const r = record(v, 'spec.accessLog');
  if (!r) return undefined;
  const out: NonNullable<FleetParameters['accessLog']> = {};
  // Kubernetes-style names (`off` would be a boolean to YAML 1.1 readers such as kubectl's).
  const named = oneOf<'JSON' | 'Text' | 'None'>(r.format, ['JSON', 'Text', 'None'], 'spec.accessLog.format');
  const format = named && ({ JSON: 'json', Text: 'text', None: 'off' } as const)[named];
  if (format) out.format = format;
  const path = text(r.path, 'spec.accessLog.path');
  if (path !== undefined) {
    if (!isAbsoluteFilePath(path)) throw new Invalid('spec.accessLog.path: expected an absolute file path');
    if (format === 'off') throw new Invalid('spec.accessLog.path: format None takes no file');
    out.path = path;
  }
  return out;
}

/** Reads spec.tracing: the OTLP/gRPC collector as HOST:PORT and the share of requests traced. */
function tracing(v: unknown): FleetParameters['tracing'] {
  const r = record(v, 'spec.tracing');
  if (!r) return undefined;
  const out: NonNullable<FleetParameters['tracing']> = {};
  const collector = text(r.collector, 'spec.tracing.collector');
  if (collector !== undefined) {
    let hostPort: HostPort;
    try {
      hostPort = parseHostPort(collector, 'spec.tracing.collector');
    } catch {
      throw new Invalid('spec.tracing.collector: expected HOST:PORT');
    }
    if (hostPort.port < 1) throw new Invalid('spec.tracing.collector: expected HOST:PORT');
    out.collector = hostPort;
  }
  if (r.samplingPercent !== undefined) {
    const p = r.samplingPercent;
    if (typeof p !== 'number' || !Number.isInteger(p) || p < 0 || p > 100)
      throw new Invalid('spec.tracing.samplingPercent: expected a whole number from 0 to 100');
    out.samplingPercent = p;
  }
  return out;
}

/** Reads spec.local: what only a local Envoy process uses (its listeners' bind address). */
function localParameters(v: unknown): FleetParameters['local'] {
  const r = record(v, 'spec.local');
  if (!r) return undefined;
  const bindAddress = text(r.bindAddress, 'spec.local.bindAddress');
  if (bindAddress !== undefined && isIP(bindAddress) === 0)
    throw new Invalid('spec.local.bindAddress: expected an IPv4 or IPv6 address');
  return bindAddress !== undefined ? { bindAddress } : {};
}

/** Parses an EnvoyFleet's spec into the fields it sets; a problem names the first bad field. */
export function parseFleetParameters(obj: KubeObject): ParametersResult {
  try {
    const spec = record(obj.spec, 'spec') ?? {};
    const svc = record(spec.service, 'spec.service') ?? {};
    const service: FleetParameters['service'] = {};
    const type = oneOf<ServiceType>(svc.type, SERVICE_TYPES, 'spec.service.type');
    if (type) service.type = type;
    const annotations = stringMap(svc.annotations, 'spec.service.annotations');
    if (annotations) service.annotations = annotations;
    const etp = oneOf<'Cluster' | 'Local'>(
      svc.externalTrafficPolicy,
      TRAFFIC_POLICIES,
      'spec.service.externalTrafficPolicy',
    );
    if (etp) service.externalTrafficPolicy = etp;
    const out: FleetParameters = { workload: workload(spec.workload), service };
    if (spec.managed !== undefined) {
      if (typeof spec.managed !== 'boolean') throw new Invalid('spec.managed: expected a boolean');
      out.managed = spec.managed;
    }
    const log = accessLog(spec.accessLog);
    if (log) out.accessLog = log;
    const traces = tracing(spec.tracing);
    if (traces) out.tracing = traces;
    const local = localParameters(spec.local);
    if (local) out.local = local;
    const routability = text(spec.routability, 'spec.routability');
    if (routability) out.routability = routability;
    if (spec.routabilities !== undefined) {
      if (!Array.isArray(spec.routabilities) || spec.routabilities.length === 0)
        throw new Invalid('spec.routabilities: expected a non-empty list');
      out.routabilities = spec.routabilities.map((r, i) => text(r, `spec.routabilities[${i}]`)!);
    }
    const plb = record(spec.privateLoadBalancer, 'spec.privateLoadBalancer');
    if (plb) {
      const provider = text(plb.provider, 'spec.privateLoadBalancer.provider');
      const a = stringMap(plb.annotations, 'spec.privateLoadBalancer.annotations');
      out.privateLoadBalancer = { ...(provider ? { provider } : {}), ...(a ? { annotations: a } : {}) };
    }
    const custom = customRoutabilities(spec.customRoutabilities);
    if (custom) out.customRoutabilities = custom;
    return { parameters: out };
  } catch (err) {
    if (err instanceof Invalid) return { problem: err.message };
    throw err;
  }
}

/** A parametersRef as both GatewayClass (with namespace) and Gateway (without) spell it. */
export interface ParametersRef {
  group?: string;
  kind?: string;
  name?: string;
  namespace?: string;
}

/**
 * Looks up and parses the EnvoyFleet a parametersRef names, in `namespace` (the class's ref must
 * carry one; a Gateway's ref is in the Gateway's namespace).
 */
export function referencedParameters(
  view: StoreView,
  ref: ParametersRef,
  namespace: string | undefined,
  where: string,
): ParametersResult {
  const named = `${where} ${ref.group || 'core'}/${ref.kind} ${ref.name}`;
  if (ref.group !== FLEET_PARAMETERS_GROUP || ref.kind !== FLEET_PARAMETERS_KIND) {
    return {
      problem: `${named}: Convoy reads only ${FLEET_PARAMETERS_KIND} objects of group ${FLEET_PARAMETERS_GROUP}`,
    };
  }
  if (!namespace) return { problem: `${named}: an ${FLEET_PARAMETERS_KIND} is namespaced; set namespace` };
  const obj = view.get(FLEET_PARAMETERS_KIND, namespace, ref.name ?? '');
  if (!obj) return { problem: `${named}: not found in namespace ${namespace}` };
  const parsed = parseFleetParameters(obj);
  return 'problem' in parsed ? { problem: `${named}: ${parsed.problem}` } : parsed;
}
