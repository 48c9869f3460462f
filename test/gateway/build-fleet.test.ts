import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { redirectPort } from '../../src/gateway/virtual-hosts';
import type { FilterChainModel, FleetModel } from '../../src/model/fleet';
import type { KubeObject } from '../../src/store/objects';
import {
  OPTS,
  backendRef,
  backendService,
  gateway,
  gatewayClass,
  grpcRoute,
  httpListener,
  httpRoute,
  httpsListener,
  listenerSet,
  parentRef,
  storeOf,
  tlsListener,
  tlsRoute,
  tlsSecret,
} from '../support/objects';
import { selfSignedCert } from '../support/certs';
import { leafValidity } from '../../src/pki/validity';

function fleetOf(objects: KubeObject[], name = 'gw'): FleetModel {
  const result = buildGateways(storeOf(gatewayClass(), ...objects), OPTS);
  const fleet = result.fleets.find((f) => f.gateway.name === name);
  assert.ok(fleet, `fleet for ${name}`);
  return fleet;
}

/** Compact view of filter chains: name → [serverNames, mode, protocol, secrets, rds or tcp backends]. */
function chains(fcs: FilterChainModel[]): Record<string, unknown[]> {
  return Object.fromEntries(
    fcs.map((c) => [
      c.name,
      [
        c.serverNames,
        c.mode,
        c.protocol,
        c.secretNames,
        c.routeConfigName ?? c.tcpBackends?.map((b) => `${b.cluster}:${b.weight}`),
      ],
    ]),
  );
}

const web = backendService('web', 80, ['10.0.0.1']);
const db = backendService('db', 5432, ['10.0.1.1'], { portName: 'pg', targetPort: 5432 });

describe('HTTPS listeners', () => {
  const objects = [
    gateway('gw', [
      httpsListener('www', 443, 'www.example.com', 'www-cert'),
      httpsListener('api', 443, 'api.example.com', 'api-cert'),
      httpsListener('fallback', 443, undefined, 'www-cert'),
    ]),
    tlsSecret('www-cert', { hostnames: ['www.example.com'] }),
    tlsSecret('api-cert', { hostnames: ['api.example.com'] }),
    httpRoute('site', [{ backendRefs: [backendRef('web', 80)] }], {
      parentRefs: [parentRef('gw', { sectionName: 'www' })],
    }),
    httpRoute('everything', [{ backendRefs: [backendRef('web', 80)] }], {
      hostnames: ['api.example.com', 'other.example.com'],
    }),
    ...web,
  ];

  test('one Envoy listener per port, one filter chain per listener, RDS per chain, secrets deduped', () => {
    const fleet = fleetOf(objects);
    assert.equal(fleet.ports.length, 1);
    const p = fleet.ports[0];
    assert.equal(p.name, 'https-443');
    assert.equal(p.http, undefined);
    assert.deepEqual(chains(p.filterChains), {
      'Gateway/default/gw/api': [
        ['api.example.com'],
        'Terminate',
        'HTTPS',
        ['default/api-cert'],
        'https-443/api.example.com',
      ],
      'Gateway/default/gw/fallback': [[], 'Terminate', 'HTTPS', ['default/www-cert'], 'https-443/*'],
      'Gateway/default/gw/www': [
        ['www.example.com'],
        'Terminate',
        'HTTPS',
        ['default/www-cert'],
        'https-443/www.example.com',
      ],
    });
    assert.deepEqual(
      fleet.secrets.map((s) => s.name),
      ['default/api-cert', 'default/www-cert'],
    );
    const { cert, key } = selfSignedCert(['www.example.com']);
    const { validity, ...served } = fleet.secrets[1];
    assert.deepEqual(served, { name: 'default/www-cert', certificateChain: cert, privateKey: key });
    assert.deepEqual(validity, leafValidity(cert));
  });

  test('each chain only serves the routes attached to its listener (and its own hostnames)', () => {
    const fleet = fleetOf(objects);
    const byName = new Map(fleet.ports[0].filterChains.map((c) => [c.name, c]));
    const hosts = (n: string) =>
      byName.get(n)!.virtualHosts!.map((v) => [v.name, v.routes.map((r) => r.name.split('/')[2])]);
    assert.deepEqual(hosts('Gateway/default/gw/www'), [['www.example.com', ['site']]]);
    assert.deepEqual(hosts('Gateway/default/gw/api'), [['api.example.com', ['everything']]]);
    // api.example.com is claimed by the more specific api listener; other.example.com stays.
    assert.deepEqual(hosts('Gateway/default/gw/fallback'), [['other.example.com', ['everything']]]);
  });

  test('an HTTPS listener without routes still gets a chain (answers 404, not a TLS failure)', () => {
    const fleet = fleetOf([
      gateway('gw', [httpsListener('www', 443, 'www.example.com', 'www-cert')]),
      tlsSecret('www-cert'),
    ]);
    assert.deepEqual(fleet.ports[0].filterChains[0].virtualHosts, []);
  });
});

describe('TLS listeners', () => {
  test('passthrough: own chain plus one chain per route hostname; unclaimed SNI is rejected', () => {
    const fleet = fleetOf([
      gateway('gw', [tlsListener('tls', 8443, '*.example.com', 'Passthrough')]),
      tlsRoute('db', ['db.example.com'], [{ backendRefs: [backendRef('db', 5432)] }]),
      tlsRoute(
        'old-db',
        ['db.example.com', 'legacy.example.com'],
        [{ backendRefs: [backendRef('web', 80)] }],
        {
          created: '2020-01-01T00:00:00Z',
        },
      ),
      ...db,
      ...web,
    ]);
    const p = fleet.ports[0];
    assert.equal(p.name, 'tls-8443');
    assert.deepEqual(chains(p.filterChains), {
      'Gateway/default/gw/tls': [['*.example.com'], 'Passthrough', 'TLS', [], []],
      // The older route wins db.example.com.
      'Gateway/default/gw/tls/db.example.com': [
        ['db.example.com'],
        'Passthrough',
        'TLS',
        [],
        ['default/web/80:1'],
      ],
      'Gateway/default/gw/tls/legacy.example.com': [
        ['legacy.example.com'],
        'Passthrough',
        'TLS',
        [],
        ['default/web/80:1'],
      ],
    });
    assert.deepEqual(fleet.clusters, [
      {
        name: 'default/web/80',
        protocol: 'tcp',
        endpoints: [{ address: '10.0.0.1', port: 8080, ready: true }],
      },
    ]);
  });

  test('route hostname equal to the listener hostname uses the listener chain; terminate carries secrets', () => {
    const fleet = fleetOf([
      gateway('gw', [tlsListener('tls', 8443, 'db.example.com', 'Terminate', 'db-cert')]),
      tlsSecret('db-cert', { hostnames: ['db.example.com'] }),
      tlsRoute('db', ['db.example.com'], [{ backendRefs: [backendRef('db', 5432)] }]),
      ...db,
    ]);
    assert.deepEqual(chains(fleet.ports[0].filterChains), {
      'Gateway/default/gw/tls': [
        ['db.example.com'],
        'Terminate',
        'TLS',
        ['default/db-cert'],
        ['default/db/5432:1'],
      ],
    });
    assert.deepEqual(
      fleet.secrets.map((s) => s.name),
      ['default/db-cert'],
    );
  });

  test('a TLSRoute with no valid backend rejects connections (empty tcpBackends)', () => {
    const fleet = fleetOf([
      gateway('gw', [tlsListener('tls', 8443, 'db.example.com', 'Passthrough')]),
      tlsRoute('db', ['db.example.com'], [{ backendRefs: [backendRef('gone', 5432)] }]),
    ]);
    assert.deepEqual(fleet.ports[0].filterChains[0].tcpBackends, []);
    assert.deepEqual(fleet.clusters, []);
  });

  test('HTTPS and TLS on one port share one Envoy listener named after the first in precedence', () => {
    const fleet = fleetOf([
      gateway('gw', [
        httpsListener('web', 443, 'www.example.com', 'www-cert'),
        tlsListener('pass', 443, 'db.example.com', 'Passthrough'),
      ]),
      tlsSecret('www-cert', { hostnames: ['www.example.com'] }),
      tlsRoute('db', ['db.example.com'], [{ backendRefs: [backendRef('db', 5432)] }]),
      ...db,
    ]);
    assert.equal(fleet.ports.length, 1);
    assert.equal(fleet.ports[0].name, 'https-443');
    assert.deepEqual(
      fleet.ports[0].filterChains.map((c) => [c.name, c.protocol, c.mode]),
      [
        ['Gateway/default/gw/pass', 'TLS', 'Passthrough'],
        ['Gateway/default/gw/web', 'HTTPS', 'Terminate'],
      ],
    );
  });
});

describe('ports, clusters and ListenerSets', () => {
  test('ports sorted; HTTP port without routes has an empty route config', () => {
    const fleet = fleetOf([gateway('gw', [httpListener('b', 8080), httpListener('a', 80, 'a.example.com')])]);
    assert.deepEqual(
      fleet.ports.map((p) => [p.name, p.port, p.http?.routeConfigName, p.http?.virtualHosts.length]),
      [
        ['http-80', 80, 'http-80', 0],
        ['http-8080', 8080, 'http-8080', 0],
      ],
    );
  });

  test("an HTTP listener with a hostname and no routes owns an empty virtual host, not its broader sibling's routes", () => {
    const fleet = fleetOf([
      gateway('gw', [
        httpListener('any', 80),
        httpListener('quiet', 80, 'quiet.example.com'),
        httpListener('wild', 80, '*.wild.example.com'),
        httpListener('other', 8080, 'alone.example.com'),
      ]),
      httpRoute('everything', [{ backendRefs: [backendRef('web', 80)] }], {
        parentRefs: [parentRef('gw', { sectionName: 'any' })],
      }),
      ...web,
    ]);
    const hosts = (port: number) =>
      fleet.ports.find((p) => p.port === port)!.http!.virtualHosts.map((v) => [v.name, v.routes.length]);
    // quiet.example.com and *.wild.example.com answer 404 instead of reaching "everything".
    assert.deepEqual(hosts(80), [
      ['*', 1],
      ['*.wild.example.com', 0],
      ['quiet.example.com', 0],
    ]);
    // Alone on its port nothing broader can catch its requests: no virtual host is added.
    assert.deepEqual(hosts(8080), []);
  });

  test('clusters: only referenced ones, mirrors included, GRPCRoute upgrades to http2, sorted', () => {
    const fleet = fleetOf([
      gateway('gw', [httpListener('http', 80)]),
      httpRoute('web', [
        {
          filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'shadow', port: 80 } } }],
          backendRefs: [backendRef('web', 80)],
        },
      ]),
      grpcRoute('rpc', [{ backendRefs: [backendRef('rpc', 9000)] }], { hostnames: ['grpc.example.com'] }),
      httpRoute('detached', [{ backendRefs: [backendRef('unused', 80)] }], {
        parentRefs: [parentRef('other-gw')],
      }),
      ...web,
      ...backendService('shadow', 80, ['10.0.0.5']),
      ...backendService('rpc', 9000, ['10.0.0.7'], { portName: 'grpc' }),
      ...backendService('unused', 80, ['10.0.0.9']),
    ]);
    assert.deepEqual(
      fleet.clusters.map((c) => [c.name, c.protocol, c.endpoints.map((e) => e.address)]),
      [
        ['default/rpc/9000', 'http2', ['10.0.0.7']],
        ['default/shadow/80', 'http1', ['10.0.0.5']],
        ['default/web/80', 'http1', ['10.0.0.1']],
      ],
    );
  });

  test('ListenerSet listeners are served on the Gateway fleet, sharing the port route config', () => {
    const objects = [
      gateway('gw', [httpListener('gw-http', 80, 'gw.example.com')], {
        allowedListeners: { namespaces: { from: 'Same' } },
      }),
      listenerSet('set', { name: 'gw' }, [httpListener('ls-http', 80, 'ls.example.com')]),
      httpRoute('gw-route', [{ backendRefs: [backendRef('web', 80)] }]),
      httpRoute('set-route', [{ backendRefs: [backendRef('web', 80)] }], {
        parentRefs: [parentRef('set', { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' })],
      }),
      ...web,
    ];
    const fleet = fleetOf(objects);
    assert.deepEqual(
      fleet.ports.map((p) => p.name),
      ['http-80'],
    );
    assert.deepEqual(
      fleet.ports[0].http!.virtualHosts.map((v) => [v.name, v.routes.map((r) => r.name.split('/')[2])]),
      [
        ['gw.example.com', ['gw-route']],
        ['ls.example.com', ['set-route']],
      ],
    );
  });

  test('an unaccepted Gateway gets an empty fleet', () => {
    const fleet = fleetOf([gateway('gw', [{ name: 'bad', port: 80, protocol: 'SCTP' }])]);
    assert.deepEqual(fleet, {
      fleet: 'default/gw',
      gateway: { namespace: 'default', name: 'gw' },
      ports: [],
      clusters: [],
      secrets: [],
    });
  });
});

describe('redirect port derivation', () => {
  test('redirectPort: filter port, else scheme default, else listener port; defaults are omitted', () => {
    const cases: [{ scheme?: string; port?: number }, number, 'http' | 'https', number | undefined][] = [
      [{}, 80, 'http', undefined],
      [{}, 8080, 'http', 8080],
      [{}, 443, 'https', undefined],
      [{}, 8443, 'https', 8443],
      [{ scheme: 'https' }, 80, 'http', undefined],
      [{ scheme: 'https' }, 8080, 'http', undefined],
      [{ scheme: 'http' }, 8443, 'https', undefined],
      [{ port: 8083 }, 80, 'http', 8083],
      [{ port: 80 }, 8080, 'http', undefined],
      [{ scheme: 'https', port: 443 }, 80, 'http', undefined],
      [{ scheme: 'https', port: 8443 }, 80, 'http', 8443],
      [{ scheme: 'http', port: 443 }, 443, 'https', 443],
    ];
    for (const [filter, port, scheme, want] of cases) {
      assert.equal(redirectPort(filter, port, scheme), want, JSON.stringify([filter, port, scheme]));
    }
  });

  test('a redirect without port on an 8080 listener carries port 8080; on port 80 none', () => {
    const rule = {
      filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'moved.example.com' } }],
    };
    const fleet = fleetOf([
      gateway('gw', [httpListener('a', 80), httpListener('b', 8080)]),
      httpRoute('r', [rule]),
    ]);
    const actions = fleet.ports.map((p) => [p.port, p.http!.virtualHosts[0].routes[0].action]);
    assert.deepEqual(actions, [
      [80, { kind: 'redirect', hostname: 'moved.example.com', statusCode: 302 }],
      [8080, { kind: 'redirect', hostname: 'moved.example.com', port: 8080, statusCode: 302 }],
    ]);
  });
});

describe('ListenerSet HTTP routing (shape of conformance ListenerSetHTTPRouting)', () => {
  const all = { allowedRoutes: { namespaces: { from: 'All' as const } } };
  const LS = { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' };
  const route = (name: string, parentRefs: ReturnType<typeof parentRef>[]) =>
    httpRoute(name, [{ matches: [{ path: { value: `/${name}` } }], backendRefs: [backendRef('web', 80)] }], {
      parentRefs,
    });
  const objects = [
    gatewayClass(),
    gateway('gw', [httpListener('gw-1', 80, 'gw-1.com', all), httpListener('gw-2', 80, 'gw-2.com', all)], {
      allowedListeners: { namespaces: { from: 'All' } },
    }),
    listenerSet(
      'set-1',
      { name: 'gw' },
      [httpListener('l1', 80, 'set-1-l1.com', all), httpListener('l2', 80, 'set-1-l2.com', all)],
      {
        created: '2026-01-01T00:00:00Z',
      },
    ),
    listenerSet(
      'set-2',
      { name: 'gw' },
      [httpListener('l1', 80, 'set-2-l1.com', all), httpListener('l2', 80, 'set-2-l2.com', all)],
      {
        created: '2026-01-02T00:00:00Z',
      },
    ),
    route('everywhere', [parentRef('gw'), parentRef('set-1', LS), parentRef('set-2', LS)]),
    route('gw-route', [parentRef('gw')]),
    route('gw-section', [parentRef('gw', { sectionName: 'gw-1' })]),
    route('set-1-route', [parentRef('set-1', LS)]),
    route('set-1-section', [parentRef('set-1', { ...LS, sectionName: 'l1' })]),
    route('set-2-route', [parentRef('set-2', LS)]),
    ...web,
  ];
  const result = buildGateways(storeOf(...objects), OPTS);

  test('attachedRoutes per listener, set listeners counted on their set only', () => {
    const counts = (kind: string, name: string) =>
      (
        result.statuses.find((s) => s.kind === kind && s.metadata.name === name)!.status.listeners as {
          name: string;
          attachedRoutes: number;
        }[]
      ).map((l) => `${l.name}=${l.attachedRoutes}`);
    assert.deepEqual(counts('Gateway', 'gw'), ['gw-1=3', 'gw-2=2']);
    assert.deepEqual(counts('ListenerSet', 'set-1'), ['l1=3', 'l2=2']);
    assert.deepEqual(counts('ListenerSet', 'set-2'), ['l1=2', 'l2=2']);
  });

  test("each listener hostname serves exactly its parent's routes", () => {
    const hosts = Object.fromEntries(
      result.fleets[0].ports[0].http!.virtualHosts.map((v) => [
        v.name,
        v.routes.map((r) => r.name.split('/')[2]).sort(),
      ]),
    );
    assert.deepEqual(hosts, {
      'gw-1.com': ['everywhere', 'gw-route', 'gw-section'],
      'gw-2.com': ['everywhere', 'gw-route'],
      'set-1-l1.com': ['everywhere', 'set-1-route', 'set-1-section'],
      'set-1-l2.com': ['everywhere', 'set-1-route'],
      'set-2-l1.com': ['everywhere', 'set-2-route'],
      'set-2-l2.com': ['everywhere', 'set-2-route'],
    });
  });
});
