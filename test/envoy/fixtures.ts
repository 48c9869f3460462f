import type {
  ClusterModel,
  FleetModel,
  RouteModel,
  SecretModel,
  VirtualHostModel,
} from '../../src/model/fleet';
import { routeFeaturesFleet } from './fixtures-route-features';
import { l4Fleet } from './fixtures-l4';
import { EXAMPLE_CERT, EXAMPLE_KEY, TENANT_CERT, TENANT_KEY } from '../support/certs';

/**
 * Hand-built FleetModels covering the translator's features. Each is what the gateway builder
 * would produce: names as src/model/names.ts builds them, arrays sorted, every referenced cluster
 * and secret present.
 */

const gateway = { namespace: 'infra', name: 'gw' };

function cluster(
  name: string,
  protocol: ClusterModel['protocol'],
  ips: string[],
  port: number,
  notReady: string[] = [],
): ClusterModel {
  return {
    name,
    protocol,
    endpoints: ips.map((address) => ({ address, port, ready: !notReady.includes(address) })),
  };
}

function forwardAll(name: string, clusterName: string): RouteModel {
  return {
    name,
    match: { path: { type: 'PathPrefix', value: '/' } },
    action: { kind: 'forward', backends: [{ cluster: clusterName, weight: 1 }] },
  };
}

const exampleSecret: SecretModel = {
  name: 'infra/example-cert',
  certificateChain: EXAMPLE_CERT,
  privateKey: EXAMPLE_KEY,
};
const tenantASecret: SecretModel = {
  name: 'team-a/tenant-cert',
  certificateChain: TENANT_CERT,
  privateKey: TENANT_KEY,
};
const tenantBSecret: SecretModel = {
  name: 'team-b/tenant-cert',
  certificateChain: TENANT_CERT,
  privateKey: TENANT_KEY,
};

/** Plain HTTP: several virtual hosts and every route feature. */
export function httpFleet(): FleetModel {
  const foo: VirtualHostModel = {
    name: 'foo.example.com',
    domains: ['foo.example.com'],
    routes: [
      {
        name: 'HTTPRoute/default/foo/rule/0/match/0',
        match: { path: { type: 'Exact', value: '/exact' } },
        action: { kind: 'forward', backends: [{ cluster: 'default/web/80', weight: 1 }] },
        requestHeaders: {
          set: [{ name: 'X-Env', value: 'prod' }],
          add: [{ name: 'x-trace', value: 'a' }],
          remove: ['x-internal'],
        },
        responseHeaders: { set: [{ name: 'cache-control', value: 'no-store' }], remove: ['server'] },
        timeoutMs: 0,
      },
      {
        name: 'HTTPRoute/default/foo/rule/1/match/0',
        match: { path: { type: 'PathPrefix', value: '/api/' } },
        action: {
          kind: 'forward',
          backends: [
            { cluster: 'default/api-v1/8080', weight: 80 },
            { cluster: 'default/api-v2/8080', weight: 20 },
            { cluster: 'default/web/80', weight: 0 },
          ],
          rewrite: { hostname: 'api.internal', path: { type: 'ReplacePrefixMatch', value: '/v2' } },
          mirrors: [{ cluster: 'default/mirror/80', percent: 25 }, { cluster: 'default/mirror/80' }],
        },
        timeoutMs: 10_000,
        perTryTimeoutMs: 2_500,
      },
      {
        name: 'HTTPRoute/default/foo/rule/2/match/0',
        match: { path: { type: 'PathPrefix', value: '/strip' } },
        action: {
          kind: 'forward',
          backends: [{ cluster: 'default/web/80', weight: 1 }],
          rewrite: { path: { type: 'ReplacePrefixMatch', value: '/' } },
        },
        perTryTimeoutMs: 1_500,
      },
      {
        name: 'HTTPRoute/default/foo/rule/3/match/0',
        match: {
          path: { type: 'RegularExpression', value: '^/re/[0-9]+$' },
          headers: [
            { name: 'X-Version', type: 'Exact', value: 'v1' },
            { name: 'x-user', type: 'RegularExpression', value: '^(alice|bob)$' },
          ],
          queryParams: [
            { name: 'debug', type: 'Exact', value: '1' },
            { name: 'id', type: 'RegularExpression', value: '^[a-f0-9]+$' },
          ],
          method: 'GET',
        },
        action: {
          kind: 'forward',
          backends: [{ cluster: 'default/web/80', weight: 1 }],
          rewrite: { path: { type: 'ReplaceFullPath', value: '/full' } },
        },
      },
      {
        name: 'GRPCRoute/default/grpc/rule/0/match/0',
        match: { path: { type: 'Exact', value: '/pkg.Service/Method' }, grpc: true },
        action: { kind: 'forward', backends: [{ cluster: 'default/grpc/9000', weight: 1 }] },
      },
      {
        name: 'HTTPRoute/default/foo/rule/4/match/0',
        match: { path: { type: 'PathPrefix', value: '/mirror-half' } },
        action: {
          kind: 'forward',
          backends: [{ cluster: 'default/web/80', weight: 1 }],
          mirrors: [{ cluster: 'default/mirror/80', percent: 12.5 }],
        },
      },
      {
        name: 'HTTPRoute/default/foo/rule/5/match/0',
        match: { path: { type: 'PathPrefix', value: '/partly-invalid' } },
        action: { kind: 'forward', backends: [{ cluster: 'default/web/80', weight: 3 }], invalidWeight: 1 },
      },
      forwardAll('HTTPRoute/default/foo/rule/6/match/0', 'default/web/80'),
    ],
  };
  const wildcard: VirtualHostModel = {
    name: '*.example.com',
    domains: ['*.example.com'],
    routes: [
      {
        name: 'HTTPRoute/default/redirects/rule/0/match/0',
        match: { path: { type: 'Exact', value: '/old' } },
        action: {
          kind: 'redirect',
          scheme: 'https',
          hostname: 'secure.example.com',
          port: 8443,
          path: { type: 'ReplaceFullPath', value: '/new' },
          statusCode: 301,
        },
      },
      {
        name: 'HTTPRoute/default/redirects/rule/1/match/0',
        match: { path: { type: 'PathPrefix', value: '/moved' } },
        action: { kind: 'redirect', path: { type: 'ReplacePrefixMatch', value: '/here' }, statusCode: 302 },
      },
      {
        name: 'HTTPRoute/default/redirects/rule/2/match/0',
        match: { path: { type: 'PathPrefix', value: '/see-other' } },
        action: { kind: 'redirect', hostname: 'other.example.com', statusCode: 303 },
      },
      {
        name: 'HTTPRoute/default/redirects/rule/3/match/0',
        match: { path: { type: 'PathPrefix', value: '/temporary' } },
        action: { kind: 'redirect', path: { type: 'ReplacePrefixMatch', value: '/' }, statusCode: 307 },
      },
      {
        name: 'HTTPRoute/default/redirects/rule/4/match/0',
        match: { path: { type: 'PathPrefix', value: '/permanent' } },
        action: { kind: 'redirect', scheme: 'https', statusCode: 308 },
      },
      {
        name: 'HTTPRoute/default/redirects/rule/5/match/0',
        match: { path: { type: 'PathPrefix', value: '/maintenance' } },
        action: { kind: 'direct', status: 503, body: 'down for maintenance\n' },
      },
      {
        name: 'HTTPRoute/default/redirects/rule/6/match/0',
        match: { path: { type: 'PathPrefix', value: '/no-backends' } },
        action: { kind: 'forward', backends: [{ cluster: 'default/web/80', weight: 0 }] },
      },
      {
        name: 'HTTPRoute/default/redirects/rule/7/match/0',
        match: {},
        action: { kind: 'direct', status: 404 },
      },
    ],
  };
  const empty: VirtualHostModel = { name: 'empty.example.com', domains: ['empty.example.com'], routes: [] };
  const catchAll: VirtualHostModel = {
    name: '*',
    domains: ['*'],
    routes: [forwardAll('HTTPRoute/default/fallback/rule/0/match/0', 'default/web/80')],
  };
  return {
    fleet: 'infra/gw',
    gateway,
    ports: [
      {
        name: 'http-8080',
        port: 8080,
        http: { routeConfigName: 'http-8080', virtualHosts: [empty, foo, wildcard, catchAll] },
        filterChains: [],
      },
    ],
    clusters: [
      cluster('default/api-v1/8080', 'http1', ['10.0.1.1', '10.0.1.2'], 8080),
      cluster('default/api-v2/8080', 'http1', ['10.0.2.1'], 8080),
      cluster('default/empty/80', 'http1', [], 80),
      cluster('default/grpc/9000', 'http2', ['10.0.3.1'], 9000),
      cluster('default/mirror/80', 'http1', ['10.0.4.1'], 80),
      cluster('default/web/80', 'http1', ['10.0.0.1', '10.0.0.2', '10.0.0.3'], 80, ['10.0.0.2']),
    ],
    secrets: [],
  };
}

function httpsVirtualHost(hostname: string, clusterName: string, prefix: string): VirtualHostModel {
  return {
    name: hostname,
    domains: [hostname],
    routes: [forwardAll(`${prefix}/rule/0/match/0`, clusterName)],
  };
}

/** HTTPS: a Gateway listener, two ListenerSet listeners, a wildcard and a catch-all on one port. */
export function httpsFleet(): FleetModel {
  return {
    fleet: 'infra/gw',
    gateway,
    ports: [
      {
        name: 'http-8080',
        port: 8080,
        http: {
          routeConfigName: 'http-8080',
          virtualHosts: [
            {
              name: '*',
              domains: ['*'],
              routes: [
                {
                  name: 'HTTPRoute/infra/to-https/rule/0/match/0',
                  match: {},
                  action: { kind: 'redirect', scheme: 'https', port: 8443, statusCode: 301 },
                },
              ],
            },
          ],
        },
        filterChains: [],
      },
      {
        name: 'https-8443',
        port: 8443,
        filterChains: [
          {
            name: 'Gateway/infra/gw/www',
            serverNames: ['www.example.com'],
            mode: 'Terminate',
            protocol: 'HTTPS',
            secretNames: ['infra/example-cert'],
            routeConfigName: 'https-8443/www.example.com',
            virtualHosts: [httpsVirtualHost('www.example.com', 'default/web/80', 'HTTPRoute/default/www')],
          },
          {
            name: 'Gateway/infra/gw/wildcard',
            serverNames: ['*.example.com'],
            mode: 'Terminate',
            protocol: 'HTTPS',
            secretNames: ['infra/example-cert'],
            routeConfigName: 'https-8443/*.example.com',
            virtualHosts: [httpsVirtualHost('*.example.com', 'default/web/80', 'HTTPRoute/default/wild')],
          },
          {
            name: 'Gateway/infra/gw/default',
            serverNames: [],
            mode: 'Terminate',
            protocol: 'HTTPS',
            secretNames: ['infra/example-cert'],
            routeConfigName: 'https-8443/*',
            virtualHosts: [httpsVirtualHost('*', 'default/web/80', 'HTTPRoute/default/any')],
          },
          {
            name: 'ListenerSet/team-a/tenants/a',
            serverNames: ['a.tenant.test'],
            mode: 'Terminate',
            protocol: 'HTTPS',
            secretNames: ['team-a/tenant-cert'],
            routeConfigName: 'https-8443/a.tenant.test',
            virtualHosts: [httpsVirtualHost('a.tenant.test', 'team-a/app/80', 'HTTPRoute/team-a/app')],
          },
          {
            name: 'ListenerSet/team-b/tenants/b',
            serverNames: ['b.tenant.test'],
            mode: 'Terminate',
            protocol: 'HTTPS',
            secretNames: ['team-b/tenant-cert'],
            routeConfigName: 'https-8443/b.tenant.test',
            virtualHosts: [
              {
                name: 'b.tenant.test',
                domains: ['b.tenant.test'],
                routes: [
                  {
                    name: 'GRPCRoute/team-b/api/rule/0/match/0',
                    match: { path: { type: 'PathPrefix', value: '/team.b.Api' }, grpc: true },
                    action: { kind: 'forward', backends: [{ cluster: 'team-b/grpc/9000', weight: 1 }] },
                  },
                ],
              },
            ],
          },
        ],
      },
    ],
    clusters: [
      cluster('default/web/80', 'http1', ['10.0.0.1'], 80),
      cluster('team-a/app/80', 'http1', ['10.1.0.1', '10.1.0.2'], 80),
      cluster('team-b/grpc/9000', 'http2', ['10.2.0.1'], 9000),
    ],
    secrets: [exampleSecret, tenantASecret, tenantBSecret],
  };
}

/** TLS passthrough: one cluster, weighted clusters, and a catch-all with no backend (rejects). */
export function tlsPassthroughFleet(): FleetModel {
  return {
    fleet: 'infra/gw',
    gateway,
    ports: [
      {
        name: 'tls-8444',
        port: 8444,
        filterChains: [
          {
            name: 'Gateway/infra/gw/db',
            serverNames: ['db.example.com'],
            mode: 'Passthrough',
            protocol: 'TLS',
            secretNames: [],
            tcpBackends: [{ cluster: 'data/postgres/5432', weight: 1 }],
          },
          {
            name: 'Gateway/infra/gw/wildcard',
            serverNames: ['*.example.com', 'example.com'],
            mode: 'Passthrough',
            protocol: 'TLS',
            secretNames: [],
            tcpBackends: [
              { cluster: 'default/tls-blue/443', weight: 90 },
              { cluster: 'default/tls-green/443', weight: 10 },
            ],
          },
          {
            name: 'Gateway/infra/gw/any',
            serverNames: [],
            mode: 'Passthrough',
            protocol: 'TLS',
            secretNames: [],
            tcpBackends: [],
          },
        ],
      },
    ],
    clusters: [
      cluster('data/postgres/5432', 'tcp', ['10.3.0.1'], 5432),
      cluster('default/tls-blue/443', 'tcp', ['10.4.0.1', '10.4.0.2'], 443),
      cluster('default/tls-green/443', 'tcp', ['10.5.0.1'], 443),
    ],
    secrets: [],
  };
}

/** HTTPS and TLS (terminate and passthrough) sharing one port, selected by SNI. */
export function mixedFleet(): FleetModel {
  return {
    fleet: 'infra/gw',
    gateway,
    ports: [
      {
        name: 'https-8443',
        port: 8443,
        filterChains: [
          {
            name: 'Gateway/infra/gw/app',
            serverNames: ['app.example.com'],
            mode: 'Terminate',
            protocol: 'HTTPS',
            secretNames: ['infra/example-cert'],
            routeConfigName: 'https-8443/app.example.com',
            virtualHosts: [httpsVirtualHost('app.example.com', 'default/web/80', 'HTTPRoute/default/app')],
          },
          {
            name: 'Gateway/infra/gw/tcp-terminate',
            serverNames: ['tcp.example.com'],
            mode: 'Terminate',
            protocol: 'TLS',
            secretNames: ['infra/example-cert'],
            tcpBackends: [{ cluster: 'default/plain-tcp/7000', weight: 1 }],
          },
          {
            name: 'ListenerSet/team-a/tenants/pass',
            serverNames: ['pass.tenant.test'],
            mode: 'Passthrough',
            protocol: 'TLS',
            secretNames: [],
            tcpBackends: [{ cluster: 'team-a/tls-app/443', weight: 1 }],
          },
          {
            name: 'ListenerSet/team-a/tenants/dead',
            serverNames: ['dead.tenant.test'],
            mode: 'Passthrough',
            protocol: 'TLS',
            secretNames: [],
            tcpBackends: [{ cluster: 'team-a/tls-app/443', weight: 0 }],
          },
        ],
      },
    ],
    clusters: [
      cluster('default/plain-tcp/7000', 'tcp', ['10.6.0.1'], 7000),
      cluster('default/web/80', 'http1', ['10.0.0.1'], 80),
      cluster('team-a/tls-app/443', 'tcp', ['10.7.0.1'], 443),
    ],
    secrets: [exampleSecret],
  };
}

/**
 * Port ranges (docs/gateway-api.md §30): an HTTPS listener extended to 20 ports, and a managed
 * fleet's HTTP port 80 extended to 83, bound unprivileged (10080..10083).
 */
export function portRangeFleet(): FleetModel {
  const https = httpsFleet();
  const tls = https.ports.find((p) => p.port === 8443)!;
  return {
    ...https,
    ports: [
      {
        name: 'http-80',
        port: 80,
        bindPort: 10080,
        endPort: 83,
        rangeBindPorts: [10081, 10082, 10083],
        http: {
          routeConfigName: 'http-80',
          virtualHosts: [
            {
              name: '*',
              domains: ['*'],
              routes: [forwardAll('HTTPRoute/default/any/rule/0/match/0', 'default/web/80')],
            },
          ],
        },
        filterChains: [],
      },
      { ...tls, endPort: 8462, filterChains: tls.filterChains.slice(0, 3) },
    ],
    clusters: https.clusters.filter((c) => c.name === 'default/web/80'),
    secrets: https.secrets.filter((s) => s.name === 'infra/example-cert'),
  };
}

export const GOLDEN_FLEETS: Record<string, () => FleetModel> = {
  'port-range': portRangeFleet,
  http: httpFleet,
  'route-features': routeFeaturesFleet,
  https: httpsFleet,
  'tls-passthrough': tlsPassthroughFleet,
  mixed: mixedFleet,
  'tcp-udp': l4Fleet,
};

/**
 * The HTTPS fleet without its hostname-less listener: the shape the SNI-dispatch listener layout
 * translates (a port with a hostname-less listener keeps the chains layout, docs/xds.md §16).
 */
export function httpsFleetWithoutCatchAll(): FleetModel {
  const m = httpsFleet();
  const [http, https] = m.ports;
  return {
    ...m,
    ports: [http, { ...https, filterChains: https.filterChains.filter((fc) => fc.serverNames.length) }],
  };
}
