/**
 * Objects a Kubernetes cluster with the Gateway API v1.6.1 standard CRDs refuses (with kubectl's
 * default strict field validation), and so must Convoy's file mode. Exported for the cross-check
 * against a real kube-apiserver: `expectFieldPath` is the field path kube-apiserver names (for a
 * CEL rule on a list, the list itself); Convoy's message starts with that path, sometimes made
 * more precise (`spec.listeners` → `spec.listeners[1]`). `expectMessage`, when present, is a
 * substring of the message (the CRD's own text for CEL rules).
 *
 * Plain data, no Convoy imports except the valid bases in ./fixtures.
 */
import type { Json } from './fixtures';
import {
  backendTLSPolicy,
  endpointSlice,
  gateway,
  gatewayClass,
  grpcRoute,
  httpRoute,
  listenerSet,
  namespace,
  referenceGrant,
  service,
  tlsRoute,
  tlsSecret,
} from './fixtures';

export interface InvalidFixture {
  description: string;
  object: Json;
  expectFieldPath: string;
  expectMessage?: string;
}

/** Marks a field for deletion in `edit`. */
export const DELETE = Symbol('delete');

/**
 * Returns a copy of base with fields replaced: keys are paths like `spec.listeners[0].port`
 * (keys containing dots cannot be addressed; replace their parent). Intermediate objects and
 * arrays must exist; an index one past the end appends.
 */
export function edit(base: Json, changes: Record<string, unknown>): Json {
  const o = structuredClone(base);
  for (const [path, value] of Object.entries(changes)) {
    const parts = path.match(/[^.[\]]+/g) ?? [];
    let cur = o as Record<string, unknown>;
    for (const p of parts.slice(0, -1)) {
      const next = cur[p];
      if (next === undefined || next === null || typeof next !== 'object')
        throw new Error(`no ${p} in ${path}`);
      cur = next as Record<string, unknown>;
    }
    const last = parts[parts.length - 1];
    if (value === DELETE) {
      if (Array.isArray(cur)) cur.splice(Number(last), 1);
      else delete cur[last];
    } else cur[last] = value;
  }
  return o;
}

const repeat = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

const minimalGateway = (listeners: unknown[]): Json =>
  edit(gateway(), { 'spec.listeners': listeners, 'spec.addresses': DELETE, 'spec.tls': DELETE });
const minimalListenerSet = (listeners: unknown[]): Json =>
  edit(listenerSet(), { 'spec.listeners': listeners });
const http = (name: string, port = 80, extra: Json = {}) => ({ name, port, protocol: 'HTTP', ...extra });
const routeRule = (rule: Json): Json => edit(httpRoute(), { 'spec.rules': [rule] });
const routeFilters = (filters: unknown[], extra: Json = {}): Json => routeRule({ filters, ...extra });
const grpcRule = (rule: Json): Json => edit(grpcRoute(), { 'spec.rules': [rule] });
const headerSet = (name: string) => ({ name, value: 'v' });
const extRef = { group: 'example.com', kind: 'X', name: 'x' };
/** A label/annotation key whose DNS prefix is exactly 253 characters. */
const longPrefixKey = `${'a'.repeat(63)}.`.repeat(3) + 'a'.repeat(61) + '/x';

const gatewayFixtures: InvalidFixture[] = [
  {
    description: 'listener port 0',
    object: edit(gateway(), { 'spec.listeners[0].port': 0 }),
    expectFieldPath: 'spec.listeners[0].port',
  },
  {
    description: 'listener port above 65535',
    object: edit(gateway(), { 'spec.listeners[0].port': 65536 }),
    expectFieldPath: 'spec.listeners[0].port',
    expectMessage: 'less than or equal to 65535',
  },
  {
    description: 'listener port as a string',
    object: edit(gateway(), { 'spec.listeners[0].port': '80' }),
    expectFieldPath: 'spec.listeners[0].port',
    expectMessage: 'must be of type integer',
  },
  {
    description: 'listener without protocol',
    object: edit(gateway(), { 'spec.listeners[0].protocol': DELETE }),
    expectFieldPath: 'spec.listeners[0].protocol',
    expectMessage: 'Required value',
  },
  {
    description: 'listener protocol with a space',
    object: edit(gateway(), { 'spec.listeners[0].protocol': 'HT TP' }),
    expectFieldPath: 'spec.listeners[0].protocol',
  },
  {
    description: 'no gatewayClassName',
    object: edit(gateway(), { 'spec.gatewayClassName': DELETE }),
    expectFieldPath: 'spec.gatewayClassName',
    expectMessage: 'Required value',
  },
  {
    description: 'empty listener list',
    object: edit(gateway(), { 'spec.listeners': [] }),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'at least 1 items',
  },
  {
    description: '65 listeners',
    object: minimalGateway(repeat(65, (i) => http(`l${i}`, 1000 + i))),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'must have at most 64 items',
  },
  {
    description: 'listener name with capitals and underscore',
    object: edit(gateway(), { 'spec.listeners[0].name': 'HTTP_1' }),
    expectFieldPath: 'spec.listeners[0].name',
    expectMessage: 'should match',
  },
  {
    description: 'listener hostname with capitals',
    object: edit(gateway(), { 'spec.listeners[1].hostname': 'Foo.example.com' }),
    expectFieldPath: 'spec.listeners[1].hostname',
  },
  {
    description: 'listener hostname with a wildcard that is not the first label',
    object: edit(gateway(), { 'spec.listeners[1].hostname': 'a.*.example.com' }),
    expectFieldPath: 'spec.listeners[1].hostname',
  },
  {
    description: 'listener hostname longer than 253 characters',
    object: edit(gateway(), { 'spec.listeners[1].hostname': `${'a'.repeat(60)}.`.repeat(5) + 'com' }),
    expectFieldPath: 'spec.listeners[1].hostname',
    expectMessage: 'Too long',
  },
  {
    description: 'empty listener hostname',
    object: edit(gateway(), { 'spec.listeners[0].hostname': '' }),
    expectFieldPath: 'spec.listeners[0].hostname',
  },
  {
    description: 'two listeners with the same name',
    object: minimalGateway([http('web', 80), http('web', 81)]),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'Listener name must be unique within the Gateway',
  },
  {
    description: 'tls on an HTTP listener',
    object: minimalGateway([http('web', 80, { tls: { certificateRefs: [{ name: 'c' }] } })]),
    expectFieldPath: 'spec.listeners',
    expectMessage: "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
  },
  {
    description: 'tls on a TCP listener',
    object: minimalGateway([{ name: 't', port: 9000, protocol: 'TCP', tls: { mode: 'Passthrough' } }]),
    expectFieldPath: 'spec.listeners',
    expectMessage: "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
  },
  {
    description: 'HTTPS listener with tls mode Passthrough',
    object: minimalGateway([{ name: 's', port: 443, protocol: 'HTTPS', tls: { mode: 'Passthrough' } }]),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'tls mode must be Terminate for protocol HTTPS',
  },
  {
    description: 'TLS listener without tls',
    object: minimalGateway([{ name: 't', port: 443, protocol: 'TLS' }]),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'tls mode must be set for protocol TLS',
  },
  {
    description: 'TCP listener with a hostname',
    object: minimalGateway([{ name: 't', port: 9000, protocol: 'TCP', hostname: 'a.example.com' }]),
    expectFieldPath: 'spec.listeners',
    expectMessage: "hostname must not be specified for protocols ['TCP', 'UDP']",
  },
  {
    description: 'UDP listener with a hostname',
    object: minimalGateway([{ name: 'u', port: 53, protocol: 'UDP', hostname: 'dns.example.com' }]),
    expectFieldPath: 'spec.listeners',
    expectMessage: "hostname must not be specified for protocols ['TCP', 'UDP']",
  },
  {
    description: 'two listeners with the same port, protocol and hostname',
    object: minimalGateway([
      http('a', 80, { hostname: 'x.example.com' }),
      http('b', 80, { hostname: 'x.example.com' }),
    ]),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'Combination of port, protocol and hostname must be unique for each listener',
  },
  {
    description: 'two listeners with the same port and protocol and no hostname',
    object: minimalGateway([http('a', 80), http('b', 80)]),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'Combination of port, protocol and hostname must be unique for each listener',
  },
  {
    description: 'HTTPS listener with tls but neither certificateRefs nor options',
    object: minimalGateway([{ name: 's', port: 443, protocol: 'HTTPS', tls: {} }]),
    expectFieldPath: 'spec.listeners[0].tls',
    expectMessage: 'certificateRefs or options must be specified when mode is Terminate',
  },
  {
    description: 'TLS Terminate listener with an empty certificateRefs list',
    object: minimalGateway([
      { name: 't', port: 443, protocol: 'TLS', tls: { mode: 'Terminate', certificateRefs: [] } },
    ]),
    expectFieldPath: 'spec.listeners[0].tls',
    expectMessage: 'certificateRefs or options must be specified when mode is Terminate',
  },
  {
    description: 'unknown tls mode',
    object: edit(gateway(), { 'spec.listeners[3].tls.mode': 'Reencrypt' }),
    expectFieldPath: 'spec.listeners[3].tls.mode',
    expectMessage: 'Unsupported value',
  },
  {
    description: '65 certificateRefs',
    object: edit(gateway(), {
      'spec.listeners[1].tls.certificateRefs': repeat(65, (i) => ({ name: `c${i}` })),
    }),
    expectFieldPath: 'spec.listeners[1].tls.certificateRefs',
    expectMessage: 'must have at most 64 items',
  },
  {
    description: 'certificateRef without name',
    object: edit(gateway(), { 'spec.listeners[1].tls.certificateRefs[0].name': DELETE }),
    expectFieldPath: 'spec.listeners[1].tls.certificateRefs[0].name',
    expectMessage: 'Required value',
  },
  {
    description: '17 tls options',
    object: edit(gateway(), {
      'spec.listeners[2].tls.options': Object.fromEntries(repeat(17, (i) => [`example.com/o${i}`, 'v'])),
    }),
    expectFieldPath: 'spec.listeners[2].tls.options',
    expectMessage: 'must have at most 16 items',
  },
  {
    description: 'allowedRoutes.namespaces.from not in the enum',
    object: edit(gateway(), { 'spec.listeners[0].allowedRoutes.namespaces.from': 'Everywhere' }),
    expectFieldPath: 'spec.listeners[0].allowedRoutes.namespaces.from',
    expectMessage: 'Unsupported value',
  },
  {
    description: '9 allowedRoutes kinds',
    object: edit(gateway(), {
      'spec.listeners[0].allowedRoutes.kinds': repeat(9, (i) => ({ kind: `K${i}` })),
    }),
    expectFieldPath: 'spec.listeners[0].allowedRoutes.kinds',
    expectMessage: 'must have at most 8 items',
  },
  {
    description: 'unknown listener field',
    object: edit(gateway(), { 'spec.listeners[0].timeout': '5s' }),
    expectFieldPath: 'spec.listeners[0].timeout',
    expectMessage: 'unknown field',
  },
  {
    description: 'IPAddress address that is not an IP',
    object: edit(gateway(), { 'spec.addresses[0].value': 'not-an-ip' }),
    expectFieldPath: 'spec.addresses[0]',
  },
  {
    description: 'duplicate IPAddress values',
    object: edit(gateway(), { 'spec.addresses[1].value': '10.0.0.1' }),
    expectFieldPath: 'spec.addresses',
    expectMessage: 'IPAddress values must be unique',
  },
  {
    description: 'duplicate Hostname values',
    object: edit(gateway(), { 'spec.addresses[4]': { type: 'Hostname', value: 'lb.example.com' } }),
    expectFieldPath: 'spec.addresses',
    expectMessage: 'Hostname values must be unique',
  },
  {
    description: 'Hostname address with invalid characters',
    object: edit(gateway(), { 'spec.addresses[2].value': 'lb_1.example.com' }),
    expectFieldPath: 'spec.addresses[2]',
    expectMessage: 'Hostname value must be empty or contain only valid characters',
  },
  {
    description: '17 addresses',
    object: edit(gateway(), { 'spec.addresses': repeat(17, (i) => ({ value: `10.0.1.${i}` })) }),
    expectFieldPath: 'spec.addresses',
    expectMessage: 'must have at most 16 items',
  },
  {
    description: 'infrastructure label key with two slashes',
    object: edit(gateway(), { 'spec.infrastructure.labels': { 'a/b/c': 'x' } }),
    expectFieldPath: 'spec.infrastructure.labels',
    expectMessage: 'Label keys must be in the form of an optional DNS subdomain prefix',
  },
  {
    description: 'infrastructure label key prefix of 253 characters',
    object: edit(gateway(), { 'spec.infrastructure.labels': { [longPrefixKey]: 'x' } }),
    expectFieldPath: 'spec.infrastructure.labels',
    expectMessage:
      "If specified, the label key's prefix must be a DNS subdomain not longer than 253 characters in total.",
  },
  {
    description: 'infrastructure annotation key with a space',
    object: edit(gateway(), { 'spec.infrastructure.annotations': { 'bad key': 'x' } }),
    expectFieldPath: 'spec.infrastructure.annotations',
    expectMessage: 'Annotation keys must be in the form of an optional DNS subdomain prefix',
  },
  {
    description: 'infrastructure annotation key prefix of 253 characters',
    object: edit(gateway(), { 'spec.infrastructure.annotations': { [longPrefixKey]: 'x' } }),
    expectFieldPath: 'spec.infrastructure.annotations',
    expectMessage:
      "If specified, the annotation key's prefix must be a DNS subdomain not longer than 253 characters",
  },
  {
    description: '9 infrastructure labels',
    object: edit(gateway(), {
      'spec.infrastructure.labels': Object.fromEntries(repeat(9, (i) => [`k${i}`, 'v'])),
    }),
    expectFieldPath: 'spec.infrastructure.labels',
    expectMessage: 'must have at most 8 items',
  },
  {
    description: 'infrastructure label value with a space',
    object: edit(gateway(), { 'spec.infrastructure.labels': { k: 'a b' } }),
    expectFieldPath: 'spec.infrastructure.labels[k]',
  },
  {
    description: 'allowedListeners.namespaces.from not in the enum',
    object: edit(gateway(), { 'spec.allowedListeners.namespaces.from': 'Any' }),
    expectFieldPath: 'spec.allowedListeners.namespaces.from',
    expectMessage: 'Unsupported value',
  },
  {
    description: 'tls.frontend.perPort with a repeated port',
    object: edit(gateway(), {
      'spec.tls.frontend.perPort[1]': {
        port: 443,
        tls: { validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'x' }] } },
      },
    }),
    expectFieldPath: 'spec.tls.frontend.perPort',
    expectMessage: 'Port for TLS configuration must be unique within the Gateway',
  },
  {
    description: 'tls.frontend without default',
    object: edit(gateway(), { 'spec.tls.frontend.default': DELETE }),
    expectFieldPath: 'spec.tls.frontend.default',
    expectMessage: 'Required value',
  },
  {
    description: 'frontend validation with no caCertificateRefs',
    object: edit(gateway(), { 'spec.tls.frontend.default.validation.caCertificateRefs': [] }),
    expectFieldPath: 'spec.tls.frontend.default.validation.caCertificateRefs',
  },
  {
    description: 'Gateway without spec',
    object: edit(gateway(), { spec: DELETE }),
    expectFieldPath: 'spec',
    expectMessage: 'Required value',
  },
  {
    description: 'Gateway with an apiVersion that is not served',
    object: edit(gateway(), { apiVersion: 'gateway.networking.k8s.io/v1alpha2' }),
    expectFieldPath: 'apiVersion',
  },
  {
    description: 'Gateway name with capitals',
    object: edit(gateway(), { 'metadata.name': 'My_Gateway' }),
    expectFieldPath: 'metadata.name',
  },
  {
    description: 'Gateway namespace with a dot',
    object: edit(gateway(), { 'metadata.namespace': 'team.a' }),
    expectFieldPath: 'metadata.namespace',
  },
  {
    description: 'label value longer than 63 characters',
    object: edit(gateway(), { 'metadata.labels.app': 'a'.repeat(64) }),
    expectFieldPath: 'metadata.labels',
  },
  {
    description: 'unknown top-level field',
    object: edit(gateway(), { specs: {} }),
    expectFieldPath: 'specs',
    expectMessage: 'unknown field',
  },
];

const listenerSetFixtures: InvalidFixture[] = [
  {
    description: 'ListenerSet without parentRef',
    object: edit(listenerSet(), { 'spec.parentRef': DELETE }),
    expectFieldPath: 'spec.parentRef',
    expectMessage: 'Required value',
  },
  {
    description: 'ListenerSet listener without port',
    object: edit(listenerSet(), { 'spec.listeners[0].port': DELETE }),
    expectFieldPath: 'spec.listeners[0].port',
    expectMessage: 'Required value',
  },
  {
    description: 'ListenerSet listener port 0 (dynamic ports were removed)',
    object: edit(listenerSet(), { 'spec.listeners[0].port': 0 }),
    expectFieldPath: 'spec.listeners[0].port',
  },
  {
    description: 'ListenerSet with no listeners',
    object: edit(listenerSet(), { 'spec.listeners': [] }),
    expectFieldPath: 'spec.listeners',
  },
  {
    description: 'ListenerSet with 65 listeners',
    object: minimalListenerSet(repeat(65, (i) => http(`l${i}`, 1000 + i))),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'must have at most 64 items',
  },
  {
    description: 'ListenerSet listeners with the same name',
    object: minimalListenerSet([http('a', 80), http('a', 81)]),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'Listener name must be unique within the Gateway',
  },
  {
    description: 'ListenerSet listeners with the same port, protocol and hostname',
    object: minimalListenerSet([
      http('a', 80, { hostname: 'h.example.com' }),
      http('b', 80, { hostname: 'h.example.com' }),
    ]),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'Combination of port, protocol and hostname must be unique for each listener',
  },
  {
    description: 'ListenerSet TCP listener with a hostname',
    object: minimalListenerSet([{ name: 't', port: 9000, protocol: 'TCP', hostname: 'a.example.com' }]),
    expectFieldPath: 'spec.listeners',
    expectMessage: "hostname must not be specified for protocols ['TCP', 'UDP']",
  },
  {
    description: 'ListenerSet UDP listener with tls',
    object: minimalListenerSet([{ name: 'u', port: 53, protocol: 'UDP', tls: { mode: 'Passthrough' } }]),
    expectFieldPath: 'spec.listeners',
    expectMessage: "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
  },
  {
    description: 'ListenerSet HTTPS listener in Passthrough mode',
    object: minimalListenerSet([{ name: 's', port: 443, protocol: 'HTTPS', tls: { mode: 'Passthrough' } }]),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'tls mode must be Terminate for protocol HTTPS',
  },
  {
    description: 'ListenerSet TLS listener without tls',
    object: minimalListenerSet([{ name: 't', port: 443, protocol: 'TLS' }]),
    expectFieldPath: 'spec.listeners',
    expectMessage: 'tls mode must be set for protocol TLS',
  },
  {
    description: 'ListenerSet HTTPS listener with tls {}',
    object: minimalListenerSet([{ name: 's', port: 443, protocol: 'HTTPS', tls: {} }]),
    expectFieldPath: 'spec.listeners[0].tls',
    expectMessage: 'certificateRefs or options must be specified when mode is Terminate',
  },
  {
    description: 'ListenerSet parentRef kind starting with a digit',
    object: edit(listenerSet(), { 'spec.parentRef.kind': '1Gateway' }),
    expectFieldPath: 'spec.parentRef.kind',
  },
  {
    description: 'ListenerSet parentRef without name',
    object: edit(listenerSet(), { 'spec.parentRef.name': DELETE }),
    expectFieldPath: 'spec.parentRef.name',
    expectMessage: 'Required value',
  },
];

const pathCases: [string, string, string][] = [
  ['relative path', 'foo', "value must be an absolute path and start with '/'"],
  ['path with //', '/a//b', "must not contain '//'"],
  ['path with /./', '/a/./b', "must not contain '/./'"],
  ['path with /../', '/a/../b', "must not contain '/../'"],
  ['path with %2f', '/a%2fb', "must not contain '%2f'"],
  ['path with %2F', '/a%2Fb', "must not contain '%2F'"],
  ['path with #', '/a#b', "must not contain '#'"],
  ['path ending with /..', '/a/..', "must not end with '/..'"],
  ['path ending with /.', '/a/.', "must not end with '/.'"],
  ['path with a space', '/a b', 'must only contain valid characters'],
];

const httpFilterBodies: [string, string, Json][] = [
  ['CORS', 'cors', { allowOrigins: ['*'] }],
  ['RequestHeaderModifier', 'requestHeaderModifier', { set: [headerSet('a')] }],
  ['ResponseHeaderModifier', 'responseHeaderModifier', { set: [headerSet('a')] }],
  ['RequestMirror', 'requestMirror', { backendRef: { name: 'm', port: 80 } }],
  ['RequestRedirect', 'requestRedirect', { statusCode: 302 }],
  ['URLRewrite', 'urlRewrite', { hostname: 'a.example.com' }],
  ['ExtensionRef', 'extensionRef', extRef],
];

/** Filter-type consistency fixtures: type without its field, and field under another type. */
function filterTypeFixtures(
  bodies: [string, string, Json][],
  make: (filters: unknown[]) => Json,
  prefix: string,
  other: [string, string, Json],
  otherForOther: [string, string, Json],
): InvalidFixture[] {
  return bodies.flatMap(([type, field, body]) => {
    const [otherType, otherField, otherBody] = type === other[0] ? otherForOther : other;
    return [
      {
        description: `${prefix}${type} filter without its ${field} field`,
        object: make([{ type }]),
        expectFieldPath: 'spec.rules[0].filters[0]',
        expectMessage: `filter.${field} must be specified for ${type} filter.type`,
      },
      {
        description: `${prefix}${field} set on a ${otherType} filter`,
        object: make([{ type: otherType, [otherField]: otherBody, [field]: body }]),
        expectFieldPath: 'spec.rules[0].filters[0]',
        expectMessage: `filter.${field} must be nil if the filter.type is not ${type}`,
      },
    ];
  });
}

const httpRouteFixtures: InvalidFixture[] = [
  ...pathCases.map(([d, value, msg]) => ({
    description: `PathPrefix match: ${d}`,
    object: edit(httpRoute(), { 'spec.rules[0].matches[0].path.value': value }),
    expectFieldPath: 'spec.rules[0].matches[0].path',
    expectMessage: msg,
  })),
  {
    description: 'Exact match with a relative path',
    object: edit(httpRoute(), { 'spec.rules[0].matches[1].path.value': 'exact' }),
    expectFieldPath: 'spec.rules[0].matches[1].path',
    expectMessage:
      "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
  },
  {
    description: 'path match type not in the enum',
    object: edit(httpRoute(), { 'spec.rules[0].matches[0].path.type': 'Prefix' }),
    expectFieldPath: 'spec.rules[0].matches[0].path.type',
    expectMessage: 'Unsupported value',
  },
  {
    description: 'path match type not in the enum (CRD rule)',
    object: edit(httpRoute(), { 'spec.rules[0].matches[0].path.type': 'Prefix' }),
    expectFieldPath: 'spec.rules[0].matches[0].path',
    expectMessage: "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']",
  },
  {
    description: 'path longer than 1024 characters',
    object: edit(httpRoute(), { 'spec.rules[0].matches[0].path.value': '/' + 'a'.repeat(1024) }),
    expectFieldPath: 'spec.rules[0].matches[0].path.value',
    expectMessage: 'Too long',
  },
  {
    description: 'RequestRedirect and URLRewrite in one rule',
    object: routeFilters([
      { type: 'RequestRedirect', requestRedirect: { hostname: 'a.example.com' } },
      { type: 'URLRewrite', urlRewrite: { hostname: 'b.example.com' } },
    ]),
    expectFieldPath: 'spec.rules[0].filters',
    expectMessage:
      'May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both',
  },
  ...httpFilterBodies
    .filter(([type]) => !['RequestMirror', 'ExtensionRef'].includes(type))
    .map(([type, field, body]) => ({
      description: `${type} filter twice`,
      object: routeFilters([
        { type, [field]: body },
        { type, [field]: body },
      ]),
      expectFieldPath: 'spec.rules[0].filters',
      expectMessage: `${type} filter cannot be repeated`,
    })),
  ...filterTypeFixtures(
    httpFilterBodies,
    (filters) => routeFilters(filters),
    '',
    ['ExtensionRef', 'extensionRef', extRef],
    ['CORS', 'cors', { allowOrigins: ['*'] }],
  ),
  {
    description: 'filter without type',
    object: routeFilters([{ requestHeaderModifier: { set: [headerSet('a')] } }]),
    expectFieldPath: 'spec.rules[0].filters[0].type',
    expectMessage: 'Required value',
  },
  {
    description: 'filter type not in the enum (experimental ExternalAuth)',
    object: routeFilters([{ type: 'ExternalAuth' }]),
    expectFieldPath: 'spec.rules[0].filters[0].type',
    expectMessage: 'Unsupported value',
  },
  {
    description: 'RequestRedirect filter together with backendRefs',
    object: routeFilters([{ type: 'RequestRedirect', requestRedirect: { hostname: 'a.example.com' } }], {
      backendRefs: [{ name: 'svc', port: 80 }],
    }),
    expectFieldPath: 'spec.rules[0]',
    expectMessage: 'RequestRedirect filter must not be used together with backendRefs',
  },
  {
    description: 'RequestRedirect ReplacePrefixMatch with an Exact match',
    object: routeFilters(
      [
        {
          type: 'RequestRedirect',
          requestRedirect: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/n' } },
        },
      ],
      { matches: [{ path: { type: 'Exact', value: '/o' } }] },
    ),
    expectFieldPath: 'spec.rules[0]',
    expectMessage:
      'When using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
  },
  {
    description: 'URLRewrite ReplacePrefixMatch with two matches',
    object: routeFilters(
      [
        {
          type: 'URLRewrite',
          urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/n' } },
        },
      ],
      { matches: [{ path: { value: '/a' } }, { path: { value: '/b' } }] },
    ),
    expectFieldPath: 'spec.rules[0]',
    expectMessage:
      'When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
  },
  {
    description: 'backendRef RequestRedirect ReplacePrefixMatch with a RegularExpression match',
    object: routeRule({
      matches: [{ path: { type: 'RegularExpression', value: '/o.*' } }],
      backendRefs: [
        {
          name: 'svc',
          port: 80,
          filters: [
            {
              type: 'RequestRedirect',
              requestRedirect: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/n' } },
            },
          ],
        },
      ],
    }),
    expectFieldPath: 'spec.rules[0]',
    expectMessage:
      'Within backendRefs, when using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
  },
  {
    description: 'backendRef URLRewrite ReplacePrefixMatch with an Exact match',
    object: routeRule({
      matches: [{ path: { type: 'Exact', value: '/o' } }],
      backendRefs: [
        {
          name: 'svc',
          port: 80,
          filters: [
            {
              type: 'URLRewrite',
              urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/n' } },
            },
          ],
        },
      ],
    }),
    expectFieldPath: 'spec.rules[0]',
    expectMessage:
      'Within backendRefs, When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
  },
  {
    description: 'ReplaceFullPath without replaceFullPath',
    object: routeFilters([{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplaceFullPath' } } }]),
    expectFieldPath: 'spec.rules[0].filters[0].urlRewrite.path',
    expectMessage: "replaceFullPath must be specified when type is set to 'ReplaceFullPath'",
  },
  {
    description: 'replaceFullPath with type ReplacePrefixMatch',
    object: routeFilters([
      {
        type: 'URLRewrite',
        urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/a', replaceFullPath: '/b' } },
      },
    ]),
    expectFieldPath: 'spec.rules[0].filters[0].urlRewrite.path',
    expectMessage: "type must be 'ReplaceFullPath' when replaceFullPath is set",
  },
  {
    description: 'ReplacePrefixMatch without replacePrefixMatch (redirect)',
    object: routeFilters([
      { type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplacePrefixMatch' } } },
    ]),
    expectFieldPath: 'spec.rules[0].filters[0].requestRedirect.path',
    expectMessage: "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'",
  },
  {
    description: 'replacePrefixMatch with type ReplaceFullPath (redirect)',
    object: routeFilters([
      {
        type: 'RequestRedirect',
        requestRedirect: {
          path: { type: 'ReplaceFullPath', replaceFullPath: '/a', replacePrefixMatch: '/b' },
        },
      },
    ]),
    expectFieldPath: 'spec.rules[0].filters[0].requestRedirect.path',
    expectMessage: "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set",
  },
  {
    description: 'redirect status code 305',
    object: routeFilters([{ type: 'RequestRedirect', requestRedirect: { statusCode: 305 } }]),
    expectFieldPath: 'spec.rules[0].filters[0].requestRedirect.statusCode',
    expectMessage: 'Unsupported value',
  },
  {
    description: 'redirect scheme ftp',
    object: routeFilters([{ type: 'RequestRedirect', requestRedirect: { scheme: 'ftp' } }]),
    expectFieldPath: 'spec.rules[0].filters[0].requestRedirect.scheme',
  },
  {
    description: 'redirect to a wildcard hostname',
    object: routeFilters([{ type: 'RequestRedirect', requestRedirect: { hostname: '*.example.com' } }]),
    expectFieldPath: 'spec.rules[0].filters[0].requestRedirect.hostname',
  },
  {
    description: 'redirect port 0',
    object: routeFilters([{ type: 'RequestRedirect', requestRedirect: { port: 0 } }]),
    expectFieldPath: 'spec.rules[0].filters[0].requestRedirect.port',
  },
  {
    description: 'mirror with percent and fraction',
    object: routeFilters([
      {
        type: 'RequestMirror',
        requestMirror: { backendRef: { name: 'm', port: 80 }, percent: 5, fraction: { numerator: 1 } },
      },
    ]),
    expectFieldPath: 'spec.rules[0].filters[0].requestMirror',
    expectMessage: 'Only one of percent or fraction may be specified in HTTPRequestMirrorFilter',
  },
  {
    description: 'mirror fraction above the default denominator',
    object: routeFilters([
      {
        type: 'RequestMirror',
        requestMirror: { backendRef: { name: 'm', port: 80 }, fraction: { numerator: 101 } },
      },
    ]),
    expectFieldPath: 'spec.rules[0].filters[0].requestMirror.fraction',
    expectMessage: 'numerator must be less than or equal to denominator',
  },
  {
    description: 'mirror percent 101',
    object: routeFilters([
      { type: 'RequestMirror', requestMirror: { backendRef: { name: 'm', port: 80 }, percent: 101 } },
    ]),
    expectFieldPath: 'spec.rules[0].filters[0].requestMirror.percent',
  },
  {
    description: 'mirror to a Service without port',
    object: routeFilters([{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'm' } } }]),
    expectFieldPath: 'spec.rules[0].filters[0].requestMirror.backendRef',
    expectMessage: 'Must have port for Service reference',
  },
  {
    description: "CORS allowOrigins with '*' and another origin",
    object: routeFilters([{ type: 'CORS', cors: { allowOrigins: ['*', 'https://a.example.com'] } }]),
    expectFieldPath: 'spec.rules[0].filters[0].cors.allowOrigins',
    expectMessage: "AllowOrigins cannot contain '*' alongside other origins",
  },
  {
    description: "CORS allowMethods with '*' and GET",
    object: routeFilters([{ type: 'CORS', cors: { allowMethods: ['*', 'GET'] } }]),
    expectFieldPath: 'spec.rules[0].filters[0].cors.allowMethods',
    expectMessage: "AllowMethods cannot contain '*' alongside other methods",
  },
  {
    description: "CORS allowHeaders with '*' and another header",
    object: routeFilters([{ type: 'CORS', cors: { allowHeaders: ['*', 'x-a'] } }]),
    expectFieldPath: 'spec.rules[0].filters[0].cors.allowHeaders',
    expectMessage: "AllowHeaders cannot contain '*' alongside other methods",
  },
  {
    description: 'CORS origin with an ftp scheme',
    object: routeFilters([{ type: 'CORS', cors: { allowOrigins: ['ftp://a.example.com'] } }]),
    expectFieldPath: 'spec.rules[0].filters[0].cors.allowOrigins[0]',
  },
  {
    description: 'CORS maxAge 0',
    object: routeFilters([{ type: 'CORS', cors: { maxAge: 0 } }]),
    expectFieldPath: 'spec.rules[0].filters[0].cors.maxAge',
  },
  {
    description: 'CORS allowMethods with a repeated method',
    object: routeFilters([{ type: 'CORS', cors: { allowMethods: ['GET', 'GET'] } }]),
    expectFieldPath: 'spec.rules[0].filters[0].cors.allowMethods[1]',
    expectMessage: 'Duplicate value',
  },
  {
    description: 'header modifier setting one header twice',
    object: routeFilters([
      { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [headerSet('x'), headerSet('x')] } },
    ]),
    expectFieldPath: 'spec.rules[0].filters[0].requestHeaderModifier.set[1]',
    expectMessage: 'Duplicate value',
  },
  {
    description: 'header modifier removing one header twice',
    object: routeFilters([
      { type: 'ResponseHeaderModifier', responseHeaderModifier: { remove: ['x', 'x'] } },
    ]),
    expectFieldPath: 'spec.rules[0].filters[0].responseHeaderModifier.remove[1]',
    expectMessage: 'Duplicate value',
  },
  {
    description: 'header modifier adding an empty value',
    object: routeFilters([
      { type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'x', value: '' }] } },
    ]),
    expectFieldPath: 'spec.rules[0].filters[0].requestHeaderModifier.add[0].value',
  },
  {
    description: 'header modifier with 17 set entries',
    object: routeFilters([
      {
        type: 'RequestHeaderModifier',
        requestHeaderModifier: { set: repeat(17, (i) => headerSet(`h${i}`)) },
      },
    ]),
    expectFieldPath: 'spec.rules[0].filters[0].requestHeaderModifier.set',
    expectMessage: 'must have at most 16 items',
  },
  {
    description: 'extensionRef without group',
    object: routeFilters([{ type: 'ExtensionRef', extensionRef: { kind: 'X', name: 'x' } }]),
    expectFieldPath: 'spec.rules[0].filters[0].extensionRef.group',
    expectMessage: 'Required value',
  },
  {
    description: '17 filters',
    object: routeFilters(
      repeat(17, (i) => ({ type: 'ExtensionRef', extensionRef: { ...extRef, name: `x${i}` } })),
    ),
    expectFieldPath: 'spec.rules[0].filters',
    expectMessage: 'must have at most 16 items',
  },
  {
    description: 'one header name twice in a match',
    object: edit(httpRoute(), { 'spec.rules[0].matches[0].headers[1].name': 'x-version' }),
    expectFieldPath: 'spec.rules[0].matches[0].headers[1]',
    expectMessage: 'Duplicate value',
  },
  {
    description: 'header match name with a space',
    object: edit(httpRoute(), { 'spec.rules[0].matches[0].headers[0].name': 'x version' }),
    expectFieldPath: 'spec.rules[0].matches[0].headers[0].name',
  },
  {
    description: 'header match without value',
    object: edit(httpRoute(), { 'spec.rules[0].matches[0].headers[0].value': DELETE }),
    expectFieldPath: 'spec.rules[0].matches[0].headers[0].value',
    expectMessage: 'Required value',
  },
  {
    description: 'header match type not in the enum',
    object: edit(httpRoute(), { 'spec.rules[0].matches[0].headers[0].type': 'Prefix' }),
    expectFieldPath: 'spec.rules[0].matches[0].headers[0].type',
  },
  {
    description: '17 header matches',
    object: edit(httpRoute(), { 'spec.rules[0].matches[0].headers': repeat(17, (i) => headerSet(`h${i}`)) }),
    expectFieldPath: 'spec.rules[0].matches[0].headers',
    expectMessage: 'must have at most 16 items',
  },
  {
    description: 'one query parameter twice in a match',
    object: edit(httpRoute(), { 'spec.rules[0].matches[0].queryParams[1]': { name: 'q', value: '2' } }),
    expectFieldPath: 'spec.rules[0].matches[0].queryParams[1]',
    expectMessage: 'Duplicate value',
  },
  {
    description: 'method FETCH',
    object: edit(httpRoute(), { 'spec.rules[0].matches[0].method': 'FETCH' }),
    expectFieldPath: 'spec.rules[0].matches[0].method',
    expectMessage: 'Unsupported value',
  },
  {
    description: 'backendRequest timeout longer than request timeout',
    object: edit(httpRoute(), { 'spec.rules[0].timeouts': { request: '10s', backendRequest: '1m' } }),
    expectFieldPath: 'spec.rules[0].timeouts',
    expectMessage: 'backendRequest timeout cannot be longer than request timeout',
  },
  {
    description: 'timeout without a unit',
    object: edit(httpRoute(), { 'spec.rules[0].timeouts.request': '10' }),
    expectFieldPath: 'spec.rules[0].timeouts.request',
  },
  {
    description: 'timeout in days',
    object: edit(httpRoute(), { 'spec.rules[0].timeouts.backendRequest': '1d' }),
    expectFieldPath: 'spec.rules[0].timeouts.backendRequest',
  },
  {
    description: 'backendRef to a Service without port',
    object: edit(httpRoute(), { 'spec.rules[0].backendRefs[0].port': DELETE }),
    expectFieldPath: 'spec.rules[0].backendRefs[0]',
    expectMessage: 'Must have port for Service reference',
  },
  {
    description: 'backendRef with an explicit empty group and kind Service without port',
    object: edit(httpRoute(), { 'spec.rules[0].backendRefs[0]': { group: '', kind: 'Service', name: 's' } }),
    expectFieldPath: 'spec.rules[0].backendRefs[0]',
    expectMessage: 'Must have port for Service reference',
  },
  {
    description: 'backendRef weight -1',
    object: edit(httpRoute(), { 'spec.rules[0].backendRefs[0].weight': -1 }),
    expectFieldPath: 'spec.rules[0].backendRefs[0].weight',
  },
  {
    description: 'backendRef weight above 1000000',
    object: edit(httpRoute(), { 'spec.rules[0].backendRefs[0].weight': 1000001 }),
    expectFieldPath: 'spec.rules[0].backendRefs[0].weight',
  },
  {
    description: 'backendRef namespace with capitals',
    object: edit(httpRoute(), { 'spec.rules[0].backendRefs[1].namespace': 'Other' }),
    expectFieldPath: 'spec.rules[0].backendRefs[1].namespace',
  },
  {
    description: '17 backendRefs',
    object: edit(httpRoute(), {
      'spec.rules[0].backendRefs': repeat(17, (i) => ({ name: `s${i}`, port: 80 })),
    }),
    expectFieldPath: 'spec.rules[0].backendRefs',
    expectMessage: 'must have at most 16 items',
  },
  {
    description: 'backendRef filter twice (RequestHeaderModifier)',
    object: edit(httpRoute(), {
      'spec.rules[0].backendRefs[1].filters[1]': {
        type: 'RequestHeaderModifier',
        requestHeaderModifier: { set: [headerSet('y')] },
      },
    }),
    expectFieldPath: 'spec.rules[0].backendRefs[1].filters',
    expectMessage: 'RequestHeaderModifier filter cannot be repeated',
  },
  {
    description: '17 hostnames',
    object: edit(httpRoute(), { 'spec.hostnames': repeat(17, (i) => `h${i}.example.com`) }),
    expectFieldPath: 'spec.hostnames',
    expectMessage: 'must have at most 16 items',
  },
  {
    description: 'hostname with capitals',
    object: edit(httpRoute(), { 'spec.hostnames[0]': 'WWW.example.com' }),
    expectFieldPath: 'spec.hostnames[0]',
  },
  {
    description: 'hostname with a port',
    object: edit(httpRoute(), { 'spec.hostnames[0]': 'www.example.com:8080' }),
    expectFieldPath: 'spec.hostnames[0]',
  },
  {
    description: 'empty rules list',
    object: edit(httpRoute(), { 'spec.rules': [] }),
    expectFieldPath: 'spec.rules',
  },
  {
    description: '17 rules',
    object: edit(httpRoute(), {
      'spec.rules': repeat(17, () => ({ backendRefs: [{ name: 's', port: 80 }] })),
    }),
    expectFieldPath: 'spec.rules',
    expectMessage: 'must have at most 16 items',
  },
  {
    description: '65 matches in one rule',
    object: routeRule({ matches: repeat(65, (i) => ({ path: { type: 'Exact', value: `/m${i}` } })) }),
    expectFieldPath: 'spec.rules[0].matches',
    expectMessage: 'must have at most 64 items',
  },
  {
    description: '129 matches across rules',
    object: edit(httpRoute(), {
      'spec.rules': repeat(3, (r) => ({
        matches: repeat(43, (i) => ({ path: { type: 'Exact', value: `/r${r}/m${i}` } })),
      })),
    }),
    expectFieldPath: 'spec.rules',
    expectMessage: 'the total number of matches across all rules in a route must be less than 128',
  },
  {
    description: 'rule name with capitals',
    object: edit(httpRoute(), { 'spec.rules[0].name': 'Main' }),
    expectFieldPath: 'spec.rules[0].name',
  },
  {
    description: 'retry (experimental channel): attempts below 1',
    object: edit(httpRoute(), { 'spec.rules[0].retry': { attempts: 0 } }),
    expectFieldPath: 'spec.rules[0].retry.attempts',
  },
  {
    description: 'retry (experimental channel): a code outside 400-599',
    object: edit(httpRoute(), { 'spec.rules[0].retry': { codes: [500, 600] } }),
    expectFieldPath: 'spec.rules[0].retry.codes[1]',
  },
  {
    description: 'retry (experimental channel): a backoff that is not a Gateway API duration',
    object: edit(httpRoute(), { 'spec.rules[0].retry': { backoff: '1.5s' } }),
    expectFieldPath: 'spec.rules[0].retry.backoff',
  },
  {
    description: 'retry (experimental channel): an unknown field inside it',
    object: edit(httpRoute(), { 'spec.rules[0].retry': { attempts: 2, budget: 3 } }),
    expectFieldPath: 'spec.rules[0].retry',
    expectMessage: 'unknown field',
  },
  {
    description: '33 parentRefs',
    object: edit(httpRoute(), { 'spec.parentRefs': repeat(33, (i) => ({ name: `gw${i}` })) }),
    expectFieldPath: 'spec.parentRefs',
    expectMessage: 'must have at most 32 items',
  },
  {
    description: 'same parent twice, once with and once without sectionName',
    object: edit(httpRoute(), { 'spec.parentRefs': [{ name: 'gw' }, { name: 'gw', sectionName: 'http' }] }),
    expectFieldPath: 'spec.parentRefs',
    expectMessage:
      'sectionName must be specified when parentRefs includes 2 or more references to the same parent',
  },
  {
    description: 'same parent and sectionName twice',
    object: edit(httpRoute(), {
      'spec.parentRefs': [
        { name: 'gw', sectionName: 'http' },
        { name: 'gw', sectionName: 'http', port: 80 },
      ],
    }),
    expectFieldPath: 'spec.parentRefs',
    expectMessage:
      'sectionName must be unique when parentRefs includes 2 or more references to the same parent',
  },
  {
    description: 'same parent twice without sectionName',
    object: edit(httpRoute(), { 'spec.parentRefs': [{ name: 'gw' }, { name: 'gw', kind: 'Gateway' }] }),
    expectFieldPath: 'spec.parentRefs',
    expectMessage:
      'sectionName must be unique when parentRefs includes 2 or more references to the same parent',
  },
  {
    description: 'parentRef port 0',
    object: edit(httpRoute(), { 'spec.parentRefs[2].port': 0 }),
    expectFieldPath: 'spec.parentRefs[2].port',
  },
  {
    description: 'parentRef sectionName with capitals',
    object: edit(httpRoute(), { 'spec.parentRefs[0].sectionName': 'HTTP' }),
    expectFieldPath: 'spec.parentRefs[0].sectionName',
  },
  {
    description: 'parentRef without name',
    object: edit(httpRoute(), { 'spec.parentRefs[0].name': DELETE }),
    expectFieldPath: 'spec.parentRefs[0].name',
    expectMessage: 'Required value',
  },
  {
    description: 'HTTPRoute without spec',
    object: edit(httpRoute(), { spec: DELETE }),
    expectFieldPath: 'spec',
  },
];

const grpcFilterBodies: [string, string, Json][] = [
  ['RequestHeaderModifier', 'requestHeaderModifier', { set: [headerSet('a')] }],
  ['ResponseHeaderModifier', 'responseHeaderModifier', { set: [headerSet('a')] }],
  ['RequestMirror', 'requestMirror', { backendRef: { name: 'm', port: 80 } }],
  ['ExtensionRef', 'extensionRef', extRef],
];

const grpcRouteFixtures: InvalidFixture[] = [
  {
    description: 'method match with neither service nor method',
    object: edit(grpcRoute(), { 'spec.rules[0].matches[0].method': { type: 'Exact' } }),
    expectFieldPath: 'spec.rules[0].matches[0].method',
    expectMessage: "One or both of 'service' or 'method' must be specified",
  },
  {
    description: 'method match with an empty object (type defaults to Exact)',
    object: edit(grpcRoute(), { 'spec.rules[0].matches[0].method': {} }),
    expectFieldPath: 'spec.rules[0].matches[0].method',
    expectMessage: "One or both of 'service' or 'method' must be specified",
  },
  {
    description: 'Exact service with a slash',
    object: edit(grpcRoute(), { 'spec.rules[0].matches[0].method.service': 'com.example/User' }),
    expectFieldPath: 'spec.rules[0].matches[0].method',
    expectMessage: 'service must only contain valid characters',
  },
  {
    description: 'Exact method with a dash',
    object: edit(grpcRoute(), { 'spec.rules[0].matches[0].method.method': 'Log-in' }),
    expectFieldPath: 'spec.rules[0].matches[0].method',
    expectMessage: 'method must only contain valid characters (matching ^[A-Za-z_][A-Za-z_0-9]*$)',
  },
  {
    description: 'method match type not in the enum',
    object: edit(grpcRoute(), { 'spec.rules[0].matches[0].method.type': 'Prefix' }),
    expectFieldPath: 'spec.rules[0].matches[0].method.type',
  },
  {
    description: 'GRPCRoute URLRewrite filter',
    object: grpcRule({ filters: [{ type: 'URLRewrite', urlRewrite: {} }] }),
    expectFieldPath: 'spec.rules[0].filters[0]',
  },
  {
    description: 'GRPCRoute RequestHeaderModifier twice',
    object: grpcRule({
      filters: [
        { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [headerSet('a')] } },
        { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [headerSet('b')] } },
      ],
    }),
    expectFieldPath: 'spec.rules[0].filters',
    expectMessage: 'RequestHeaderModifier filter cannot be repeated',
  },
  {
    description: 'GRPCRoute ResponseHeaderModifier twice',
    object: grpcRule({
      filters: [
        { type: 'ResponseHeaderModifier', responseHeaderModifier: { set: [headerSet('a')] } },
        { type: 'ResponseHeaderModifier', responseHeaderModifier: { set: [headerSet('b')] } },
      ],
    }),
    expectFieldPath: 'spec.rules[0].filters',
    expectMessage: 'ResponseHeaderModifier filter cannot be repeated',
  },
  ...filterTypeFixtures(
    grpcFilterBodies,
    (filters) => grpcRule({ filters }),
    'GRPCRoute ',
    ['ExtensionRef', 'extensionRef', extRef],
    ['RequestMirror', 'requestMirror', { backendRef: { name: 'm', port: 80 } }],
  ),
  {
    description: 'GRPCRoute mirror with percent and fraction',
    object: grpcRule({
      filters: [
        {
          type: 'RequestMirror',
          requestMirror: {
            backendRef: { name: 'm', port: 80 },
            percent: 1,
            fraction: { numerator: 1, denominator: 2 },
          },
        },
      ],
    }),
    expectFieldPath: 'spec.rules[0].filters[0].requestMirror',
    expectMessage: 'Only one of percent or fraction may be specified in HTTPRequestMirrorFilter',
  },
  {
    description: 'GRPCRoute mirror fraction 3/2',
    object: grpcRule({
      filters: [
        {
          type: 'RequestMirror',
          requestMirror: { backendRef: { name: 'm', port: 80 }, fraction: { numerator: 3, denominator: 2 } },
        },
      ],
    }),
    expectFieldPath: 'spec.rules[0].filters[0].requestMirror.fraction',
    expectMessage: 'numerator must be less than or equal to denominator',
  },
  {
    description: 'GRPCRoute backendRef without port',
    object: edit(grpcRoute(), { 'spec.rules[0].backendRefs[0].port': DELETE }),
    expectFieldPath: 'spec.rules[0].backendRefs[0]',
    expectMessage: 'Must have port for Service reference',
  },
  {
    description: 'GRPCRoute 129 matches across rules',
    object: edit(grpcRoute(), {
      'spec.rules': repeat(3, (r) => ({
        matches: repeat(43, (i) => ({ method: { service: `s${r}`, method: `m${i}` } })),
      })),
    }),
    expectFieldPath: 'spec.rules',
    expectMessage: 'the total number of matches across all rules in a route must be less than 128',
  },
  {
    description: 'GRPCRoute duplicate header match',
    object: edit(grpcRoute(), { 'spec.rules[0].matches[0].headers[1]': headerSet('x-a') }),
    expectFieldPath: 'spec.rules[0].matches[0].headers[1]',
    expectMessage: 'Duplicate value',
  },
  {
    description: 'GRPCRoute parentRefs to the same parent without sectionName',
    object: edit(grpcRoute(), { 'spec.parentRefs': [{ name: 'gw' }, { name: 'gw', port: 80 }] }),
    expectFieldPath: 'spec.parentRefs',
    expectMessage:
      'sectionName must be unique when parentRefs includes 2 or more references to the same parent',
  },
  {
    description: 'GRPCRoute 17 hostnames',
    object: edit(grpcRoute(), { 'spec.hostnames': repeat(17, (i) => `h${i}.example.com`) }),
    expectFieldPath: 'spec.hostnames',
  },
  {
    description: 'GRPCRoute v1beta1 (not served)',
    object: edit(grpcRoute(), { apiVersion: 'gateway.networking.k8s.io/v1beta1' }),
    expectFieldPath: 'apiVersion',
  },
];

const tlsRouteFixtures: InvalidFixture[] = [
  {
    description: 'TLSRoute without hostnames',
    object: edit(tlsRoute(), { 'spec.hostnames': DELETE }),
    expectFieldPath: 'spec.hostnames',
    expectMessage: 'Required value',
  },
  {
    description: 'TLSRoute with an empty hostnames list',
    object: edit(tlsRoute(), { 'spec.hostnames': [] }),
    expectFieldPath: 'spec.hostnames',
  },
  {
    description: 'TLSRoute with an IP as hostname',
    object: edit(tlsRoute(), { 'spec.hostnames[0]': '10.0.0.1' }),
    expectFieldPath: 'spec.hostnames',
    expectMessage: 'Hostnames cannot contain an IP',
  },
  {
    description: 'TLSRoute hostname with a wildcard in the middle',
    object: edit(tlsRoute(), { 'spec.hostnames[0]': 'a.*.example.com' }),
    expectFieldPath: 'spec.hostnames[0]',
  },
  {
    description: 'TLSRoute hostname with a wildcard in the middle (CRD rule)',
    object: edit(tlsRoute(), { 'spec.hostnames[0]': 'a.*.example.com' }),
    expectFieldPath: 'spec.hostnames',
    expectMessage:
      'Wildcards on hostnames must be the first label, and the rest of hostname must be valid based on RFC-1123',
  },
  {
    description: 'TLSRoute hostname with capitals',
    object: edit(tlsRoute(), { 'spec.hostnames[0]': 'TLS.example.com' }),
    expectFieldPath: 'spec.hostnames',
    expectMessage: 'Hostnames must be valid based on RFC-1123',
  },
  {
    description: 'TLSRoute with 1025 hostnames',
    object: edit(tlsRoute(), { 'spec.hostnames': repeat(1025, (i) => `h${i}.example.com`) }),
    expectFieldPath: 'spec.hostnames',
    expectMessage: 'must have at most 1024 items',
  },
  {
    description: 'TLSRoute without rules',
    object: edit(tlsRoute(), { 'spec.rules': DELETE }),
    expectFieldPath: 'spec.rules',
    expectMessage: 'Required value',
  },
  {
    description: 'TLSRoute with two rules',
    object: edit(tlsRoute(), { 'spec.rules[1]': { backendRefs: [{ name: 's', port: 443 }] } }),
    expectFieldPath: 'spec.rules',
    expectMessage: 'must have at most 1 items',
  },
  {
    description: 'TLSRoute rule without backendRefs',
    object: edit(tlsRoute(), { 'spec.rules[0].backendRefs': DELETE }),
    expectFieldPath: 'spec.rules[0].backendRefs',
    expectMessage: 'Required value',
  },
  {
    description: 'TLSRoute rule with an empty backendRefs list',
    object: edit(tlsRoute(), { 'spec.rules[0].backendRefs': [] }),
    expectFieldPath: 'spec.rules[0].backendRefs',
  },
  {
    description: 'TLSRoute backendRef without port',
    object: edit(tlsRoute(), { 'spec.rules[0].backendRefs[0].port': DELETE }),
    expectFieldPath: 'spec.rules[0].backendRefs[0]',
    expectMessage: 'Must have port for Service reference',
  },
  {
    description: 'TLSRoute backendRef with filters (HTTP only)',
    object: edit(tlsRoute(), { 'spec.rules[0].backendRefs[0].filters': [] }),
    expectFieldPath: 'spec.rules[0].backendRefs[0].filters',
    expectMessage: 'unknown field',
  },
  {
    description: 'TLSRoute parentRefs: same parent and sectionName twice',
    object: edit(tlsRoute(), { 'spec.parentRefs[1]': { name: 'gw', sectionName: 'tls' } }),
    expectFieldPath: 'spec.parentRefs',
    expectMessage:
      'sectionName must be unique when parentRefs includes 2 or more references to the same parent',
  },
  {
    description: 'TLSRoute v1alpha2 (no longer served)',
    object: edit(tlsRoute(), { apiVersion: 'gateway.networking.k8s.io/v1alpha2' }),
    expectFieldPath: 'apiVersion',
  },
];

const backendTLSPolicyFixtures: InvalidFixture[] = [
  {
    description: 'BackendTLSPolicy targeting one Service with and without a sectionName',
    object: edit(backendTLSPolicy(), {
      'spec.targetRefs[1]': { group: '', kind: 'Service', name: 'svc' },
    }),
    expectFieldPath: 'spec.targetRefs',
    expectMessage:
      'sectionName must be specified when targetRefs includes 2 or more references to the same target',
  },
  {
    description: 'BackendTLSPolicy targeting one Service port twice',
    object: edit(backendTLSPolicy(), {
      'spec.targetRefs[1]': { group: '', kind: 'Service', name: 'svc', sectionName: 'https' },
    }),
    expectFieldPath: 'spec.targetRefs',
    expectMessage:
      'sectionName must be unique when targetRefs includes 2 or more references to the same target',
  },
  {
    description: 'BackendTLSPolicy with both CA refs and well-known CAs',
    object: edit(backendTLSPolicy(), { 'spec.validation.wellKnownCACertificates': 'System' }),
    expectFieldPath: 'spec.validation',
    expectMessage: 'must not contain both CACertificateRefs and WellKnownCACertificates',
  },
  {
    description: 'BackendTLSPolicy with neither CA refs nor well-known CAs',
    object: edit(backendTLSPolicy(), { 'spec.validation.caCertificateRefs': DELETE }),
    expectFieldPath: 'spec.validation',
    expectMessage: 'must specify either CACertificateRefs or WellKnownCACertificates',
  },
  {
    description: 'BackendTLSPolicy Hostname SAN without hostname',
    object: edit(backendTLSPolicy(), { 'spec.validation.subjectAltNames[0]': { type: 'Hostname' } }),
    expectFieldPath: 'spec.validation.subjectAltNames[0]',
    expectMessage: 'SubjectAltName element must contain Hostname, if Type is set to Hostname',
  },
  {
    description: 'BackendTLSPolicy URI SAN with a hostname',
    object: edit(backendTLSPolicy(), {
      'spec.validation.subjectAltNames[1].hostname': 'a.example.com',
    }),
    expectFieldPath: 'spec.validation.subjectAltNames[1]',
    expectMessage: 'SubjectAltName element must not contain Hostname, if Type is not set to Hostname',
  },
  {
    description: 'BackendTLSPolicy URI SAN without uri',
    object: edit(backendTLSPolicy(), { 'spec.validation.subjectAltNames[1]': { type: 'URI' } }),
    expectFieldPath: 'spec.validation.subjectAltNames[1]',
    expectMessage: 'SubjectAltName element must contain URI, if Type is set to URI',
  },
  {
    description: 'BackendTLSPolicy Hostname SAN with a uri',
    object: edit(backendTLSPolicy(), {
      'spec.validation.subjectAltNames[0].uri': 'spiffe://example.com/x',
    }),
    expectFieldPath: 'spec.validation.subjectAltNames[0]',
    expectMessage: 'SubjectAltName element must not contain URI, if Type is not set to URI',
  },
  {
    description: 'BackendTLSPolicy without hostname',
    object: edit(backendTLSPolicy(), { 'spec.validation.hostname': DELETE }),
    expectFieldPath: 'spec.validation.hostname',
    expectMessage: 'Required value',
  },
  {
    description: 'BackendTLSPolicy with an unknown well-known CA set',
    object: edit(backendTLSPolicy(), {
      'spec.validation.caCertificateRefs': DELETE,
      'spec.validation.wellKnownCACertificates': 'Everything',
    }),
    expectFieldPath: 'spec.validation.wellKnownCACertificates',
  },
];

const otherGatewayKindFixtures: InvalidFixture[] = [
  {
    description: 'ReferenceGrant from without namespace',
    object: edit(referenceGrant(), { 'spec.from[0].namespace': DELETE }),
    expectFieldPath: 'spec.from[0].namespace',
    expectMessage: 'Required value',
  },
  {
    description: 'ReferenceGrant with an empty from list',
    object: edit(referenceGrant(), { 'spec.from': [] }),
    expectFieldPath: 'spec.from',
  },
  {
    description: 'ReferenceGrant to without group',
    object: edit(referenceGrant(), { 'spec.to[0].group': DELETE }),
    expectFieldPath: 'spec.to[0].group',
    expectMessage: 'Required value',
  },
  {
    description: 'ReferenceGrant with 17 to entries',
    object: edit(referenceGrant(), {
      'spec.to': repeat(17, (i) => ({ group: '', kind: 'Service', name: `s${i}` })),
    }),
    expectFieldPath: 'spec.to',
    expectMessage: 'must have at most 16 items',
  },
  {
    description: 'ReferenceGrant from kind with a dot',
    object: edit(referenceGrant(), { 'spec.from[0].kind': 'Gate.way' }),
    expectFieldPath: 'spec.from[0].kind',
  },
  {
    description: 'GatewayClass controllerName without a path',
    object: edit(gatewayClass(), { 'spec.controllerName': 'convoy' }),
    expectFieldPath: 'spec.controllerName',
  },
  {
    description: 'GatewayClass without controllerName',
    object: edit(gatewayClass(), { 'spec.controllerName': DELETE }),
    expectFieldPath: 'spec.controllerName',
    expectMessage: 'Required value',
  },
  {
    description: 'GatewayClass description of 65 characters',
    object: edit(gatewayClass(), { 'spec.description': 'd'.repeat(65) }),
    expectFieldPath: 'spec.description',
    expectMessage: 'Too long',
  },
  {
    description: 'GatewayClass parametersRef without kind',
    object: edit(gatewayClass(), { 'spec.parametersRef.kind': DELETE }),
    expectFieldPath: 'spec.parametersRef.kind',
    expectMessage: 'Required value',
  },
];

const coreFixtures: InvalidFixture[] = [
  {
    description: 'TLS Secret without tls.key',
    object: edit(tlsSecret(), { data: { 'tls.crt': 'QQ==' } }),
    expectFieldPath: 'data[tls.key]',
    expectMessage: 'Required value',
  },
  {
    description: 'Secret data that is not base64',
    object: edit(tlsSecret(), { 'data.plain': 'not base64!' }),
    expectFieldPath: 'data[plain]',
  },
  {
    description: 'Secret data key with a slash',
    object: edit(tlsSecret(), { data: { 'tls.crt': 'QQ==', 'tls.key': 'QQ==', 'a/b': 'QQ==' } }),
    expectFieldPath: 'data[a/b]',
  },
  {
    description: 'Secret name with capitals',
    object: edit(tlsSecret(), { 'metadata.name': 'Cert' }),
    expectFieldPath: 'metadata.name',
  },
  {
    description: 'Secret with a spec',
    object: edit(tlsSecret(), { spec: {} }),
    expectFieldPath: 'spec',
    expectMessage: 'unknown field',
  },
  {
    description: 'Secret without name',
    object: edit(tlsSecret(), { 'metadata.name': DELETE }),
    expectFieldPath: 'metadata.name',
    expectMessage: 'Required value',
  },
  {
    description: 'Service without ports',
    object: edit(service(), { 'spec.ports': DELETE }),
    expectFieldPath: 'spec.ports',
    expectMessage: 'Required value',
  },
  {
    description: 'Service port 0',
    object: edit(service(), { 'spec.ports[0].port': 0 }),
    expectFieldPath: 'spec.ports[0].port',
  },
  {
    description: 'Service with two unnamed ports',
    object: edit(service(), { 'spec.ports[0].name': DELETE, 'spec.ports[1].name': DELETE }),
    expectFieldPath: 'spec.ports[0].name',
    expectMessage: 'Required value',
  },
  {
    description: 'Service with two ports of the same name',
    object: edit(service(), { 'spec.ports[1].name': 'http' }),
    expectFieldPath: 'spec.ports[1].name',
    expectMessage: 'Duplicate value',
  },
  {
    description: 'Service port protocol HTTP',
    object: edit(service(), { 'spec.ports[0].protocol': 'HTTP' }),
    expectFieldPath: 'spec.ports[0].protocol',
    expectMessage: 'Unsupported value',
  },
  {
    description: 'Service targetPort name longer than 15 characters',
    object: edit(service(), { 'spec.ports[1].targetPort': 'a-very-long-port-name' }),
    expectFieldPath: 'spec.ports[1].targetPort',
  },
  {
    description: 'Service type Ingress',
    object: edit(service(), { 'spec.type': 'Ingress' }),
    expectFieldPath: 'spec.type',
  },
  {
    description: 'Service name starting with a digit',
    object: edit(service(), { 'metadata.name': '1svc' }),
    expectFieldPath: 'metadata.name',
  },
  {
    description: 'EndpointSlice without addressType',
    object: edit(endpointSlice(), { addressType: DELETE }),
    expectFieldPath: 'addressType',
    expectMessage: 'Required value',
  },
  {
    description: 'EndpointSlice IPv4 slice with an IPv6 address',
    object: edit(endpointSlice(), { 'endpoints[0].addresses[0]': '::1' }),
    expectFieldPath: 'endpoints[0].addresses[0]',
  },
  {
    description: 'EndpointSlice endpoint without addresses',
    object: edit(endpointSlice(), { 'endpoints[1].addresses': DELETE }),
    expectFieldPath: 'endpoints[1].addresses',
  },
  {
    description: 'EndpointSlice port 70000',
    object: edit(endpointSlice(), { 'ports[0].port': 70000 }),
    expectFieldPath: 'ports[0].port',
  },
  {
    description: 'EndpointSlice ready condition as a string',
    object: edit(endpointSlice(), { 'endpoints[0].conditions.ready': 'yes' }),
    expectFieldPath: 'endpoints[0].conditions.ready',
  },
  {
    description: 'EndpointSlice addressType IP',
    object: edit(endpointSlice(), { addressType: 'IP' }),
    expectFieldPath: 'addressType',
  },
  {
    description: 'Namespace name with a dot',
    object: edit(namespace(), { 'metadata.name': 'team.a' }),
    expectFieldPath: 'metadata.name',
  },
];

export const INVALID_FIXTURES: InvalidFixture[] = [
  ...gatewayFixtures,
  ...listenerSetFixtures,
  ...httpRouteFixtures,
  ...grpcRouteFixtures,
  ...tlsRouteFixtures,
  ...otherGatewayKindFixtures,
  ...backendTLSPolicyFixtures,
  ...coreFixtures,
];
