/**
 * Validation of ObjectMeta and of the core kinds Convoy reads (Secret, ConfigMap, Service, EndpointSlice,
 * Namespace): the checks kube-apiserver makes that matter to Convoy, with its messages where
 * practical. Not every core rule is here (e.g. IP family consistency, node ports allocation);
 * what is here is what would otherwise let a malformed object reach the gateway model.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { isPlainObject } from './schema';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const IANA_SVC_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
/** Base64 alphabet with up to two "=" of padding; the length is checked apart (isBase64). */
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

const q = (v: unknown): string => JSON.stringify(v);

/**
 * Whether `v` is padded standard base64 (what a Secret's data holds). A character-class scan
 * plus a length check: one regular expression with a repeated group backtracks per character
 * and overflowed the stack on a 10 MB value.
 */
function isBase64(v: string): boolean {
  return v.length % 4 === 0 && BASE64_CHARS.test(v);
}

export function dns1123Label(path: string, v: string): string[] {
  if (v.length > 63) return [`${path}: Invalid value: ${q(v)}: must be no more than 63 characters`];
  if (!DNS1123_LABEL.test(v)) {
    return [
      `${path}: Invalid value: ${q(v)}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character`,
    ];
  }
  return [];
}

export function dns1123Subdomain(path: string, v: string): string[] {
  if (v.length > 253) return [`${path}: Invalid value: ${q(v)}: must be no more than 253 characters`];
  if (!DNS1123_SUBDOMAIN.test(v)) {
    return [
      `${path}: Invalid value: ${q(v)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
    ];
  }
  return [];
}

function dns1035Label(path: string, v: string): string[] {
  if (v.length > 63) return [`${path}: Invalid value: ${q(v)}: must be no more than 63 characters`];
  if (!DNS1035_LABEL.test(v)) {
    return [
      `${path}: Invalid value: ${q(v)}: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character`,
    ];
  }
  return [];
}

/** Label and annotation keys: optional DNS subdomain prefix, "/", name of ≤ 63 characters. */
function qualifiedName(path: string, key: string): string[] {
  const parts = key.split('/');
  let name = key;
  if (parts.length === 2) {
    if (parts[0] === '') return [`${path}: Invalid value: ${q(key)}: prefix part must be non-empty`];
    const prefixErr = dns1123Subdomain(path, parts[0]);
    if (prefixErr.length)
      return [`${path}: Invalid value: ${q(key)}: prefix part must be a DNS-1123 subdomain`];
    name = parts[1];
  } else if (parts.length > 2) {
    return [
      `${path}: Invalid value: ${q(key)}: a qualified name must consist of alphanumeric characters, '-', '_' or '.', with an optional DNS subdomain prefix and '/'`,
    ];
  }
  if (name.length === 0) return [`${path}: Invalid value: ${q(key)}: name part must be non-empty`];
  if (name.length > 63)
    return [`${path}: Invalid value: ${q(key)}: name part must be no more than 63 characters`];
  if (!QUALIFIED_NAME.test(name)) {
    return [
      `${path}: Invalid value: ${q(key)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    ];
  }
  return [];
}

function stringMap(path: string, v: unknown, errors: string[]): Record<string, string> | undefined {
  if (!isPlainObject(v)) {
    errors.push(`${path}: Invalid value: ${q(typeof v)}: must be an object of strings`);
    return undefined;
  }
  let ok = true;
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string') {
      errors.push(`${path}[${k}]: Invalid value: ${q(val)}: must be a string`);
      ok = false;
    }
  }
  return ok ? (v as Record<string, string>) : undefined;
}

export function validateLabels(path: string, v: unknown, errors: string[]): void {
  const m = stringMap(path, v, errors);
  if (!m) return;
  for (const [k, val] of Object.entries(m)) {
    errors.push(...qualifiedName(path, k));
    if (val.length > 63)
      errors.push(`${path}[${k}]: Invalid value: ${q(val)}: must be no more than 63 characters`);
    else if (!LABEL_VALUE.test(val)) {
      errors.push(
        `${path}[${k}]: Invalid value: ${q(val)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
      );
    }
  }
}

const METADATA_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);
const TOTAL_ANNOTATION_SIZE = 256 * 1024;

export type NameRule = 'subdomain' | 'label' | 'dns1035';

export function validateMetadata(meta: unknown, namespaced: boolean, nameRule: NameRule): string[] {
  const errors: string[] = [];
  if (!isPlainObject(meta)) return ['metadata: Required value'];
  for (const k of Object.keys(meta)) {
    if (!METADATA_FIELDS.has(k) && meta[k] !== null) errors.push(`metadata.${k}: unknown field ${q(k)}`);
  }
  const name = meta.name;
  if (name === undefined || name === null || name === '') {
    errors.push('metadata.name: Required value: name is required (file mode has no generateName)');
  } else if (typeof name !== 'string') {
    errors.push(`metadata.name: Invalid value: ${q(name)}: must be a string`);
  } else {
    const check =
      nameRule === 'label' ? dns1123Label : nameRule === 'dns1035' ? dns1035Label : dns1123Subdomain;
    errors.push(...check('metadata.name', name));
  }
  if (namespaced && meta.namespace !== undefined && meta.namespace !== null) {
    if (typeof meta.namespace !== 'string') {
      errors.push(`metadata.namespace: Invalid value: ${q(meta.namespace)}: must be a string`);
    } else if (meta.namespace !== '') errors.push(...dns1123Label('metadata.namespace', meta.namespace));
  }
  if (meta.labels !== undefined && meta.labels !== null)
    validateLabels('metadata.labels', meta.labels, errors);
  if (meta.annotations !== undefined && meta.annotations !== null) {
    const m = stringMap('metadata.annotations', meta.annotations, errors);
    if (m) {
      let size = 0;
      for (const [k, v] of Object.entries(m)) {
        errors.push(...qualifiedName('metadata.annotations', k));
        size += k.length + v.length;
      }
      if (size > TOTAL_ANNOTATION_SIZE) {
        errors.push(`metadata.annotations: Too long: may not be more than ${TOTAL_ANNOTATION_SIZE} bytes`);
      }
    }
  }
  if (meta.generation !== undefined && meta.generation !== null) {
    if (typeof meta.generation !== 'number' || !Number.isInteger(meta.generation) || meta.generation < 0) {
      errors.push(
        `metadata.generation: Invalid value: ${q(meta.generation)}: must be a non-negative integer`,
      );
    }
  }
  for (const f of ['uid', 'resourceVersion'] as const) {
    if (meta[f] !== undefined && meta[f] !== null && typeof meta[f] !== 'string') {
      errors.push(`metadata.${f}: Invalid value: ${q(meta[f])}: must be a string`);
    }
  }
  for (const f of ['creationTimestamp', 'deletionTimestamp'] as const) {
    const v = meta[f];
    if (v !== undefined && v !== null && (typeof v !== 'string' || Number.isNaN(Date.parse(v)))) {
      errors.push(`metadata.${f}: Invalid value: ${q(v)}: must be an RFC 3339 timestamp`);
    }
  }
  return errors;
}

/** Top-level fields that are not in `allowed` are refused (kubectl's strict field validation). */
export function unknownFields(o: Record<string, unknown>, allowed: string[], path = ''): string[] {
  const errors: string[] = [];
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k) && o[k] !== null)
      errors.push(`${path ? `${path}.` : ''}${k}: unknown field ${q(k)}`);
  }
  return errors;
}

// ---------------------------------------------------------------------------------------------
// Secret

const SECRET_REQUIRED_KEYS: Record<string, string[]> = {
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
};
const MAX_SECRET_SIZE = 1024 * 1024;

export function validateSecret(o: Record<string, unknown>): string[] {
  const errors = unknownFields(o, [
    'apiVersion',
    'kind',
    'metadata',
    'data',
    'stringData',
    'type',
    'immutable',
  ]);
  const type = o.type ?? 'Opaque';
  if (typeof type !== 'string' || type === '') {
    errors.push(`type: Invalid value: ${q(type)}: must be a non-empty string`);
  }
  if (o.immutable !== undefined && o.immutable !== null && typeof o.immutable !== 'boolean') {
    errors.push(`immutable: Invalid value: ${q(o.immutable)}: must be a boolean`);
  }
  if (o.stringData !== undefined && o.stringData !== null) stringMap('stringData', o.stringData, errors);
  let data: Record<string, string> = {};
  if (o.data !== undefined && o.data !== null) {
    const m = stringMap('data', o.data, errors);
    if (m) data = m;
  }
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    if (k.length > 253 || !CONFIG_KEY.test(k) || k === '.' || k === '..') {
      errors.push(
        `data[${k}]: Invalid value: ${q(k)}: a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
      );
    }
    const compact = v.replace(/[\r\n]/g, '');
    if (!isBase64(compact)) {
      errors.push(
        `data[${k}]: Invalid value: "<value omitted>": must be base64-encoded (use stringData for plain text)`,
      );
    } else size += Buffer.from(compact, 'base64').length;
  }
  if (size > MAX_SECRET_SIZE) errors.push(`data: Too long: may not be more than ${MAX_SECRET_SIZE} bytes`);
  if (typeof type === 'string') {
    for (const key of SECRET_REQUIRED_KEYS[type] ?? []) {
      if (data[key] === undefined) errors.push(`data[${key}]: Required value`);
    }
  }
  return errors;
}

// ---------------------------------------------------------------------------------------------
// ConfigMap

const MAX_CONFIGMAP_SIZE = 1024 * 1024;

/** Validates a ConfigMap: data (strings) and binaryData (base64) with valid keys, at most 1 MiB. */
export function validateConfigMap(o: Record<string, unknown>): string[] {
  const errors = unknownFields(o, ['apiVersion', 'kind', 'metadata', 'data', 'binaryData', 'immutable']);
  if (o.immutable !== undefined && o.immutable !== null && typeof o.immutable !== 'boolean') {
    errors.push(`immutable: Invalid value: ${q(o.immutable)}: must be a boolean`);
  }
  let size = 0;
  for (const field of ['data', 'binaryData'] as const) {
    if (o[field] === undefined || o[field] === null) continue;
    const m = stringMap(field, o[field], errors);
    for (const [k, v] of Object.entries(m ?? {})) {
      if (k.length > 253 || !CONFIG_KEY.test(k) || k === '.' || k === '..') {
        errors.push(
          `${field}[${k}]: Invalid value: ${q(k)}: a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
        );
      }
      if (field === 'binaryData' && !isBase64(v.replace(/[\r\n]/g, ''))) {
        errors.push(`binaryData[${k}]: Invalid value: "<value omitted>": must be base64-encoded`);
      }
      size += k.length + v.length;
    }
  }
  if (size > MAX_CONFIGMAP_SIZE) errors.push(`data: Too long: must have at most ${MAX_CONFIGMAP_SIZE} bytes`);
  return errors;
}

// ---------------------------------------------------------------------------------------------
// Service

const SERVICE_SPEC_FIELDS = [
  'allocateLoadBalancerNodePorts',
  'clusterIP',
  'clusterIPs',
  'externalIPs',
  'externalName',
  'externalTrafficPolicy',
  'healthCheckNodePort',
  'internalTrafficPolicy',
  'ipFamilies',
  'ipFamilyPolicy',
  'loadBalancerClass',
  'loadBalancerIP',
  'loadBalancerSourceRanges',
  'ports',
  'publishNotReadyAddresses',
  'selector',
  'sessionAffinity',
  'sessionAffinityConfig',
  'trafficDistribution',
  'type',
];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];

function portNumber(path: string, v: unknown, required: boolean, errors: string[]): void {
  if (v === undefined || v === null) {
    if (required) errors.push(`${path}: Required value`);
    return;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) {
    errors.push(`${path}: Invalid value: ${q(v)}: must be between 1 and 65535, inclusive`);
  }
}

function protocol(path: string, v: unknown, errors: string[]): void {
  if (v !== undefined && v !== null && !PROTOCOLS.includes(v as string)) {
    errors.push(`${path}: Unsupported value: ${q(v)}: supported values: "SCTP", "TCP", "UDP"`);
  }
}

export function validateService(o: Record<string, unknown>): string[] {
  const errors = unknownFields(o, ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  const spec = o.spec ?? {};
  if (!isPlainObject(spec)) return [...errors, `spec: Invalid value: ${q(typeof spec)}: must be an object`];
  errors.push(...unknownFields(spec, SERVICE_SPEC_FIELDS, 'spec'));
  const type = spec.type ?? 'ClusterIP';
  if (!['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'].includes(type as string)) {
    errors.push(
      `spec.type: Unsupported value: ${q(type)}: supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`,
    );
  }
  if (type === 'ExternalName') {
    if (typeof spec.externalName !== 'string' || spec.externalName === '') {
      errors.push('spec.externalName: Required value');
    } else errors.push(...dns1123Subdomain('spec.externalName', spec.externalName.replace(/\.$/, '')));
  }
  if (
    spec.clusterIP !== undefined &&
    spec.clusterIP !== null &&
    spec.clusterIP !== '' &&
    spec.clusterIP !== 'None'
  ) {
    if (typeof spec.clusterIP !== 'string' || (!isIPv4(spec.clusterIP) && !isIPv6(spec.clusterIP))) {
      errors.push(
        `spec.clusterIP: Invalid value: ${q(spec.clusterIP)}: must be a valid IP address or "None"`,
      );
    }
  }
  if (spec.selector !== undefined && spec.selector !== null)
    validateLabels('spec.selector', spec.selector, errors);
  const ports = spec.ports;
  const headless = spec.clusterIP === 'None';
  if (ports === undefined || ports === null || (Array.isArray(ports) && ports.length === 0)) {
    if (type !== 'ExternalName' && !headless) errors.push('spec.ports: Required value');
    return errors;
  }
  if (!Array.isArray(ports))
    return [...errors, `spec.ports: Invalid value: ${q(typeof ports)}: must be a list`];
  const names = new Set<string>();
  const portProto = new Set<string>();
  ports.forEach((p, i) => {
    const path = `spec.ports[${i}]`;
    if (!isPlainObject(p)) {
      errors.push(`${path}: Invalid value: ${q(p)}: must be an object`);
      return;
    }
    errors.push(
      ...unknownFields(p, ['name', 'protocol', 'appProtocol', 'port', 'targetPort', 'nodePort'], path),
    );
    if (p.name === undefined || p.name === null || p.name === '') {
      if (ports.length > 1) errors.push(`${path}.name: Required value`);
    } else if (typeof p.name !== 'string') {
      errors.push(`${path}.name: Invalid value: ${q(p.name)}: must be a string`);
    } else {
      errors.push(...dns1123Label(`${path}.name`, p.name));
      if (names.has(p.name)) errors.push(`${path}.name: Duplicate value: ${q(p.name)}`);
      names.add(p.name);
    }
    portNumber(`${path}.port`, p.port, true, errors);
    protocol(`${path}.protocol`, p.protocol, errors);
    const pp = `${p.port}/${p.protocol ?? 'TCP'}`;
    if (portProto.has(pp)) {
      errors.push(`${path}: Duplicate value: ${q({ port: p.port, protocol: p.protocol ?? 'TCP' })}`);
    }
    portProto.add(pp);
    const tp = p.targetPort;
    if (typeof tp === 'string') {
      if (tp.length > 15 || !IANA_SVC_NAME.test(tp) || !/[a-z]/.test(tp) || tp.includes('--')) {
        errors.push(`${path}.targetPort: Invalid value: ${q(tp)}: must be a port number or an IANA_SVC_NAME`);
      }
    } else if (tp !== undefined && tp !== null) {
      portNumber(`${path}.targetPort`, tp, false, errors);
    }
    if (p.nodePort !== undefined && p.nodePort !== null && p.nodePort !== 0) {
      portNumber(`${path}.nodePort`, p.nodePort, false, errors);
    }
    if (p.appProtocol !== undefined && p.appProtocol !== null && typeof p.appProtocol !== 'string') {
      errors.push(`${path}.appProtocol: Invalid value: ${q(p.appProtocol)}: must be a string`);
    }
  });
  return errors;
}

// ---------------------------------------------------------------------------------------------
// EndpointSlice

const ENDPOINT_FIELDS = [
  'addresses',
  'conditions',
  'hostname',
  'targetRef',
  'deprecatedTopology',
  'nodeName',
  'zone',
  'hints',
];
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;

export function validateEndpointSlice(o: Record<string, unknown>): string[] {
  const errors = unknownFields(o, ['apiVersion', 'kind', 'metadata', 'addressType', 'endpoints', 'ports']);
  const at = o.addressType;
  if (at === undefined || at === null || at === '') errors.push('addressType: Required value');
  else if (!['IPv4', 'IPv6', 'FQDN'].includes(at as string)) {
    errors.push(`addressType: Unsupported value: ${q(at)}: supported values: "FQDN", "IPv4", "IPv6"`);
  }
  const endpoints = o.endpoints ?? [];
  if (!Array.isArray(endpoints))
    errors.push(`endpoints: Invalid value: ${q(typeof endpoints)}: must be a list`);
  else if (endpoints.length > MAX_ENDPOINTS) {
    errors.push(`endpoints: Too many: ${endpoints.length}: must have at most ${MAX_ENDPOINTS} items`);
  } else {
    endpoints.forEach((e, i) => {
      const path = `endpoints[${i}]`;
      if (!isPlainObject(e)) {
        errors.push(`${path}: Invalid value: ${q(e)}: must be an object`);
        return;
      }
      errors.push(...unknownFields(e, ENDPOINT_FIELDS, path));
      const addrs = e.addresses;
      if (!Array.isArray(addrs) || addrs.length === 0) errors.push(`${path}.addresses: Required value`);
      else if (addrs.length > MAX_ADDRESSES) {
        errors.push(`${path}.addresses: Too many: ${addrs.length}: must have at most ${MAX_ADDRESSES} items`);
      } else {
        addrs.forEach((a, j) => {
          const ap = `${path}.addresses[${j}]`;
          const ok =
            typeof a === 'string' &&
            (at === 'IPv4'
              ? isIPv4(a)
              : at === 'IPv6'
                ? isIPv6(a)
                : at === 'FQDN'
                  ? DNS1123_SUBDOMAIN.test(a)
                  : true);
          if (!ok) errors.push(`${ap}: Invalid value: ${q(a)}: must be a valid ${String(at)} address`);
        });
      }
      if (e.conditions !== undefined && e.conditions !== null) {
        if (!isPlainObject(e.conditions)) errors.push(`${path}.conditions: Invalid value: must be an object`);
        else {
          errors.push(
            ...unknownFields(e.conditions, ['ready', 'serving', 'terminating'], `${path}.conditions`),
          );
          for (const c of ['ready', 'serving', 'terminating']) {
            const v = e.conditions[c];
            if (v !== undefined && v !== null && typeof v !== 'boolean') {
              errors.push(`${path}.conditions.${c}: Invalid value: ${q(v)}: must be a boolean`);
            }
          }
        }
      }
      if (e.hostname !== undefined && e.hostname !== null) {
        if (typeof e.hostname !== 'string') errors.push(`${path}.hostname: Invalid value: must be a string`);
        else errors.push(...dns1123Label(`${path}.hostname`, e.hostname));
      }
      for (const f of ['nodeName', 'zone']) {
        if (e[f] !== undefined && e[f] !== null && typeof e[f] !== 'string') {
          errors.push(`${path}.${f}: Invalid value: ${q(e[f])}: must be a string`);
        }
      }
    });
  }
  const ports = o.ports ?? [];
  if (!Array.isArray(ports)) errors.push(`ports: Invalid value: ${q(typeof ports)}: must be a list`);
  else if (ports.length > MAX_PORTS)
    errors.push(`ports: Too many: ${ports.length}: must have at most ${MAX_PORTS} items`);
  else {
    const names = new Set<string>();
    ports.forEach((p, i) => {
      const path = `ports[${i}]`;
      if (!isPlainObject(p)) {
        errors.push(`${path}: Invalid value: ${q(p)}: must be an object`);
        return;
      }
      errors.push(...unknownFields(p, ['name', 'protocol', 'port', 'appProtocol'], path));
      const name = p.name ?? '';
      if (typeof name !== 'string') errors.push(`${path}.name: Invalid value: ${q(name)}: must be a string`);
      else {
        if (name !== '') errors.push(...dns1123Label(`${path}.name`, name));
        if (names.has(name)) errors.push(`${path}.name: Duplicate value: ${q(name)}`);
        names.add(name);
      }
      portNumber(`${path}.port`, p.port, false, errors);
      protocol(`${path}.protocol`, p.protocol, errors);
      if (p.appProtocol !== undefined && p.appProtocol !== null && typeof p.appProtocol !== 'string') {
        errors.push(`${path}.appProtocol: Invalid value: ${q(p.appProtocol)}: must be a string`);
      }
    });
  }
  return errors;
}

// ---------------------------------------------------------------------------------------------
// Namespace

export function validateNamespace(o: Record<string, unknown>): string[] {
  const errors = unknownFields(o, ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  if (o.spec !== undefined && o.spec !== null) {
    if (!isPlainObject(o.spec)) errors.push(`spec: Invalid value: must be an object`);
    else errors.push(...unknownFields(o.spec, ['finalizers'], 'spec'));
  }
  return errors;
}
