/**
 * Valid objects of every kind Convoy reads, used as the bases of the invalid fixtures and as
 * "must pass" cases. Plain data: no Convoy imports, so other tools can load it.
 */

export type Json = Record<string, unknown>;

const GW_API = 'gateway.networking.k8s.io/v1';

export function gateway(): Json {
  return {
    apiVersion: GW_API,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'default', labels: { app: 'convoy', 'example.com/tier': 'edge' } },
    spec: {
      gatewayClassName: 'convoy',
      allowedListeners: { namespaces: { from: 'Selector', selector: { matchLabels: { team: 'a' } } } },
      addresses: [
        { type: 'IPAddress', value: '10.0.0.1' },
        { type: 'IPAddress', value: 'fd00::1' },
        { type: 'Hostname', value: 'lb.example.com' },
        { value: '10.0.0.2' },
      ],
      infrastructure: {
        labels: { 'example.com/owner': 'team-a' },
        annotations: { 'example.com/note': 'anything goes here' },
        parametersRef: { group: 'example.com', kind: 'Params', name: 'p' },
      },
      listeners: [
        {
          name: 'http',
          port: 80,
          protocol: 'HTTP',
          allowedRoutes: {
            namespaces: { from: 'All' },
            kinds: [{ kind: 'HTTPRoute' }, { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' }],
          },
        },
        {
          name: 'https',
          port: 443,
          protocol: 'HTTPS',
          hostname: '*.example.com',
          tls: {
            certificateRefs: [
              { name: 'cert' },
              { kind: 'Secret', group: '', name: 'other', namespace: 'certs' },
            ],
          },
        },
        {
          name: 'https-options',
          port: 443,
          protocol: 'HTTPS',
          hostname: 'opts.example.com',
          tls: { mode: 'Terminate', options: { 'example.com/cert': 'x' } },
        },
        { name: 'tls', port: 8443, protocol: 'TLS', tls: { mode: 'Passthrough' } },
        {
          name: 'tls-terminate',
          port: 8444,
          protocol: 'TLS',
          tls: { mode: 'Terminate', certificateRefs: [{ name: 'c' }] },
        },
        { name: 'tcp', port: 9000, protocol: 'TCP' },
        { name: 'udp', port: 9000, protocol: 'UDP' },
        { name: 'custom', port: 9001, protocol: 'example.com/Custom' },
        { name: 'https-no-tls', port: 8445, protocol: 'HTTPS' },
      ],
      tls: {
        backend: { clientCertificateRef: { name: 'client' } },
        frontend: {
          default: { validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] } },
          perPort: [
            {
              port: 443,
              tls: {
                validation: {
                  mode: 'AllowInsecureFallback',
                  caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca2' }],
                },
              },
            },
          ],
        },
      },
    },
  };
}

export function listenerSet(): Json {
  return {
    apiVersion: GW_API,
    kind: 'ListenerSet',
    metadata: { name: 'ls', namespace: 'team-a' },
    spec: {
      parentRef: { name: 'gw', namespace: 'default' },
      listeners: [
        { name: 'http', port: 8080, protocol: 'HTTP', hostname: 'a.example.com' },
        {
          name: 'https',
          port: 8443,
          protocol: 'HTTPS',
          hostname: 'a.example.com',
          tls: { certificateRefs: [{ name: 'a' }] },
        },
        { name: 'tls', port: 8443, protocol: 'TLS', hostname: 'b.example.com', tls: { mode: 'Passthrough' } },
      ],
    },
  };
}

export function httpRoute(): Json {
  return {
    apiVersion: GW_API,
    kind: 'HTTPRoute',
    metadata: { name: 'route', namespace: 'default' },
    spec: {
      parentRefs: [
        { name: 'gw', sectionName: 'http' },
        { name: 'gw', sectionName: 'https' },
        {
          group: 'gateway.networking.k8s.io',
          kind: 'ListenerSet',
          name: 'ls',
          namespace: 'team-a',
          port: 8080,
        },
      ],
      hostnames: ['www.example.com', '*.example.org'],
      rules: [
        {
          name: 'main',
          matches: [
            {
              path: { type: 'PathPrefix', value: '/api' },
              headers: [
                { name: 'x-version', value: 'v1' },
                { name: 'x-Variant', type: 'RegularExpression', value: 'a.*' },
              ],
              queryParams: [{ name: 'q', value: '1' }],
              method: 'GET',
            },
            { path: { type: 'Exact', value: '/exact/path-1.html' } },
            { path: { type: 'RegularExpression', value: '^/re(gex)?$' } },
            { headers: [{ name: 'x-only-header', value: 'yes' }] },
          ],
          filters: [
            {
              type: 'RequestHeaderModifier',
              requestHeaderModifier: {
                set: [{ name: 'x-set', value: '1' }],
                add: [{ name: 'x-add', value: '2' }],
                remove: ['x-remove'],
              },
            },
            {
              type: 'ResponseHeaderModifier',
              responseHeaderModifier: { add: [{ name: 'x-r', value: 'v' }] },
            },
            {
              type: 'RequestMirror',
              requestMirror: { backendRef: { name: 'mirror', port: 80 }, percent: 10 },
            },
            {
              type: 'RequestMirror',
              requestMirror: { backendRef: { name: 'mirror2', port: 80 }, fraction: { numerator: 1 } },
            },
            {
              type: 'CORS',
              cors: {
                allowOrigins: ['https://a.example.com', 'http://*.example.org:8080'],
                allowMethods: ['GET', 'POST'],
                allowHeaders: ['x-a'],
                exposeHeaders: ['x-b'],
                allowCredentials: true,
                maxAge: 60,
              },
            },
            {
              type: 'URLRewrite',
              urlRewrite: {
                hostname: 'internal.example.com',
                path: { type: 'ReplaceFullPath', replaceFullPath: '/v1' },
              },
            },
            { type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Ext', name: 'e' } },
          ],
          backendRefs: [
            { name: 'svc', port: 8080, weight: 90 },
            {
              name: 'svc2',
              namespace: 'other',
              port: 8080,
              weight: 0,
              filters: [
                {
                  type: 'RequestHeaderModifier',
                  requestHeaderModifier: { set: [{ name: 'x-b', value: 'c' }] },
                },
              ],
            },
            { group: 'example.com', kind: 'Backend', name: 'custom' },
          ],
          timeouts: { request: '10s', backendRequest: '2s500ms' },
        },
        {
          matches: [{ path: { type: 'PathPrefix', value: '/old' } }],
          filters: [
            {
              type: 'RequestRedirect',
              requestRedirect: {
                scheme: 'https',
                hostname: 'new.example.com',
                port: 8443,
                statusCode: 301,
                path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/new' },
              },
            },
          ],
        },
        {
          filters: [
            {
              type: 'RequestRedirect',
              requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/x' } },
            },
          ],
        },
        { backendRefs: [{ name: 'svc', port: 80 }], timeouts: { request: '0s', backendRequest: '1h' } },
      ],
    },
  };
}

export function grpcRoute(): Json {
  return {
    apiVersion: GW_API,
    kind: 'GRPCRoute',
    metadata: { name: 'grpc', namespace: 'default' },
    spec: {
      parentRefs: [{ name: 'gw' }],
      hostnames: ['grpc.example.com'],
      rules: [
        {
          matches: [
            {
              method: { service: 'com.example.User', method: 'Login' },
              headers: [{ name: 'x-a', value: 'b' }],
            },
            { method: { service: '.pkg.Svc' } },
            { method: { type: 'RegularExpression', service: 'com\\.example\\..*' } },
            { method: { method: 'Get_2' } },
          ],
          filters: [
            { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-a', value: 'b' }] } },
            { type: 'RequestMirror', requestMirror: { backendRef: { name: 'm', port: 50051 } } },
          ],
          backendRefs: [{ name: 'grpc-svc', port: 50051 }],
        },
        { backendRefs: [{ name: 'grpc-svc', port: 50051 }] },
      ],
    },
  };
}

export function tlsRoute(): Json {
  return {
    apiVersion: GW_API,
    kind: 'TLSRoute',
    metadata: { name: 'tls', namespace: 'default' },
    spec: {
      parentRefs: [{ name: 'gw', sectionName: 'tls' }],
      hostnames: ['tls.example.com', '*.wild.example.com'],
      rules: [
        {
          name: 'only',
          backendRefs: [
            { name: 'tls-svc', port: 443, weight: 2 },
            { name: 'tls-svc2', port: 443 },
          ],
        },
      ],
    },
  };
}

export function backendTLSPolicy(): Json {
  return {
    apiVersion: GW_API,
    kind: 'BackendTLSPolicy',
    metadata: { name: 'policy' },
    spec: {
      targetRefs: [{ group: '', kind: 'Service', name: 'svc', sectionName: 'https' }],
      validation: {
        caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }],
        hostname: 'backend.example.com',
        subjectAltNames: [
          { type: 'Hostname', hostname: '*.example.com' },
          { type: 'URI', uri: 'spiffe://example.com/backend' },
        ],
      },
    },
  };
}

export function referenceGrant(): Json {
  return {
    apiVersion: GW_API,
    kind: 'ReferenceGrant',
    metadata: { name: 'grant', namespace: 'certs' },
    spec: {
      from: [
        { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default' },
        { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default' },
      ],
      to: [
        { group: '', kind: 'Secret' },
        { group: '', kind: 'Service', name: 'svc' },
      ],
    },
  };
}

export function gatewayClass(): Json {
  return {
    apiVersion: GW_API,
    kind: 'GatewayClass',
    metadata: { name: 'convoy' },
    spec: {
      controllerName: 'convoy.example.com/gateway-controller',
      description: 'Convoy',
      parametersRef: { group: 'example.com', kind: 'Config', name: 'c', namespace: 'default' },
    },
  };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

export function tlsSecret(): Json {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'cert', namespace: 'default' },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64('CERT'), 'tls.key': b64('KEY'), 'ca.crt': b64('CA') },
  };
}

export function service(): Json {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'svc', namespace: 'default' },
    spec: {
      selector: { app: 'svc' },
      ports: [
        { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' },
        { name: 'grpc', port: 50051, targetPort: 'grpc', appProtocol: 'kubernetes.io/h2c' },
      ],
    },
  };
}

export function endpointSlice(): Json {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'svc-abc', namespace: 'default', labels: { 'kubernetes.io/service-name': 'svc' } },
    addressType: 'IPv4',
    endpoints: [
      { addresses: ['10.1.0.1'], conditions: { ready: true, serving: true, terminating: false }, zone: 'a' },
      { addresses: ['10.1.0.2'], conditions: { ready: false } },
    ],
    ports: [
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'grpc', port: 50051, appProtocol: 'kubernetes.io/h2c' },
    ],
  };
}

export function namespace(): Json {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { team: 'a' } } };
}

/** Objects a v1.6.1 cluster accepts, every one of which Convoy must accept too. */
export const VALID_OBJECTS: { description: string; object: Json }[] = [
  {
    description: 'Gateway with every kind of listener, addresses, infrastructure and TLS',
    object: gateway(),
  },
  {
    description: 'minimal Gateway',
    object: {
      apiVersion: GW_API,
      kind: 'Gateway',
      metadata: { name: 'g' },
      spec: { gatewayClassName: 'c', listeners: [{ name: 'l', port: 1, protocol: 'HTTP' }] },
    },
  },
  {
    description: 'Gateway v1beta1',
    object: { ...gateway(), apiVersion: 'gateway.networking.k8s.io/v1beta1' },
  },
  { description: 'ListenerSet', object: listenerSet() },
  { description: 'HTTPRoute with every filter, matches and timeouts', object: httpRoute() },
  {
    description: 'minimal HTTPRoute (rules defaulted)',
    object: { apiVersion: GW_API, kind: 'HTTPRoute', metadata: { name: 'r' }, spec: {} },
  },
  { description: 'GRPCRoute', object: grpcRoute() },
  {
    description: 'minimal GRPCRoute',
    object: { apiVersion: GW_API, kind: 'GRPCRoute', metadata: { name: 'r' }, spec: {} },
  },
  { description: 'TLSRoute', object: tlsRoute() },
  { description: 'ReferenceGrant', object: referenceGrant() },
  { description: 'BackendTLSPolicy', object: backendTLSPolicy() },
  {
    description: 'BackendTLSPolicy with system CAs',
    object: {
      apiVersion: GW_API,
      kind: 'BackendTLSPolicy',
      metadata: { name: 'system' },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'svc' }],
        validation: { wellKnownCACertificates: 'System', hostname: 'backend.example.com' },
      },
    },
  },
  {
    description: 'ConfigMap with a CA bundle',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca' }, data: { 'ca.crt': 'x' } },
  },
  {
    description: 'ReferenceGrant v1beta1',
    object: { ...referenceGrant(), apiVersion: 'gateway.networking.k8s.io/v1beta1' },
  },
  { description: 'GatewayClass', object: gatewayClass() },
  { description: 'TLS Secret', object: tlsSecret() },
  {
    description: 'Opaque Secret without type or data',
    object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } },
  },
  { description: 'Service', object: service() },
  {
    description: 'headless Service without ports',
    object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'h' }, spec: { clusterIP: 'None' } },
  },
  {
    description: 'ExternalName Service',
    object: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'ext' },
      spec: { type: 'ExternalName', externalName: 'db.example.com' },
    },
  },
  { description: 'EndpointSlice', object: endpointSlice() },
  {
    description: 'EndpointSlice with no endpoints yet',
    object: {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'empty' },
      addressType: 'IPv6',
      endpoints: null,
      ports: null,
    },
  },
  { description: 'Namespace', object: namespace() },
];
