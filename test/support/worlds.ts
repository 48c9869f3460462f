/**
 * Random worlds for property tests (fast-check): GatewayClasses, Namespaces, Gateways, ListenerSets
 * (with allowedListeners), HTTPRoutes, GRPCRoutes, TLSRoutes, ReferenceGrants, TLS Secrets,
 * Services and EndpointSlices, shaped as the API server stores them (namespace, uid,
 * creationTimestamp and generation filled in, Secret data in base64, no CRD defaults applied).
 *
 * Names come from small pools so that references hit as often as they miss: a route names a
 * Gateway or ListenerSet that may or may not exist, a listener names a Secret that may be valid,
 * broken or absent, a backendRef names a Service port that may be there. Objects are generated to
 * pass the CRD validation (the CEL rules are respected by construction where they couple fields),
 * but field values reach as far as the CRDs allow: header values and path modifiers are any
 * Unicode text, so control characters and astral-plane text appear. The tests run every object
 * through the file provider's validation and keep only what it accepts.
 *
 * Certificates are the committed test fixtures (./certs); some Secrets are broken on purpose
 * (key of another certificate, chain in the wrong order, not PEM, empty key, wrong Secret type).
 * Endpoint addresses come from 192.0.2.0/24 (TEST-NET-1) only.
 *
 * Regular expressions stay in a conservative set that RE2 accepts unless `aggressiveRegex` is set
 * (CONVOY_FUZZ_REGEX=1 in the tests): then random text over regex syntax and known RE2 rejects join.
 */
import fc from 'fast-check';
import { stringify } from 'yaml';
import type { KubeObject } from '../../src/store/objects';
import {
  EXAMPLE_CERT,
  EXAMPLE_KEY,
  EXPIRED_CERT,
  EXPIRED_KEY,
  INTERMEDIATE_CERT,
  LEAF_CERT,
  LEAF_KEY,
  ROOT_CERT,
  SELF_CERT,
  SELF_KEY,
  TENANT_CERT,
  TENANT_KEY,
} from './certs';
import { CONTROLLER } from './objects';

type Obj = Record<string, unknown>;

export interface WorldOptions {
  /** Random text over RE2 syntax and known RE2 rejects in every regex field (off: a safe set). */
  aggressiveRegex?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Pools

const GROUP = 'gateway.networking.k8s.io';
const NAMESPACES = ['default', 'team-a', 'team-b'];
const LISTENER_SET_NAMES = ['ls-a', 'ls-b', 'ls-c'];
const LISTENER_NAMES = ['http', 'https', 'tls', 'web', 'api'];
const LISTENER_PORTS = [80, 443, 8443];
const HOSTNAMES = [
  'example.com',
  'www.example.com',
  '*.example.com',
  'a.example.com',
  '*.a.example.com',
  'b.a.example.com',
  'tenant.test',
  '*.tenant.test',
];
const SECRET_NAMES = ['cert-a', 'cert-b', 'cert-c'];
const SERVICE_NAMES = ['web', 'api', 'grpc'];
const SERVICE_PORTS = [80, 8080];
const ROUTE_NAMES = ['r1', 'r2', 'r3', 'r4'];
/** Equal timestamps are frequent on purpose: precedence then falls back to namespace/name. */
const CREATED = ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'];
/** The creationTimestamp of an object added to a world: newer than everything in it. */
export const ADDED_CREATED = '2026-02-01T00:00:00Z';
const OTHER_CONTROLLER = 'example.com/other-controller';

const SAFE_PATH_REGEXES = [
  '/api/v[0-9]+',
  '/[a-z]+/items',
  '.*',
  '/(foo|bar)/.*',
  '/x{1,3}',
  '(?i)/case',
  '/item/[^/]+$',
];
const SAFE_VALUE_REGEXES = ['ab.*', '[0-9]+', '(?i)prod', 'v[12]', '.+'];
/** RE2 or Envoy rejects these (program size, repetition limit, unsupported escapes, Perl-only syntax). */
const HOSTILE_REGEXES = [
  '/[a-z]{1000}',
  'a{1001}',
  '/foo\\Z',
  '(a+)+',
  '[[:word:]]',
  '(?P<n>x)',
  '\\C',
  '(?<=a)b',
  '\\1',
  '((((((((((a))))))))))*{2}',
  '[z-a]',
  '(',
  'x**',
];
const REGEX_CHARS = 'ab/.*+?|(){}[]^$\\0123456789,-:PZz<=!';

// ---------------------------------------------------------------------------------------------
// Small arbitraries

const pick = <T>(xs: readonly T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);
/** `a`'s value with probability `p`, else undefined (a field left out). */
const maybe = <T>(a: fc.Arbitrary<T>, p = 0.5): fc.Arbitrary<T | undefined> =>
  fc.oneof(
    { weight: Math.round(p * 100), arbitrary: a },
    { weight: Math.round((1 - p) * 100), arbitrary: fc.constant(undefined) },
  );
/** Mostly the default namespace, so that same-namespace references (the default) often resolve. */
const namespaceArb = fc.constantFrom('default', 'default', 'default', 'default', 'team-a', 'team-b');
/** Mostly one Gateway name, so that routes and ListenerSets usually name an existing Gateway. */
const gatewayNameArb = fc.constantFrom('gw', 'gw', 'gw', 'edge');

function meta(name: string, namespace: string | undefined, created: string, labels?: Record<string, string>) {
  return {
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    uid: `uid-${namespace ?? ''}-${name}`,
    generation: 1,
    creationTimestamp: created,
    ...(labels ? { labels } : {}),
  };
}

/** Any Unicode text the CRDs allow in a string field without a pattern (never a lone surrogate). */
const anyText = (maxLength: number) => fc.string({ unit: 'binary', minLength: 1, maxLength });

/** One path segment of characters the CRD path pattern allows, never "." or "..". */
const segmentArb = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(..."abcxyzABZ0129-._~!$&'()*+,;=:@") },
      { weight: 1, arbitrary: fc.constantFrom('%20', '%41', '%e2%82%ac', '%00', '%2e') },
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((cs) => cs.join(''))
  .filter((s) => s !== '.' && s !== '..');

/** An Exact or PathPrefix value the CRD accepts: absolute, no "//", "/./", "/../", "#", "%2f". */
const pathValueArb: fc.Arbitrary<string> = fc.oneof(
  pick(['/', '/api', '/api/', '/api/v1', '/static/img.png', '/a%20b', '/x;y=1', '/~user', '/v1/items/']),
  fc
    .tuple(fc.array(segmentArb, { minLength: 1, maxLength: 3 }), fc.boolean())
    .map(([segs, slash]) => '/' + segs.join('/') + (slash ? '/' : '')),
);

function regexArb(safe: readonly string[], options: WorldOptions): fc.Arbitrary<string> {
  if (!options.aggressiveRegex) return pick(safe);
  return fc.oneof(
    pick(safe),
    pick(HOSTILE_REGEXES),
    fc.array(fc.constantFrom(...REGEX_CHARS), { minLength: 1, maxLength: 24 }).map((cs) => cs.join('')),
  );
}

const headerNameArb = pick([
  'x-team',
  'X-Env',
  'x-request-id',
  'user-agent',
  'Cookie',
  'x-a_b',
  'Host',
  "x-~!#$%&'*+.^`|",
  'x-' + 'a'.repeat(254),
]);
/** The longest text a 4096-character CRD field takes, in 1-, 2- and 4-byte UTF-8 characters. */
const LONGEST_VALUES = ['v'.repeat(4096), 'é'.repeat(4096), '😀'.repeat(4096)];

const headerValueArb = fc.oneof(
  { weight: 12, arbitrary: pick(['a', 'prod', 'v1.2', 'some value', ' padded ']) },
  { weight: 4, arbitrary: anyText(12) },
  { weight: 1, arbitrary: pick(LONGEST_VALUES) },
);

/** The first `max` characters (code points, as the CRDs count them) of a text. */
const truncate = (text: string, max: number): string => Array.from(text).slice(0, max).join('');
const preciseHostnameArb = pick(['example.com', 'redirect.example.com', 'localhost', 'a-b.c', 'x1']);

// ---------------------------------------------------------------------------------------------
// Secrets

interface SecretContent {
  type: string;
  /** PEM texts, written as the golden inputs write them: `${NAME}` per fixture of ./certs. */
  crt: string;
  key: string;
}

const FIXTURES: Record<string, string> = {
  EXAMPLE_CERT,
  EXAMPLE_KEY,
  TENANT_CERT,
  TENANT_KEY,
  ROOT_CERT,
  INTERMEDIATE_CERT,
  LEAF_CERT,
  LEAF_KEY,
  SELF_CERT,
  SELF_KEY,
  EXPIRED_CERT,
  EXPIRED_KEY,
};

/** `${NAME}` tokens replaced by the fixtures' PEM texts. */
function expandFixtures(text: string): string {
  return text.replace(/\$\{([A-Z_]+)\}/g, (_m, name: string) => FIXTURES[name]);
}

/** Valid key pairs and broken ones, by what they contain. */
const SECRET_CONTENTS: Record<string, SecretContent> = {
  example: { type: 'kubernetes.io/tls', crt: '${EXAMPLE_CERT}', key: '${EXAMPLE_KEY}' },
  tenant: { type: 'kubernetes.io/tls', crt: '${TENANT_CERT}', key: '${TENANT_KEY}' },
  leafChain: { type: 'kubernetes.io/tls', crt: '${LEAF_CERT}${INTERMEDIATE_CERT}', key: '${LEAF_KEY}' },
  leafFullChain: {
    type: 'kubernetes.io/tls',
    crt: '${LEAF_CERT}${INTERMEDIATE_CERT}${ROOT_CERT}',
    key: '${LEAF_KEY}',
  },
  selfRsa: { type: 'kubernetes.io/tls', crt: '${SELF_CERT}', key: '${SELF_KEY}' },
  expired: { type: 'kubernetes.io/tls', crt: '${EXPIRED_CERT}', key: '${EXPIRED_KEY}' },
  brokenMismatchedKey: { type: 'kubernetes.io/tls', crt: '${EXAMPLE_CERT}', key: '${TENANT_KEY}' },
  brokenChainOrder: {
    type: 'kubernetes.io/tls',
    crt: '${INTERMEDIATE_CERT}${LEAF_CERT}',
    key: '${LEAF_KEY}',
  },
  brokenNotPem: { type: 'kubernetes.io/tls', crt: 'not a certificate\n', key: 'not a key\n' },
  brokenEmptyKey: { type: 'kubernetes.io/tls', crt: '${EXAMPLE_CERT}', key: '' },
  brokenOpaque: { type: 'Opaque', crt: '${EXAMPLE_CERT}', key: '${EXAMPLE_KEY}' },
};

const b64 = (text: string): string => Buffer.from(expandFixtures(text)).toString('base64');

/** The content a Secret's data was made from, for printing a world; undefined if not generated here. */
function secretContentOf(o: KubeObject): SecretContent | undefined {
  return Object.values(SECRET_CONTENTS).find(
    (c) => o.type === c.type && o.data?.['tls.crt'] === b64(c.crt) && o.data?.['tls.key'] === b64(c.key),
  );
}

const VALID_CONTENTS = Object.keys(SECRET_CONTENTS).filter((k) => !k.startsWith('broken'));
const BROKEN_CONTENTS = Object.keys(SECRET_CONTENTS).filter((k) => k.startsWith('broken'));

const secretArb: fc.Arbitrary<KubeObject> = fc
  .record({
    name: pick(SECRET_NAMES),
    namespace: namespaceArb,
    content: fc.oneof(
      { weight: 3, arbitrary: pick(VALID_CONTENTS) },
      { weight: 1, arbitrary: pick(BROKEN_CONTENTS) },
    ),
    created: pick(CREATED),
  })
  .map(({ name, namespace, content, created }) => {
    const c = SECRET_CONTENTS[content];
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta(name, namespace, created),
      type: c.type,
      data: { 'tls.crt': b64(c.crt), 'tls.key': b64(c.key) },
    };
  });

// ---------------------------------------------------------------------------------------------
// Listeners, Gateways, ListenerSets

const secretRefArb = fc
  .record({
    name: fc.oneof(
      { weight: 6, arbitrary: pick(SECRET_NAMES) },
      { weight: 1, arbitrary: fc.constant('cert-missing') },
    ),
    namespace: maybe(namespaceArb, 0.2),
  })
  .map(({ name, namespace }) => ({ name, ...(namespace ? { namespace } : {}) }));

const selectorArb = fc.oneof(
  fc.constant({ matchLabels: { env: 'prod' } }),
  fc.constant({ matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'dev'] }] }),
  fc.constant({ matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] }),
);

const allowedRoutesArb = fc
  .record({
    from: pick(['Same', 'All', 'All', 'Selector']),
    selector: selectorArb,
    kinds: maybe(
      pick([
        [{ kind: 'HTTPRoute' }],
        [{ kind: 'GRPCRoute' }, { kind: 'HTTPRoute' }],
        [{ kind: 'TLSRoute' }],
        [{ group: GROUP, kind: 'TCPRoute' }],
      ]),
      0.25,
    ),
  })
  .map(({ from, selector, kinds }) => ({
    namespaces: from === 'Selector' ? { from, selector } : { from },
    ...(kinds ? { kinds } : {}),
  }));

const listenerArb: fc.Arbitrary<Obj> = fc
  .record({
    name: pick(LISTENER_NAMES),
    portProtocol: fc.oneof(
      { weight: 8, arbitrary: fc.constant({ port: 80, protocol: 'HTTP' }) },
      { weight: 6, arbitrary: fc.constant({ port: 443, protocol: 'HTTPS' }) },
      { weight: 2, arbitrary: fc.constant({ port: 443, protocol: 'TLS' }) },
      { weight: 4, arbitrary: fc.constant({ port: 8443, protocol: 'TLS' }) },
      { weight: 2, arbitrary: fc.constant({ port: 8443, protocol: 'HTTPS' }) },
      { weight: 1, arbitrary: fc.constant({ port: 443, protocol: 'HTTP' }) },
      { weight: 1, arbitrary: fc.constant({ port: 8443, protocol: 'TCP' }) },
    ),
    hostname: maybe(pick(HOSTNAMES), 0.5),
    passthrough: fc.boolean(),
    certificateRefs: fc.uniqueArray(secretRefArb, {
      minLength: 1,
      maxLength: 2,
      selector: (r) => `${r.namespace ?? ''}/${r.name}`,
    }),
    allowedRoutes: maybe(allowedRoutesArb, 0.4),
  })
  .map((l) => {
    const { port, protocol } = l.portProtocol;
    const out: Obj = { name: l.name, port, protocol };
    if (l.hostname && protocol !== 'TCP') out.hostname = l.hostname;
    if (protocol === 'HTTPS') out.tls = { mode: 'Terminate', certificateRefs: l.certificateRefs };
    if (protocol === 'TLS') {
      out.tls = l.passthrough
        ? { mode: 'Passthrough' }
        : { mode: 'Terminate', certificateRefs: l.certificateRefs };
    }
    if (l.allowedRoutes) out.allowedRoutes = l.allowedRoutes;
    return out;
  });

/** Listener names unique, and port/protocol/hostname combinations unique (the CRD's CEL rules). */
function uniqueListeners(ls: Obj[]): Obj[] {
  const names = new Set<string>();
  const combos = new Set<string>();
  return ls.filter((l) => {
    const combo = `${l.port}/${l.protocol}/${l.hostname ?? ''}`;
    if (names.has(l.name as string) || combos.has(combo)) return false;
    names.add(l.name as string);
    combos.add(combo);
    return true;
  });
}

const listenersArb = fc.array(listenerArb, { minLength: 1, maxLength: 4 }).map(uniqueListeners);

interface GatewayShape {
  name: fc.Arbitrary<string>;
  namespace: fc.Arbitrary<string>;
  className: fc.Arbitrary<string>;
  /** Probability that spec.allowedListeners is set. */
  allowedListeners: number;
  listeners: fc.Arbitrary<Obj[]>;
}

const gatewayArbOf = (shape: GatewayShape): fc.Arbitrary<KubeObject> =>
  fc
    .record({
      name: shape.name,
      namespace: shape.namespace,
      className: shape.className,
      listeners: shape.listeners,
      allowedListeners: maybe(
        fc.record({ from: pick(['None', 'Same', 'All', 'All', 'Selector']), selector: selectorArb }),
        shape.allowedListeners,
      ),
      created: pick(CREATED),
    })
    .map((g) => ({
      apiVersion: `${GROUP}/v1`,
      kind: 'Gateway',
      metadata: meta(g.name, g.namespace, g.created),
      spec: {
        gatewayClassName: g.className,
        listeners: g.listeners,
        ...(g.allowedListeners
          ? {
              allowedListeners: {
                namespaces:
                  g.allowedListeners.from === 'Selector'
                    ? { from: 'Selector', selector: g.allowedListeners.selector }
                    : { from: g.allowedListeners.from },
              },
            }
          : {}),
      },
    }));

const gatewayArb = gatewayArbOf({
  name: gatewayNameArb,
  namespace: namespaceArb,
  className: fc.oneof(
    { weight: 8, arbitrary: fc.constant('convoy') },
    { weight: 1, arbitrary: pick(['other', 'absent']) },
  ),
  allowedListeners: 0.6,
  listeners: listenersArb,
});

/**
 * The Gateway most other objects name (default/gw, Convoy's class): present in every world with
 * two to five listeners, usually admitting ListenerSets, so that added objects usually matter.
 */
const mainGatewayArb = gatewayArbOf({
  name: fc.constant('gw'),
  namespace: fc.constant('default'),
  className: fc.constant('convoy'),
  allowedListeners: 0.85,
  listeners: fc.array(listenerArb, { minLength: 2, maxLength: 5 }).map(uniqueListeners),
});

const listenerSetArb: fc.Arbitrary<KubeObject> = fc
  .record({
    name: pick(LISTENER_SET_NAMES),
    namespace: fc.oneof(fc.constant('default'), namespaceArb),
    parent: gatewayNameArb,
    parentNamespace: maybe(namespaceArb, 0.15),
    listeners: listenersArb,
    created: pick(CREATED),
  })
  .map((s) => ({
    apiVersion: `${GROUP}/v1`,
    kind: 'ListenerSet',
    metadata: meta(s.name, s.namespace, s.created),
    spec: {
      parentRef: {
        group: GROUP,
        kind: 'Gateway',
        name: s.parent,
        ...(s.parentNamespace ? { namespace: s.parentNamespace } : {}),
      },
      listeners: s.listeners,
    },
  }));

// ---------------------------------------------------------------------------------------------
// Routes

const parentRefArb = fc
  .record({
    toSet: fc.oneof(
      { weight: 3, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
    gateway: gatewayNameArb,
    set: pick(LISTENER_SET_NAMES),
    namespace: maybe(namespaceArb, 0.1),
    sectionName: maybe(pick(LISTENER_NAMES), 0.25),
    port: maybe(pick(LISTENER_PORTS), 0.15),
  })
  .map((p) => ({
    ...(p.toSet ? { group: GROUP, kind: 'ListenerSet', name: p.set } : { name: p.gateway }),
    ...(p.namespace ? { namespace: p.namespace } : {}),
    ...(p.sectionName ? { sectionName: p.sectionName } : {}),
    ...(p.port ? { port: p.port } : {}),
  }));

/**
 * parentRefs the CRD accepts: two references to the same parent both need distinct sectionNames,
 * so a later reference to an already named parent is dropped unless both have different sections.
 */
const parentRefsArb = fc.array(parentRefArb, { minLength: 1, maxLength: 2 }).map((refs) => {
  const out: Obj[] = [];
  for (const r of refs as Obj[]) {
    const same = out.filter(
      (o) => o.kind === r.kind && o.name === r.name && (o.namespace ?? '') === (r.namespace ?? ''),
    );
    const ok = same.every((o) => o.sectionName && r.sectionName && o.sectionName !== r.sectionName);
    if (ok) out.push(r);
  }
  return out;
});

const backendRefArb = fc
  .record({
    name: fc.oneof(
      { weight: 10, arbitrary: pick(SERVICE_NAMES) },
      { weight: 1, arbitrary: fc.constant('missing') },
    ),
    namespace: maybe(namespaceArb, 0.2),
    port: fc.oneof(
      { weight: 12, arbitrary: pick(SERVICE_PORTS) },
      { weight: 1, arbitrary: fc.constant(9999) },
    ),
    weight: maybe(
      fc.oneof(
        { weight: 5, arbitrary: fc.integer({ min: 0, max: 5 }) },
        { weight: 1, arbitrary: fc.constant(1_000_000) },
      ),
    ),
  })
  .map((b) => ({
    name: b.name,
    port: b.port,
    ...(b.namespace ? { namespace: b.namespace } : {}),
    ...(b.weight !== undefined ? { weight: b.weight } : {}),
  }));

/** Mostly at least one backendRef: a rule without one only answers 500. */
const backendRefsArb = (max: number) =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 6, arbitrary: fc.array(backendRefArb, { minLength: 1, maxLength: max }) },
  );

const routeHostnamesArb = fc.oneof(
  fc.constant([]),
  fc.uniqueArray(pick(HOSTNAMES), { minLength: 1, maxLength: 2 }),
);

const headerMatchesArb = (options: WorldOptions, valueMax: number) =>
  fc
    .uniqueArray(
      fc.record({
        name: headerNameArb,
        regex: fc.boolean(),
        value: headerValueArb,
        pattern: regexArb(SAFE_VALUE_REGEXES, options),
      }),
      { maxLength: 2, selector: (h) => h.name },
    )
    .map((hs) =>
      hs.map((h) =>
        h.regex
          ? { type: 'RegularExpression', name: h.name, value: h.pattern }
          : { name: h.name, value: truncate(h.value, valueMax) },
      ),
    );

const httpMatchArb = (options: WorldOptions) =>
  fc
    .record({
      pathType: maybe(pick(['Exact', 'PathPrefix', 'PathPrefix', 'RegularExpression']), 0.7),
      path: pathValueArb,
      regex: regexArb(SAFE_PATH_REGEXES, options),
      headers: headerMatchesArb(options, 4096),
      queryParams: headerMatchesArb(options, 1024),
      method: maybe(pick(['GET', 'POST', 'DELETE', 'PATCH', 'CONNECT']), 0.3),
    })
    .map((m) => {
      const out: Obj = {};
      if (m.pathType)
        out.path = { type: m.pathType, value: m.pathType === 'RegularExpression' ? m.regex : m.path };
      if (m.headers.length) out.headers = m.headers;
      if (m.queryParams.length) out.queryParams = m.queryParams;
      if (m.method) out.method = m.method;
      return out;
    });

const headerListArb = fc.uniqueArray(fc.record({ name: headerNameArb, value: headerValueArb }), {
  maxLength: 2,
  selector: (h) => h.name,
});

const headerModifierArb = fc
  .record({
    set: headerListArb,
    add: headerListArb,
    remove: fc.uniqueArray(headerNameArb, { maxLength: 2 }),
  })
  .map((m) => {
    const out: Obj = {};
    if (m.set.length) out.set = m.set;
    if (m.add.length) out.add = m.add;
    if (m.remove.length) out.remove = m.remove;
    return out;
  });

/** ReplaceFullPath/ReplacePrefixMatch: the CRD allows any text up to 1024 characters. */
const pathModifierArb = fc
  .record({
    prefix: fc.boolean(),
    value: fc.oneof(
      { weight: 12, arbitrary: pathValueArb },
      { weight: 4, arbitrary: anyText(10).map((s) => '/' + s) },
      { weight: 1, arbitrary: pick(LONGEST_VALUES).map((s) => '/' + truncate(s, 1023)) },
    ),
  })
  .map((p) =>
    p.prefix
      ? { type: 'ReplacePrefixMatch', replacePrefixMatch: p.value }
      : { type: 'ReplaceFullPath', replaceFullPath: p.value },
  );

const mirrorArb = fc
  .record({
    backendRef: backendRefArb.map(({ weight: _w, ...ref }) => ref),
    share: fc.oneof(
      fc.constant(undefined),
      fc.integer({ min: 0, max: 100 }).map((percent) => ({ percent })),
      fc
        .tuple(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 0, max: 1000 }))
        .map(([d, n]) => ({ fraction: { numerator: Math.min(n, d), denominator: d } })),
    ),
  })
  .map((m) => ({ backendRef: m.backendRef, ...(m.share ?? {}) }));

const durationArb = pick(['0s', '1s', '10s', '500ms', '1h', '1m30s', '99999h']);

function parseDurationMs(d: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const m of d.matchAll(/([0-9]+)(ms|h|m|s)/g)) total += Number(m[1]) * units[m[2]];
  return total;
}

const someHttpFilterArb = fc.oneof(
  headerModifierArb.map((m) => ({ type: 'RequestHeaderModifier', requestHeaderModifier: m })),
  headerModifierArb.map((m) => ({ type: 'ResponseHeaderModifier', responseHeaderModifier: m })),
  mirrorArb.map((m) => ({ type: 'RequestMirror', requestMirror: m })),
  fc
    .record({
      scheme: maybe(pick(['http', 'https'])),
      hostname: maybe(preciseHostnameArb),
      port: maybe(pick([80, 443, 8080, 65535]), 0.4),
      statusCode: maybe(pick([301, 302, 303, 307, 308])),
      path: maybe(pathModifierArb),
    })
    .map((r) => ({ type: 'RequestRedirect', requestRedirect: dropUndefined(r) })),
  fc
    .record({ hostname: maybe(preciseHostnameArb), path: maybe(pathModifierArb) })
    .map((u) => ({ type: 'URLRewrite', urlRewrite: dropUndefined(u) })),
  mirrorArb.map((m) => ({ type: 'RequestMirror', requestMirror: m })),
);

const httpFilterArb = fc.oneof(
  { weight: 12, arbitrary: someHttpFilterArb },
  {
    weight: 1,
    arbitrary: fc.constant({
      type: 'ExtensionRef',
      extensionRef: { group: 'example.com', kind: 'Plugin', name: 'x' },
    }),
  },
);

function dropUndefined(o: Obj): Obj {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

const PREFIX_MODIFIER = (f: Obj): boolean => {
  const spec = (f.requestRedirect ?? f.urlRewrite) as { path?: { type?: string } } | undefined;
  return spec?.path?.type === 'ReplacePrefixMatch';
};

/**
 * One HTTPRoute rule made to satisfy the rule-level CEL: a redirect excludes backendRefs and
 * URLRewrite, single-use filters appear once, and a ReplacePrefixMatch modifier comes with exactly
 * one PathPrefix match; backendRequest never exceeds a non-zero request timeout.
 */
const httpRuleArb = (options: WorldOptions) =>
  fc
    .record({
      matches: fc.array(httpMatchArb(options), { maxLength: 3 }),
      filters: fc.array(httpFilterArb, { maxLength: 2 }),
      backendRefs: backendRefsArb(3),
      request: maybe(durationArb, 0.25),
      backendRequest: maybe(durationArb, 0.25),
      prefix: pathValueArb,
    })
    .map((r) => {
      const seen = new Set<string>();
      let filters = (r.filters as Obj[]).filter((f) => {
        const t = f.type as string;
        if (t === 'RequestMirror' || t === 'ExtensionRef') return true;
        if (seen.has(t)) return false;
        seen.add(t);
        return true;
      });
      const redirect = filters.some((f) => f.type === 'RequestRedirect');
      if (redirect) filters = filters.filter((f) => f.type !== 'URLRewrite');
      const out: Obj = {};
      let matches = r.matches;
      if (filters.some(PREFIX_MODIFIER)) matches = [{ path: { type: 'PathPrefix', value: r.prefix } }];
      if (matches.length) out.matches = matches;
      if (filters.length) out.filters = filters;
      if (!redirect && r.backendRefs.length) out.backendRefs = r.backendRefs;
      const timeouts: Obj = {};
      if (r.request) timeouts.request = r.request;
      if (r.backendRequest) {
        const request = r.request ? parseDurationMs(r.request) : 0;
        if (!r.request || request === 0 || parseDurationMs(r.backendRequest) <= request)
          timeouts.backendRequest = r.backendRequest;
      }
      if (Object.keys(timeouts).length) out.timeouts = timeouts;
      return out;
    });

const grpcMatchArb = (options: WorldOptions) =>
  fc
    .record({
      regex: fc.boolean(),
      service: maybe(pick(['helloworld.Greeter', 'foo.v1.Bar', '.pkg.Svc', '_x'])),
      method: maybe(pick(['SayHello', 'Get', 'list_items'])),
      serviceRegex: maybe(regexArb(['helloworld\\..*', 'foo\\.v[0-9]\\.Bar', '.*'], options)),
      methodRegex: maybe(regexArb(['Say.*', 'Get|List', '[A-Z][a-z]+'], options)),
      headers: headerMatchesArb(options, 4096),
      hasMethod: fc.boolean(),
    })
    .map((m) => {
      const out: Obj = {};
      const service = m.regex ? m.serviceRegex : m.service;
      const method = m.regex ? m.methodRegex : m.method;
      if (m.hasMethod && (service !== undefined || method !== undefined)) {
        out.method = dropUndefined({ type: m.regex ? 'RegularExpression' : 'Exact', service, method });
      }
      if (m.headers.length) out.headers = m.headers;
      return out;
    });

const grpcRuleArb = (options: WorldOptions) =>
  fc
    .record({
      matches: fc.array(grpcMatchArb(options), { maxLength: 2 }),
      filters: fc.array(
        fc.oneof(
          headerModifierArb.map((m) => ({ type: 'RequestHeaderModifier', requestHeaderModifier: m })),
          headerModifierArb.map((m) => ({ type: 'ResponseHeaderModifier', responseHeaderModifier: m })),
          mirrorArb.map((m) => ({ type: 'RequestMirror', requestMirror: m })),
        ),
        { maxLength: 2 },
      ),
      backendRefs: backendRefsArb(2),
    })
    .map((r) => {
      const seen = new Set<string>();
      const filters = (r.filters as Obj[]).filter((f) => {
        const t = f.type as string;
        if (t === 'RequestMirror') return true;
        if (seen.has(t)) return false;
        seen.add(t);
        return true;
      });
      const out: Obj = {};
      if (r.matches.length) out.matches = r.matches;
      if (filters.length) out.filters = filters;
      if (r.backendRefs.length) out.backendRefs = r.backendRefs;
      return out;
    });

function routeObject(kind: string, name: string, namespace: string, created: string, spec: Obj): KubeObject {
  return { apiVersion: `${GROUP}/v1`, kind, metadata: meta(name, namespace, created), spec };
}

/** Half the routes simply name default/gw from the default namespace, so that most attach. */
const routeCommon = fc.record({
  name: pick(ROUTE_NAMES),
  namespace: fc.oneof(fc.constant('default'), namespaceArb),
  created: pick(CREATED),
  parentRefs: fc.oneof(fc.constant([{ name: 'gw' }]), parentRefsArb),
  hostnames: routeHostnamesArb,
});

const httpRouteArb = (options: WorldOptions): fc.Arbitrary<KubeObject> =>
  fc.tuple(routeCommon, fc.array(httpRuleArb(options), { minLength: 1, maxLength: 3 })).map(([c, rules]) =>
    routeObject('HTTPRoute', c.name, c.namespace, c.created, {
      parentRefs: c.parentRefs,
      ...(c.hostnames.length ? { hostnames: c.hostnames } : {}),
      rules,
    }),
  );

const grpcRouteArb = (options: WorldOptions): fc.Arbitrary<KubeObject> =>
  fc.tuple(routeCommon, fc.array(grpcRuleArb(options), { maxLength: 2 })).map(([c, rules]) =>
    routeObject('GRPCRoute', c.name, c.namespace, c.created, {
      parentRefs: c.parentRefs,
      ...(c.hostnames.length ? { hostnames: c.hostnames } : {}),
      ...(rules.length ? { rules } : {}),
    }),
  );

const tlsRouteArb: fc.Arbitrary<KubeObject> = fc
  .tuple(
    routeCommon,
    fc.uniqueArray(pick(HOSTNAMES), { minLength: 1, maxLength: 2 }),
    fc.array(backendRefArb, { minLength: 1, maxLength: 2 }),
  )
  .map(([c, hostnames, backendRefs]) =>
    routeObject('TLSRoute', c.name, c.namespace, c.created, {
      parentRefs: c.parentRefs,
      hostnames,
      rules: [{ backendRefs }],
    }),
  );

// ---------------------------------------------------------------------------------------------
// Services, EndpointSlices, ReferenceGrants, Namespaces, GatewayClasses

const appProtocolArb = maybe(pick(['kubernetes.io/h2c', 'http', 'https', 'kubernetes.io/wss']), 0.3);

/** Usually both Service ports (80 named "http", 8080 named "grpc"), so most backendRefs resolve. */
const serviceArbIn = (
  name: fc.Arbitrary<string>,
  namespace: fc.Arbitrary<string>,
): fc.Arbitrary<KubeObject> =>
  fc
    .record({
      name,
      namespace,
      created: pick(CREATED),
      which: fc.constantFrom('both', 'both', 'both', 'http', 'grpc'),
      httpTarget: pick([8080, 9090]),
      grpcTarget: pick([8080, 9090]),
      httpApp: appProtocolArb,
      grpcApp: appProtocolArb,
    })
    .map((s) => {
      const ports: Obj[] = [];
      if (s.which !== 'grpc')
        ports.push(
          dropUndefined({
            name: 'http',
            port: 80,
            targetPort: s.httpTarget,
            appProtocol: s.httpApp,
            protocol: 'TCP',
          }),
        );
      if (s.which !== 'http')
        ports.push(
          dropUndefined({
            name: 'grpc',
            port: 8080,
            targetPort: s.grpcTarget,
            appProtocol: s.grpcApp,
            protocol: 'TCP',
          }),
        );
      return {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta(s.name, s.namespace, s.created),
        spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', ports },
      };
    });

const serviceArb = serviceArbIn(pick(SERVICE_NAMES), namespaceArb);

/** Each pooled Service name in the default namespace (where most routes are) with probability 0.85. */
const defaultServicesArb: fc.Arbitrary<KubeObject[]> = fc
  .tuple(...SERVICE_NAMES.map((name) => maybe(serviceArbIn(fc.constant(name), fc.constant('default')), 0.85)))
  .map((xs) => xs.filter((x): x is KubeObject => x !== undefined));

const endpointSliceArb: fc.Arbitrary<KubeObject> = fc
  .record({
    service: pick(SERVICE_NAMES),
    suffix: pick(['x1', 'x2']),
    namespace: namespaceArb,
    created: pick(CREATED),
    ports: fc.uniqueArray(
      fc.record({ name: pick(['http', 'http', 'grpc', 'grpc', 'tcp', '']), port: pick([8080, 9090, 1]) }),
      { minLength: 1, maxLength: 2, selector: (p) => p.name },
    ),
    endpoints: fc.array(
      fc.record({
        addresses: fc.uniqueArray(fc.integer({ min: 1, max: 254 }), { minLength: 1, maxLength: 2 }),
        ready: maybe(fc.boolean(), 0.4),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  })
  .map((e) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: meta(`${e.service}-${e.suffix}`, e.namespace, e.created, {
      'kubernetes.io/service-name': e.service,
    }),
    addressType: 'IPv4',
    ports: e.ports.map((p) => ({ name: p.name, port: p.port, protocol: 'TCP' })),
    endpoints: e.endpoints.map((ep) => ({
      addresses: ep.addresses.map((n) => `192.0.2.${n}`),
      ...(ep.ready !== undefined ? { conditions: { ready: ep.ready } } : {}),
    })),
  }));

const referenceGrantArb: fc.Arbitrary<KubeObject> = fc
  .record({
    // Grants matter for references out of the default namespace, where most referrers are.
    namespace: pick(['team-a', 'team-b']),
    fromKind: pick(['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'Gateway', 'ListenerSet']),
    fromNamespace: fc.constantFrom('default', 'default', 'default', 'team-a'),
    toKind: pick(['Service', 'Secret']),
    toName: maybe(fc.oneof(pick(SERVICE_NAMES), pick(SECRET_NAMES)), 0.5),
    created: pick(CREATED),
  })
  .map((g) => ({
    apiVersion: `${GROUP}/v1beta1`,
    kind: 'ReferenceGrant',
    metadata: meta(`grant-${g.fromKind.toLowerCase()}-${g.toKind.toLowerCase()}`, g.namespace, g.created),
    spec: {
      from: [{ group: GROUP, kind: g.fromKind, namespace: g.fromNamespace }],
      to: [{ group: '', kind: g.toKind, ...(g.toName ? { name: g.toName } : {}) }],
    },
  }));

const namespaceObjectArb: fc.Arbitrary<KubeObject> = fc
  .record({ name: pick(NAMESPACES), env: maybe(pick(['prod', 'dev'])), created: pick(CREATED) })
  .map((n) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: n.name,
      uid: `uid-ns-${n.name}`,
      creationTimestamp: n.created,
      labels: { 'kubernetes.io/metadata.name': n.name, ...(n.env ? { env: n.env } : {}) },
    },
  }));

function gatewayClassObject(name: string, controllerName: string): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'GatewayClass',
    metadata: { name, uid: `uid-class-${name}`, generation: 1, creationTimestamp: CREATED[0] },
    spec: { controllerName },
  };
}

// ---------------------------------------------------------------------------------------------
// Worlds

/** Store key of an object, as the store builds it (`Kind/namespace/name`). */
export function keyOfObject(o: KubeObject): string {
  return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** The first object of each key: later ones would replace it in a store, which is an edit. */
function uniqueByKey(objects: KubeObject[]): KubeObject[] {
  const seen = new Set<string>();
  return objects.filter((o) => {
    const k = keyOfObject(o);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * Objects as one multi-document YAML file, each Secret generated here written with `stringData`
 * holding `${NAME}` fixture tokens (the form test/gateway/golden inputs use), so that a failing
 * world can be read, and replayed as a golden case or with `convoy serve --from-dir` once the
 * tokens are replaced by the PEM texts of ./certs.
 */
export function worldYaml(objects: readonly KubeObject[]): string {
  return objects
    .map((o) => {
      const content = o.kind === 'Secret' ? secretContentOf(o) : undefined;
      const shown = content
        ? { ...o, data: undefined, stringData: { 'tls.crt': content.crt, 'tls.key': content.key } }
        : o;
      return stringify(shown, { lineWidth: 0 });
    })
    .join('---\n');
}

/** Makes fast-check print a generated value (a counterexample) as YAML. */
function printedAsYaml<T extends object>(value: T, yaml: () => string): T {
  Object.defineProperty(value, fc.toStringMethod, { value: yaml, enumerable: false });
  return value;
}

/**
 * A world: Convoy's GatewayClass (plus another controller's), then 1–3 Gateways, up to 3
 * ListenerSets, 5 HTTPRoutes, 2 GRPCRoutes, 2 TLSRoutes, 1–4 Secrets, 3 Services with up to 3
 * EndpointSlices, 2 ReferenceGrants and 3 Namespaces. Keys are unique (first one wins).
 */
export function worldArb(options: WorldOptions = {}): fc.Arbitrary<KubeObject[]> {
  return fc
    .record({
      namespaces: fc.array(namespaceObjectArb, { maxLength: 3 }),
      mainGateway: mainGatewayArb,
      gateways: fc.array(gatewayArb, { maxLength: 2 }),
      listenerSets: fc.array(listenerSetArb, { maxLength: 3 }),
      httpRoutes: fc.array(httpRouteArb(options), { maxLength: 5 }),
      grpcRoutes: fc.array(grpcRouteArb(options), { maxLength: 2 }),
      tlsRoutes: fc.array(tlsRouteArb, { maxLength: 2 }),
      secrets: fc.array(secretArb, { minLength: 1, maxLength: 5 }),
      services: defaultServicesArb,
      moreServices: fc.array(serviceArbIn(pick(SERVICE_NAMES), pick(['team-a', 'team-b'])), { maxLength: 2 }),
      endpointSlices: fc.array(endpointSliceArb, { minLength: 1, maxLength: 4 }),
      referenceGrants: fc.array(referenceGrantArb, { maxLength: 2 }),
    })
    .map((w) => {
      const objects = uniqueByKey([
        gatewayClassObject('convoy', CONTROLLER),
        gatewayClassObject('other', OTHER_CONTROLLER),
        ...w.namespaces,
        w.mainGateway,
        ...w.gateways,
        ...w.listenerSets,
        ...w.httpRoutes,
        ...w.grpcRoutes,
        ...w.tlsRoutes,
        ...w.secrets,
        ...w.services,
        ...w.moreServices,
        ...w.endpointSlices,
        ...w.referenceGrants,
      ]);
      return printedAsYaml(objects, () => '\n' + worldYaml(objects));
    });
}

/** A world before and after one object is added (the object is the newest of the world). */
export interface WorldAddition {
  before: KubeObject[];
  added: KubeObject;
}

/** One object of any kind but GatewayClass, weighted towards the kinds that share resources. */
function anyObjectArb(options: WorldOptions): fc.Arbitrary<KubeObject> {
  return fc.oneof(
    { weight: 3, arbitrary: httpRouteArb(options) },
    { weight: 1, arbitrary: grpcRouteArb(options) },
    { weight: 2, arbitrary: tlsRouteArb },
    { weight: 3, arbitrary: listenerSetArb },
    { weight: 2, arbitrary: secretArb },
    { weight: 2, arbitrary: serviceArb },
    { weight: 1, arbitrary: endpointSliceArb },
    { weight: 1, arbitrary: referenceGrantArb },
    { weight: 1, arbitrary: namespaceObjectArb },
    { weight: 1, arbitrary: gatewayArb },
  );
}

/**
 * A world and one object added to it. The object is generated on its own (so each shrinks
 * independently), any object of the world with its key is left out of `before` (adding it is then
 * a creation, not an edit), and it gets a creationTimestamp later than every other object's, as a
 * newly created object has.
 */
export function worldAdditionArb(options: WorldOptions = {}): fc.Arbitrary<WorldAddition> {
  return fc.tuple(worldArb(options), anyObjectArb(options)).map(([objects, generated]) => {
    const added: KubeObject = {
      ...generated,
      metadata: { ...generated.metadata, creationTimestamp: ADDED_CREATED },
    };
    const before = objects.filter((o) => keyOfObject(o) !== keyOfObject(added));
    return printedAsYaml(
      { before, added },
      () => `\nbefore:\n${worldYaml(before)}\nadded:\n${worldYaml([added])}`,
    );
  });
}
