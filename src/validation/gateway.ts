/**
 * The Gateway API v1.6.1 standard-channel CRD schemas (`spec` of each kind), written by hand
 * from config/crd/standard/gateway.networking.k8s.io_*.yaml, with every x-kubernetes-validations
 * rule ported to TypeScript. Each rule's message is the CRD's message, verbatim, and the CEL
 * expression it implements is quoted in a comment (shortened where it repeats).
 *
 * test/validation/crd-parity.test.ts compares these schemas with the real CRDs whenever they
 * are available locally (Go module cache or the e2e cache), so drift is caught.
 */
import { isIP, isIPv4, isIPv6 } from 'node:net';
import type { ArrayNode, ObjectNode, Rule, SchemaNode } from './schema';
import { arr, bool, int, map, obj, rule, str, withRules } from './schema';

// ---------------------------------------------------------------------------------------------
// Patterns, verbatim from the CRDs.

const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const HOSTNAME = '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const GROUP = '^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const KIND = '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$';
const NAMESPACE = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const HEADER_NAME = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$";
const DURATION = '^([0-9]{1,5}(h|m|s|ms)){1,4}$';
const CONTROLLER_NAME =
  "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$";
const PROTOCOL =
  '^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9]+$';
const ADDRESS_TYPE =
  "^Hostname|IPAddress|NamedAddress|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$";
const LABEL_VALUE = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';
const CORS_ORIGIN =
  '(^\\*$)|(^(http(s)?):\\/\\/(((\\*\\.)?([a-zA-Z0-9\\-]+\\.)*[a-zA-Z0-9-]+|\\*)(:([0-9]{1,5}))?)$)';
/** Used inside CEL rules (not as schema patterns). */
const QUALIFIED_KEY_RE =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$/;
const RFC1123_RE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$/;
const HOSTNAME_RE = new RegExp(HOSTNAME);
const PATH_CHARS_RE = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$/;
const GRPC_SERVICE_RE = /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i;
const GRPC_METHOD_RE = /^[A-Za-z_][A-Za-z_0-9]*$/;

// ---------------------------------------------------------------------------------------------
// Small shared types

type Obj = Record<string, unknown>;
const has = (o: Obj, k: string): boolean => o[k] !== undefined && o[k] !== null;
/** Indexes (as `[i]`) of the elements failing a per-element predicate. */
function failing<T>(list: T[], ok: (item: T, i: number) => boolean): string[] {
  const out: string[] = [];
  list.forEach((item, i) => {
    if (!ok(item, i)) out.push(`[${i}]`);
  });
  return out;
}
/** CEL `self.all(x, self.exists_one(y, same(x, y)))`: the later duplicates are reported. */
function uniqueBy<T>(list: T[], same: (a: T, b: T) => boolean): string[] {
  return failing(list, (a) => list.filter((b) => same(a, b)).length === 1);
}

const group = (dflt?: string) =>
  str({ maxLength: 253, pattern: GROUP, ...(dflt !== undefined ? { default: dflt } : {}) });
const kind = (dflt?: string) =>
  str({ minLength: 1, maxLength: 63, pattern: KIND, ...(dflt !== undefined ? { default: dflt } : {}) });
const objectName = () => str({ minLength: 1, maxLength: 253 });
const namespace = () => str({ minLength: 1, maxLength: 63, pattern: NAMESPACE });
const port = () => int({ format: 'int32', minimum: 1, maximum: 65535 });
const sectionName = () => str({ minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN });
const hostname = () => str({ minLength: 1, maxLength: 253, pattern: HOSTNAME });
const preciseHostname = () => str({ minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN });

const labelSelector = () =>
  obj({
    matchExpressions: arr(
      obj({ key: str(), operator: str(), values: arr(str()) }, { required: ['key', 'operator'] }),
    ),
    matchLabels: map(str()),
  });

/** LocalObjectReference / ParametersReference style refs with all three fields required. */
const localRef = () =>
  obj({ group: group(), kind: kind(), name: objectName() }, { required: ['group', 'kind', 'name'] });

const secretRef = () =>
  obj(
    { group: group(''), kind: kind('Secret'), name: objectName(), namespace: namespace() },
    { required: ['name'] },
  );

const caCertificateRefs = () =>
  arr(
    obj(
      { group: group(), kind: kind(), name: objectName(), namespace: namespace() },
      { required: ['group', 'kind', 'name'] },
    ),
    { minItems: 1, maxItems: 16 },
  );

// ---------------------------------------------------------------------------------------------
// GatewayClass

export const gatewayClassSpec: ObjectNode = obj(
  {
    controllerName: withRules(str({ minLength: 1, maxLength: 253, pattern: CONTROLLER_NAME }), {
      // self == oldSelf
      message: 'Value is immutable',
      check: () => true,
      transition: true,
    }),
    description: str({ maxLength: 64 }),
    parametersRef: obj(
      { group: group(), kind: kind(), name: objectName(), namespace: namespace() },
      { required: ['group', 'kind', 'name'] },
    ),
  },
  { required: ['controllerName'] },
);

// ---------------------------------------------------------------------------------------------
// Listeners (Gateway and ListenerSet)

interface Listener {
  name: string;
  port: number;
  protocol: string;
  hostname?: string;
  tls?: { mode?: string; certificateRefs?: unknown[]; options?: Obj };
}

const listenerTls = withRules(
  obj({
    certificateRefs: arr(secretRef(), { maxItems: 64 }),
    mode: str({ enum: ['Terminate', 'Passthrough'], default: 'Terminate' }),
    options: map(str({ minLength: 0, maxLength: 4096 }), { maxProperties: 16 }),
  }),
  // self.mode == 'Terminate' ? size(self.certificateRefs) > 0 || size(self.options) > 0 : true
  rule<Listener['tls'] & Obj>(
    'certificateRefs or options must be specified when mode is Terminate',
    (t) =>
      t.mode !== 'Terminate' ||
      (t.certificateRefs?.length ?? 0) > 0 ||
      Object.keys(t.options ?? {}).length > 0,
  ),
);

const listener = obj(
  {
    allowedRoutes: obj(
      {
        kinds: arr(obj({ group: group('gateway.networking.k8s.io'), kind: kind() }, { required: ['kind'] }), {
          maxItems: 8,
        }),
        namespaces: obj(
          {
            from: str({ enum: ['All', 'Selector', 'Same'], default: 'Same' }),
            selector: labelSelector(),
          },
          { default: { from: 'Same' } },
        ),
      },
      { default: { namespaces: { from: 'Same' } } },
    ),
    hostname: hostname(),
    name: sectionName(),
    port: port(),
    protocol: str({ minLength: 1, maxLength: 255, pattern: PROTOCOL }),
    tls: listenerTls,
  },
  { required: ['name', 'port', 'protocol'] },
);

const sameHostname = (a: Listener, b: Listener) =>
  a.hostname !== undefined && b.hostname !== undefined
    ? a.hostname === b.hostname
    : a.hostname === undefined && b.hostname === undefined;

function listenerRules(forListenerSet: boolean): Rule[] {
  return [
    // self.all(l, l.protocol in ['HTTP', 'TCP', 'UDP'] ? !has(l.tls) : true)
    rule<Listener[]>("tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']", (ls) =>
      failing(ls, (l) => !['HTTP', 'TCP', 'UDP'].includes(l.protocol) || l.tls === undefined),
    ),
    // self.all(l, (l.protocol == 'HTTPS' && has(l.tls)) ? (l.tls.mode == '' || l.tls.mode == 'Terminate') : true)
    rule<Listener[]>('tls mode must be Terminate for protocol HTTPS', (ls) =>
      failing(
        ls,
        (l) => !(l.protocol === 'HTTPS' && l.tls) || l.tls.mode === '' || l.tls.mode === 'Terminate',
      ),
    ),
    // self.all(l, (l.protocol == 'TLS' ? has(l.tls) && has(l.tls.mode) && l.tls.mode != '' : true))
    rule<Listener[]>('tls mode must be set for protocol TLS', (ls) =>
      failing(ls, (l) => l.protocol !== 'TLS' || (!!l.tls && l.tls.mode !== undefined && l.tls.mode !== '')),
    ),
    // self.all(l, l.protocol in ['TCP', 'UDP'] ? (!has(l.hostname) || l.hostname == '') : true)
    rule<Listener[]>("hostname must not be specified for protocols ['TCP', 'UDP']", (ls) =>
      failing(
        ls,
        (l) => !['TCP', 'UDP'].includes(l.protocol) || l.hostname === undefined || l.hostname === '',
      ),
    ),
    // self.all(l1, self.exists_one(l2, l1.name == l2.name))  (the ListenerSet CRD keeps "Gateway")
    rule<Listener[]>('Listener name must be unique within the Gateway', (ls) =>
      uniqueBy(ls, (a, b) => a.name === b.name),
    ),
    // Gateway:     self.all(l1, self.exists_one(l2, l1.port == l2.port && l1.protocol == l2.protocol && <same hostname>))
    // ListenerSet: self.all(l1, !has(l1.port) || self.exists_one(l2, has(l2.port) && …))
    rule<Listener[]>('Combination of port, protocol and hostname must be unique for each listener', (ls) =>
      failing(
        ls,
        (a) =>
          (forListenerSet && a.port === undefined) ||
          ls.filter(
            (b) =>
              (!forListenerSet || b.port !== undefined) &&
              a.port === b.port &&
              a.protocol === b.protocol &&
              sameHostname(a, b),
          ).length === 1,
      ),
    ),
  ];
}

const listeners = (forListenerSet: boolean): ArrayNode =>
  arr(listener, {
    minItems: 1,
    maxItems: 64,
    listType: 'map',
    listMapKeys: ['name'],
    rules: listenerRules(forListenerSet),
  });

// ---------------------------------------------------------------------------------------------
// Gateway

interface Address {
  type: string;
  value?: string;
}

const labelKeyRules = (what: 'Annotation' | 'Label', whose: 'annotation' | 'label'): Rule[] => [
  // self.all(key, key.matches(r"""^([a-z0-9]…/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$"""))
  rule<Obj>(
    `${what} keys must be in the form of an optional DNS subdomain prefix followed by a required name segment of up to 63 characters.`,
    (m) => Object.keys(m).every((k) => QUALIFIED_KEY_RE.test(k)),
  ),
  // self.all(key, key.split("/")[0].size() < 253)
  rule<Obj>(
    `If specified, the ${whose} key's prefix must be a DNS subdomain not longer than 253 characters in total.`,
    (m) => Object.keys(m).every((k) => k.split('/')[0].length < 253),
  ),
];

const address = withRules(
  obj({
    type: str({ minLength: 1, maxLength: 253, pattern: ADDRESS_TYPE, default: 'IPAddress' }),
    value: str({ maxLength: 253 }),
  }),
  // self.type == 'Hostname' ? (!has(self.value) || self.value.matches(r"""<HOSTNAME>""")): true
  rule<Address>(
    'Hostname value must be empty or contain only valid characters (matching ^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$)',
    (a) => a.type !== 'Hostname' || a.value === undefined || HOSTNAME_RE.test(a.value),
  ),
  {
    // oneOf: [{type: IPAddress, value: ipv4|ipv6}, {type: not IPAddress}]
    message: 'value must be an IPv4 or IPv6 address when type is IPAddress',
    structural: true,
    check: (a: Address) =>
      a.type !== 'IPAddress' || a.value === undefined || isIPv4(a.value) || isIPv6(a.value),
  } as Rule,
);

export const gatewaySpec: ObjectNode = obj(
  {
    addresses: arr(address, {
      maxItems: 16,
      rules: [
        // self.all(a1, a1.type == 'IPAddress' && has(a1.value) ? self.exists_one(a2, a2.type == a1.type && has(a2.value) && a2.value == a1.value) : true)
        rule<Address[]>('IPAddress values must be unique', (as) =>
          failing(
            as,
            (a1) =>
              !(a1.type === 'IPAddress' && a1.value !== undefined) ||
              as.filter((a2) => a2.type === a1.type && a2.value === a1.value).length === 1,
          ),
        ),
        // the same for 'Hostname'
        rule<Address[]>('Hostname values must be unique', (as) =>
          failing(
            as,
            (a1) =>
              !(a1.type === 'Hostname' && a1.value !== undefined) ||
              as.filter((a2) => a2.type === a1.type && a2.value === a1.value).length === 1,
          ),
        ),
      ],
    }),
    allowedListeners: obj({
      namespaces: obj(
        {
          from: str({ enum: ['All', 'Selector', 'Same', 'None'], default: 'None' }),
          selector: labelSelector(),
        },
        { default: { from: 'None' } },
      ),
    }),
    gatewayClassName: str({ minLength: 1, maxLength: 253 }),
    infrastructure: obj({
      annotations: map(str({ minLength: 0, maxLength: 4096 }), {
        maxProperties: 16,
        rules: labelKeyRules('Annotation', 'annotation'),
      }),
      labels: map(str({ minLength: 0, maxLength: 63, pattern: LABEL_VALUE }), {
        maxProperties: 8,
        rules: labelKeyRules('Label', 'label'),
      }),
      parametersRef: localRef(),
    }),
    listeners: listeners(false),
    tls: obj({
      backend: obj({ clientCertificateRef: secretRef() }),
      frontend: obj(
        {
          default: obj({
            validation: obj(
              {
                caCertificateRefs: caCertificateRefs(),
                mode: str({ enum: ['AllowValidOnly', 'AllowInsecureFallback'], default: 'AllowValidOnly' }),
              },
              { required: ['caCertificateRefs'] },
            ),
          }),
          perPort: arr(
            obj(
              {
                port: port(),
                tls: obj({
                  validation: obj(
                    {
                      caCertificateRefs: caCertificateRefs(),
                      mode: str({
                        enum: ['AllowValidOnly', 'AllowInsecureFallback'],
                        default: 'AllowValidOnly',
                      }),
                    },
                    { required: ['caCertificateRefs'] },
                  ),
                }),
              },
              { required: ['port', 'tls'] },
            ),
            {
              maxItems: 64,
              listType: 'map',
              listMapKeys: ['port'],
              rules: [
                // self.all(t1, self.exists_one(t2, t1.port == t2.port))
                rule<{ port: number }[]>(
                  'Port for TLS configuration must be unique within the Gateway',
                  (ps) => uniqueBy(ps, (a, b) => a.port === b.port),
                ),
              ],
            },
          ),
        },
        { required: ['default'] },
      ),
    }),
  },
  { required: ['gatewayClassName', 'listeners'] },
);

// ---------------------------------------------------------------------------------------------
// ListenerSet

export const listenerSetSpec: ObjectNode = obj(
  {
    listeners: listeners(true),
    parentRef: obj(
      {
        group: group('gateway.networking.k8s.io'),
        kind: kind('Gateway'),
        name: objectName(),
        namespace: namespace(),
      },
      { required: ['name'] },
    ),
  },
  { required: ['listeners', 'parentRef'] },
);

// ---------------------------------------------------------------------------------------------
// Routes: shared parts

interface ParentRef {
  group: string;
  kind: string;
  name: string;
  namespace?: string;
  sectionName?: string;
}
const emptyNs = (p: ParentRef) => p.namespace === undefined || p.namespace === '';
const emptySection = (p: ParentRef) => p.sectionName === undefined || p.sectionName === '';
const sameParent = (a: ParentRef, b: ParentRef) =>
  a.group === b.group &&
  a.kind === b.kind &&
  a.name === b.name &&
  ((emptyNs(a) && emptyNs(b)) ||
    (a.namespace !== undefined && b.namespace !== undefined && a.namespace === b.namespace));

const parentRefs = (): ArrayNode =>
  arr(
    obj(
      {
        group: group('gateway.networking.k8s.io'),
        kind: kind('Gateway'),
        name: objectName(),
        namespace: namespace(),
        port: port(),
        sectionName: sectionName(),
      },
      { required: ['name'] },
    ),
    {
      maxItems: 32,
      rules: [
        // self.all(p1, self.all(p2, <same parent> ? (<p1 no section> == <p2 no section>) : true))
        rule<ParentRef[]>(
          'sectionName must be specified when parentRefs includes 2 or more references to the same parent',
          (ps) =>
            failing(ps, (p1) =>
              ps.every((p2) => !sameParent(p1, p2) || emptySection(p1) === emptySection(p2)),
            ),
        ),
        // self.all(p1, self.exists_one(p2, <same parent> && <same or both empty sectionName>))
        rule<ParentRef[]>(
          'sectionName must be unique when parentRefs includes 2 or more references to the same parent',
          (ps) =>
            uniqueBy(
              ps,
              (p1, p2) =>
                sameParent(p1, p2) &&
                ((emptySection(p1) && emptySection(p2)) ||
                  (p1.sectionName !== undefined &&
                    p2.sectionName !== undefined &&
                    p1.sectionName === p2.sectionName)),
            ),
        ),
      ],
    },
  );

const routeHostnames = () => arr(hostname(), { maxItems: 16 });

interface BackendRefLike {
  group: string;
  kind: string;
  port?: number;
}
// (size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true
const mustHavePort = rule<BackendRefLike>(
  'Must have port for Service reference',
  (b) => !(b.group.length === 0 && b.kind === 'Service') || b.port !== undefined,
);

const weight = () => int({ format: 'int32', minimum: 0, maximum: 1000000, default: 1 });

/**
 * A BackendObjectReference (group, kind, name, namespace, port; must have a port for a Service),
 * with the route-specific fields each CRD adds: `filters` (HTTP/GRPC backendRefs) and `weight`.
 */
const backendRef = (extra: { filters?: SchemaNode; weight?: SchemaNode } = {}) =>
  withRules(
    obj(
      {
        ...(extra.filters && { filters: extra.filters }),
        group: group(''),
        kind: kind('Service'),
        name: objectName(),
        namespace: namespace(),
        port: port(),
        ...(extra.weight && { weight: extra.weight }),
      },
      { required: ['name'] },
    ),
    mustHavePort,
  );

const headerModifier = () =>
  obj({
    add: arr(
      obj(
        {
          name: str({ minLength: 1, maxLength: 256, pattern: HEADER_NAME }),
          value: str({ minLength: 1, maxLength: 4096 }),
        },
        {
          required: ['name', 'value'],
        },
      ),
      { maxItems: 16, listType: 'map', listMapKeys: ['name'] },
    ),
    remove: arr(str(), { maxItems: 16, listType: 'set' }),
    set: arr(
      obj(
        {
          name: str({ minLength: 1, maxLength: 256, pattern: HEADER_NAME }),
          value: str({ minLength: 1, maxLength: 4096 }),
        },
        {
          required: ['name', 'value'],
        },
      ),
      { maxItems: 16, listType: 'map', listMapKeys: ['name'] },
    ),
  });

const requestMirror = () =>
  withRules(
    obj(
      {
        backendRef: backendRef(),
        fraction: withRules(
          obj(
            {
              denominator: int({ format: 'int32', minimum: 1, default: 100 }),
              numerator: int({ format: 'int32', minimum: 0 }),
            },
            { required: ['numerator'] },
          ),
          // self.numerator <= self.denominator
          rule<{ numerator: number; denominator: number }>(
            'numerator must be less than or equal to denominator',
            (f) => f.numerator <= f.denominator,
          ),
        ),
        percent: int({ format: 'int32', minimum: 0, maximum: 100 }),
      },
      { required: ['backendRef'] },
    ),
    // !(has(self.percent) && has(self.fraction))
    rule<Obj>(
      'Only one of percent or fraction may be specified in HTTPRequestMirrorFilter',
      (m) => !(has(m, 'percent') && has(m, 'fraction')),
    ),
  );

const extensionRef = () => localRef();

/** Rules tying filter.type to the field it sets, for the given (type, field) pairs. */
function filterTypeRules(pairs: [string, string][]): Rule[] {
  const out: Rule[] = [];
  for (const [type, field] of pairs) {
    // !(has(self.<field>) && self.type != '<type>')
    out.push(
      rule<Obj>(
        `filter.${field} must be nil if the filter.type is not ${type}`,
        (f) => !(has(f, field) && f.type !== type),
      ),
    );
    // !(!has(self.<field>) && self.type == '<type>')
    out.push(
      rule<Obj>(
        `filter.${field} must be specified for ${type} filter.type`,
        (f) => !(!has(f, field) && f.type === type),
      ),
    );
  }
  return out;
}

/** self.filter(f, f.type == '<type>').size() <= 1 */
const notRepeated = (type: string) =>
  rule<{ type: string }[]>(
    `${type} filter cannot be repeated`,
    (fs) => fs.filter((f) => f.type === type).length <= 1,
  );

// ---------------------------------------------------------------------------------------------
// HTTPRoute

interface PathModifier {
  type: string;
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}
const pathModifier = () =>
  obj(
    {
      replaceFullPath: str({ maxLength: 1024 }),
      replacePrefixMatch: str({ maxLength: 1024 }),
      type: str({ enum: ['ReplaceFullPath', 'ReplacePrefixMatch'] }),
    },
    {
      required: ['type'],
      rules: [
        // self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) : true
        rule<PathModifier>(
          "replaceFullPath must be specified when type is set to 'ReplaceFullPath'",
          (p) => p.type !== 'ReplaceFullPath' || p.replaceFullPath !== undefined,
        ),
        // has(self.replaceFullPath) ? self.type == 'ReplaceFullPath' : true
        rule<PathModifier>(
          "type must be 'ReplaceFullPath' when replaceFullPath is set",
          (p) => p.replaceFullPath === undefined || p.type === 'ReplaceFullPath',
        ),
        // self.type == 'ReplacePrefixMatch' ? has(self.replacePrefixMatch) : true
        rule<PathModifier>(
          "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'",
          (p) => p.type !== 'ReplacePrefixMatch' || p.replacePrefixMatch !== undefined,
        ),
        // has(self.replacePrefixMatch) ? self.type == 'ReplacePrefixMatch' : true
        rule<PathModifier>(
          "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set",
          (p) => p.replacePrefixMatch === undefined || p.type === 'ReplacePrefixMatch',
        ),
      ],
    },
  );

// !('*' in self && self.size() > 1)
const noWildcardWithOthers = (message: string) =>
  rule<string[]>(message, (xs) => !(xs.includes('*') && xs.length > 1));

const cors = () =>
  obj({
    allowCredentials: bool(),
    allowHeaders: arr(str({ minLength: 1, maxLength: 256, pattern: HEADER_NAME }), {
      maxItems: 64,
      listType: 'set',
      rules: [noWildcardWithOthers("AllowHeaders cannot contain '*' alongside other methods")],
    }),
    allowMethods: arr(
      str({ enum: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', '*'] }),
      {
        maxItems: 9,
        listType: 'set',
        rules: [noWildcardWithOthers("AllowMethods cannot contain '*' alongside other methods")],
      },
    ),
    allowOrigins: arr(str({ minLength: 1, maxLength: 253, pattern: CORS_ORIGIN }), {
      maxItems: 64,
      listType: 'set',
      rules: [noWildcardWithOthers("AllowOrigins cannot contain '*' alongside other origins")],
    }),
    exposeHeaders: arr(str({ minLength: 1, maxLength: 256, pattern: HEADER_NAME }), {
      maxItems: 64,
      listType: 'set',
    }),
    maxAge: int({ format: 'int32', minimum: 1, default: 5 }),
  });

const HTTP_FILTER_TYPES = [
  'RequestHeaderModifier',
  'ResponseHeaderModifier',
  'RequestMirror',
  'RequestRedirect',
  'URLRewrite',
  'ExtensionRef',
  'CORS',
];

const httpFilter = obj(
  {
    cors: cors(),
    extensionRef: extensionRef(),
    requestHeaderModifier: headerModifier(),
    requestMirror: requestMirror(),
    requestRedirect: obj({
      hostname: preciseHostname(),
      path: pathModifier(),
      port: port(),
      scheme: str({ enum: ['http', 'https'] }),
      statusCode: int({ enum: [301, 302, 303, 307, 308], default: 302 }),
    }),
    responseHeaderModifier: headerModifier(),
    type: str({ enum: HTTP_FILTER_TYPES }),
    urlRewrite: obj({ hostname: preciseHostname(), path: pathModifier() }),
  },
  {
    required: ['type'],
    rules: filterTypeRules([
      ['CORS', 'cors'],
      ['RequestHeaderModifier', 'requestHeaderModifier'],
      ['ResponseHeaderModifier', 'responseHeaderModifier'],
      ['RequestMirror', 'requestMirror'],
      ['RequestRedirect', 'requestRedirect'],
      ['URLRewrite', 'urlRewrite'],
      ['ExtensionRef', 'extensionRef'],
    ]),
  },
);

const httpFilters = () =>
  arr(httpFilter, {
    maxItems: 16,
    rules: [
      // !(self.exists(f, f.type == 'RequestRedirect') && self.exists(f, f.type == 'URLRewrite'))
      rule<{ type: string }[]>(
        'May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both',
        (fs) => !(fs.some((f) => f.type === 'RequestRedirect') && fs.some((f) => f.type === 'URLRewrite')),
      ),
      notRepeated('CORS'),
      notRepeated('RequestHeaderModifier'),
      notRepeated('ResponseHeaderModifier'),
      notRepeated('RequestRedirect'),
      notRepeated('URLRewrite'),
    ],
  });

interface PathMatch {
  type: string;
  value: string;
}
const exactOrPrefix = (p: PathMatch) => p.type === 'Exact' || p.type === 'PathPrefix';
const pathRule = (message: string, ok: (value: string) => boolean) =>
  rule<PathMatch>(message, (p) => !exactOrPrefix(p) || ok(p.value));

const pathMatch = obj(
  {
    type: str({ enum: ['Exact', 'PathPrefix', 'RegularExpression'], default: 'PathPrefix' }),
    value: str({ maxLength: 1024, default: '/' }),
  },
  {
    default: { type: 'PathPrefix', value: '/' },
    rules: [
      // (self.type in ['Exact','PathPrefix']) ? self.value.startsWith('/') : true
      pathRule(
        "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
        (v) => v.startsWith('/'),
      ),
      // … ? !self.value.contains('//') : true   (and the same for the others below)
      pathRule("must not contain '//' when type one of ['Exact', 'PathPrefix']", (v) => !v.includes('//')),
      pathRule("must not contain '/./' when type one of ['Exact', 'PathPrefix']", (v) => !v.includes('/./')),
      pathRule(
        "must not contain '/../' when type one of ['Exact', 'PathPrefix']",
        (v) => !v.includes('/../'),
      ),
      pathRule("must not contain '%2f' when type one of ['Exact', 'PathPrefix']", (v) => !v.includes('%2f')),
      pathRule("must not contain '%2F' when type one of ['Exact', 'PathPrefix']", (v) => !v.includes('%2F')),
      pathRule("must not contain '#' when type one of ['Exact', 'PathPrefix']", (v) => !v.includes('#')),
      pathRule("must not end with '/..' when type one of ['Exact', 'PathPrefix']", (v) => !v.endsWith('/..')),
      pathRule("must not end with '/.' when type one of ['Exact', 'PathPrefix']", (v) => !v.endsWith('/.')),
      // self.type in ['Exact','PathPrefix'] || self.type == 'RegularExpression'
      rule<PathMatch>(
        "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']",
        (p) => exactOrPrefix(p) || p.type === 'RegularExpression',
      ),
      // (self.type in ['Exact','PathPrefix']) ? self.value.matches(r"""^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$""") : true
      pathRule(
        "must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) for types ['Exact', 'PathPrefix']",
        (v) => PATH_CHARS_RE.test(v),
      ),
    ],
  },
);

const headerMatch = (valueMax: number) =>
  arr(
    obj(
      {
        name: str({ minLength: 1, maxLength: 256, pattern: HEADER_NAME }),
        type: str({ enum: ['Exact', 'RegularExpression'], default: 'Exact' }),
        value: str({ minLength: 1, maxLength: valueMax }),
      },
      { required: ['name', 'value'] },
    ),
    { maxItems: 16, listType: 'map', listMapKeys: ['name'] },
  );

const httpMatch = obj({
  headers: headerMatch(4096),
  method: str({ enum: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'] }),
  path: pathMatch,
  queryParams: headerMatch(1024),
});

/** Parses a GEP-2257 duration (already pattern-checked) into milliseconds. */
export function parseGatewayDuration(d: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const m of d.matchAll(/([0-9]+)(ms|h|m|s)/g)) total += Number(m[1]) * units[m[2]];
  return total;
}

interface Filter {
  type: string;
  requestRedirect?: { path?: PathModifier };
  urlRewrite?: { path?: PathModifier };
}
interface HTTPRule {
  matches: { path?: PathMatch }[];
  filters?: Filter[];
  backendRefs?: { filters?: Filter[] }[];
}
const prefixRewrite = (which: 'requestRedirect' | 'urlRewrite') => (f: Filter) => {
  const p = f[which]?.path;
  return !!p && p.type === 'ReplacePrefixMatch' && p.replacePrefixMatch !== undefined;
};
const onePrefixMatch = (r: HTTPRule) =>
  r.matches.length === 1 && r.matches[0].path !== undefined && r.matches[0].path.type === 'PathPrefix';
const exactlyOne = <T>(xs: T[] | undefined, p: (x: T) => boolean) => (xs ?? []).filter(p).length === 1;

const httpRule = obj(
  {
    backendRefs: arr(backendRef({ filters: httpFilters(), weight: weight() }), { maxItems: 16 }),
    filters: httpFilters(),
    matches: arr(httpMatch, { maxItems: 64, default: [{ path: { type: 'PathPrefix', value: '/' } }] }),
    name: sectionName(),
    timeouts: withRules(
      obj({ backendRequest: str({ pattern: DURATION }), request: str({ pattern: DURATION }) }),
      // !(has(self.request) && has(self.backendRequest) && duration(self.request) != duration('0s') && duration(self.backendRequest) > duration(self.request))
      rule<{ request?: string; backendRequest?: string }>(
        'backendRequest timeout cannot be longer than request timeout',
        (t) =>
          !(
            t.request !== undefined &&
            t.backendRequest !== undefined &&
            parseGatewayDuration(t.request) !== 0 &&
            parseGatewayDuration(t.backendRequest) > parseGatewayDuration(t.request)
          ),
      ),
    ),
  },
  {
    rules: [
      // (has(self.backendRefs) && size(self.backendRefs) > 0) ? (!has(self.filters) || self.filters.all(f, !has(f.requestRedirect))): true
      rule<HTTPRule>(
        'RequestRedirect filter must not be used together with backendRefs',
        (r) =>
          !((r.backendRefs?.length ?? 0) > 0) ||
          (r.filters ?? []).every((f) => f.requestRedirect === undefined),
      ),
      // (has(self.filters) && self.filters.exists_one(f, <redirect ReplacePrefixMatch>)) ? <exactly one PathPrefix match> : true
      rule<HTTPRule>(
        'When using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
        (r) => !exactlyOne(r.filters, prefixRewrite('requestRedirect')) || onePrefixMatch(r),
      ),
      rule<HTTPRule>(
        'When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
        (r) => !exactlyOne(r.filters, prefixRewrite('urlRewrite')) || onePrefixMatch(r),
      ),
      // (has(self.backendRefs) && self.backendRefs.exists_one(b, has(b.filters) && b.filters.exists_one(f, …))) ? … : true
      rule<HTTPRule>(
        'Within backendRefs, when using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
        (r) =>
          !exactlyOne(r.backendRefs, (b) => exactlyOne(b.filters, prefixRewrite('requestRedirect'))) ||
          onePrefixMatch(r),
      ),
      rule<HTTPRule>(
        'Within backendRefs, When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
        (r) =>
          !exactlyOne(r.backendRefs, (b) => exactlyOne(b.filters, prefixRewrite('urlRewrite'))) ||
          onePrefixMatch(r),
      ),
    ],
  },
);

const totalMatches = (rules: { matches?: unknown[] }[]) =>
  rules.slice(0, 16).reduce((n, r) => n + (r.matches?.length ?? 0), 0) <= 128;
const TOTAL_MATCHES_MESSAGE =
  'While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128';

export const httpRouteSpec: ObjectNode = obj({
  hostnames: routeHostnames(),
  parentRefs: parentRefs(),
  rules: arr(httpRule, {
    minItems: 1,
    maxItems: 16,
    default: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }] }],
    // (self.size() > 0 ? self[0].matches.size() : 0) + … + (self.size() > 15 ? self[15].matches.size() : 0) <= 128
    rules: [rule<{ matches?: unknown[] }[]>(TOTAL_MATCHES_MESSAGE, totalMatches)],
  }),
});

// ---------------------------------------------------------------------------------------------
// GRPCRoute

const grpcFilter = obj(
  {
    extensionRef: extensionRef(),
    requestHeaderModifier: headerModifier(),
    requestMirror: requestMirror(),
    responseHeaderModifier: headerModifier(),
    type: str({ enum: ['ResponseHeaderModifier', 'RequestHeaderModifier', 'RequestMirror', 'ExtensionRef'] }),
  },
  {
    required: ['type'],
    rules: filterTypeRules([
      ['RequestHeaderModifier', 'requestHeaderModifier'],
      ['ResponseHeaderModifier', 'responseHeaderModifier'],
      ['RequestMirror', 'requestMirror'],
      ['ExtensionRef', 'extensionRef'],
    ]),
  },
);

const grpcFilters = () =>
  arr(grpcFilter, {
    maxItems: 16,
    rules: [notRepeated('RequestHeaderModifier'), notRepeated('ResponseHeaderModifier')],
  });

interface GRPCMethod {
  type?: string;
  service?: string;
  method?: string;
}

const grpcMatch = obj({
  headers: headerMatch(4096),
  method: obj(
    {
      method: str({ maxLength: 1024 }),
      service: str({ maxLength: 1024 }),
      type: str({ enum: ['Exact', 'RegularExpression'], default: 'Exact' }),
    },
    {
      rules: [
        // has(self.type) ? has(self.service) || has(self.method) : true
        rule<GRPCMethod>(
          "One or both of 'service' or 'method' must be specified",
          (m) => m.type === undefined || m.service !== undefined || m.method !== undefined,
        ),
        // (!has(self.type) || self.type == 'Exact') && has(self.service) ? self.service.matches(r"""^(?i)\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$"""): true
        rule<GRPCMethod>(
          'service must only contain valid characters (matching ^(?i)\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$)',
          (m) =>
            !((m.type === undefined || m.type === 'Exact') && m.service !== undefined) ||
            GRPC_SERVICE_RE.test(m.service),
        ),
        // (!has(self.type) || self.type == 'Exact') && has(self.method) ? self.method.matches(r"""^[A-Za-z_][A-Za-z_0-9]*$"""): true
        rule<GRPCMethod>(
          'method must only contain valid characters (matching ^[A-Za-z_][A-Za-z_0-9]*$)',
          (m) =>
            !((m.type === undefined || m.type === 'Exact') && m.method !== undefined) ||
            GRPC_METHOD_RE.test(m.method),
        ),
      ],
    },
  ),
});

const grpcRule = obj({
  backendRefs: arr(backendRef({ filters: grpcFilters(), weight: weight() }), { maxItems: 16 }),
  filters: grpcFilters(),
  matches: arr(grpcMatch, { maxItems: 64 }),
  name: sectionName(),
});

export const grpcRouteSpec: ObjectNode = obj({
  hostnames: routeHostnames(),
  parentRefs: parentRefs(),
  rules: arr(grpcRule, {
    maxItems: 16,
    // (self.size() > 0 ? (has(self[0].matches) ? self[0].matches.size() : 0) : 0) + … <= 128
    rules: [rule<{ matches?: unknown[] }[]>(TOTAL_MATCHES_MESSAGE, totalMatches)],
  }),
});

// ---------------------------------------------------------------------------------------------
// TLSRoute

export const tlsRouteSpec: ObjectNode = obj(
  {
    hostnames: arr(hostname(), {
      minItems: 1,
      maxItems: 1024,
      rules: [
        // self.all(h, !isIP(h))
        rule<string[]>('Hostnames cannot contain an IP', (hs) => failing(hs, (h) => isIP(h) === 0)),
        // self.all(h, !h.contains('*') ? h.matches('^([a-z0-9]…)$') : true)
        rule<string[]>('Hostnames must be valid based on RFC-1123', (hs) =>
          failing(hs, (h) => h.includes('*') || RFC1123_RE.test(h)),
        ),
        // self.all(h, h.contains('*') ? (h.startsWith('*.') && h.substring(2).matches('^([a-z0-9]…)$')) : true)
        rule<string[]>(
          'Wildcards on hostnames must be the first label, and the rest of hostname must be valid based on RFC-1123',
          (hs) =>
            failing(hs, (h) => !h.includes('*') || (h.startsWith('*.') && RFC1123_RE.test(h.substring(2)))),
        ),
      ],
    }),
    parentRefs: parentRefs(),
    rules: arr(
      obj(
        {
          backendRefs: arr(backendRef({ weight: weight() }), { minItems: 1, maxItems: 16 }),
          name: sectionName(),
        },
        { required: ['backendRefs'] },
      ),
      { minItems: 1, maxItems: 1 },
    ),
  },
  { required: ['hostnames', 'rules'] },
);

// ---------------------------------------------------------------------------------------------
// ReferenceGrant

export const referenceGrantSpec: ObjectNode = obj(
  {
    from: arr(
      obj(
        { group: group(), kind: kind(), namespace: namespace() },
        { required: ['group', 'kind', 'namespace'] },
      ),
      { minItems: 1, maxItems: 16 },
    ),
    to: arr(obj({ group: group(), kind: kind(), name: objectName() }, { required: ['group', 'kind'] }), {
      minItems: 1,
      maxItems: 16,
    }),
  },
  { required: ['from', 'to'] },
);

// ---------------------------------------------------------------------------------------------

export interface GatewayKindSchema {
  /** Served versions of gateway.networking.k8s.io for this kind (standard channel, v1.6.1). */
  versions: string[];
  /** CRD file in config/crd/standard/ (used by the parity test). */
  crdFile: string;
  spec: SchemaNode;
}

export const GATEWAY_KIND_SCHEMAS: Record<string, GatewayKindSchema> = {
  GatewayClass: {
    versions: ['v1', 'v1beta1'],
    crdFile: 'gateway.networking.k8s.io_gatewayclasses.yaml',
    spec: gatewayClassSpec,
  },
  Gateway: {
    versions: ['v1', 'v1beta1'],
    crdFile: 'gateway.networking.k8s.io_gateways.yaml',
    spec: gatewaySpec,
  },
  ListenerSet: {
    versions: ['v1'],
    crdFile: 'gateway.networking.k8s.io_listenersets.yaml',
    spec: listenerSetSpec,
  },
  HTTPRoute: {
    versions: ['v1', 'v1beta1'],
    crdFile: 'gateway.networking.k8s.io_httproutes.yaml',
    spec: httpRouteSpec,
  },
  GRPCRoute: { versions: ['v1'], crdFile: 'gateway.networking.k8s.io_grpcroutes.yaml', spec: grpcRouteSpec },
  TLSRoute: { versions: ['v1'], crdFile: 'gateway.networking.k8s.io_tlsroutes.yaml', spec: tlsRouteSpec },
  ReferenceGrant: {
    versions: ['v1', 'v1beta1'],
    crdFile: 'gateway.networking.k8s.io_referencegrants.yaml',
    spec: referenceGrantSpec,
  },
};
