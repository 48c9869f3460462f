import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { ownersOf } from '../../src/model/owners';
import type { EnvoyResourceKind, ResourceOwners } from '../../src/model/owners';
import type { FleetModel } from '../../src/model/fleet';
import {
  OPTS,
  backendRef,
  backendService,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  httpsListener,
  listenerSet,
  parentRef,
  storeOf,
  tlsSecret,
} from '../support/objects';

/**
 * A Gateway and a ListenerSet sharing an HTTP port (one Envoy Listener and RouteConfiguration for
 * both) and an HTTPS port (one chain each), routes to two Services, built by the real gateway
 * build: the fleet model the owners are read from.
 */
function world(): { model: FleetModel; byPort: Map<number, string[]> } {
  const store = storeOf(
    gatewayClass(),
    gateway('gw', [httpListener('http', 80), httpsListener('https', 443, 'a.example.com', 'a-cert')], {
      allowedListeners: { namespaces: { from: 'Same' } },
    }),
    listenerSet('tenant', { name: 'gw' }, [
      httpsListener('web', 443, 'b.example.com', 'b-cert'),
      httpListener('plain', 80, 'b.example.com'),
    ]),
    tlsSecret('a-cert', { hostnames: ['a.example.com'] }),
    tlsSecret('b-cert', { hostnames: ['b.example.com'] }),
    ...backendService('web', 80, ['10.0.0.1']),
    ...backendService('api', 8080, ['10.0.0.2']),
    ...backendService('copy', 9000, ['10.0.0.3']),
    httpRoute('site', [{ backendRefs: [backendRef('web', 80)] }], {
      parentRefs: [parentRef('gw', { sectionName: 'http' })],
    }),
    httpRoute('secure', [{ backendRefs: [backendRef('web', 80)] }], {
      parentRefs: [parentRef('gw', { sectionName: 'https' })],
    }),
    httpRoute(
      'shop',
      [
        {
          backendRefs: [backendRef('api', 8080)],
          filters: [{ type: 'RequestMirror', requestMirror: { backendRef: backendRef('copy', 9000) } }],
        },
      ],
      {
        parentRefs: [
          parentRef('tenant', {
            kind: 'ListenerSet',
            group: 'gateway.networking.k8s.io',
            sectionName: 'web',
          }),
        ],
      },
    ),
  );
  const result = buildGateways(store, OPTS);
  assert.equal(result.fleets.length, 1);
  const byPort = new Map<number, string[]>();
  for (const l of result.state.gateways[0].listeners)
    if (l.ready) byPort.set(l.port, [...(byPort.get(l.port) ?? []), l.qualifiedName]);
  return { model: result.fleets[0], byPort };
}

function summary(o: ResourceOwners): string[] {
  return [
    ...o.listeners.map((l) => `${l.kind}/${l.namespace}/${l.name}#${l.listener}`),
    ...o.routes.map((r) => `${r.kind}/${r.namespace}/${r.name}`),
  ];
}

describe('owners of an Envoy resource (src/model/owners.ts)', () => {
  const { model, byPort } = world();
  const owners = (kind: EnvoyResourceKind, name: string, message = '') =>
    summary(ownersOf(model, byPort, kind, name, message));

  test('a Listener: every listener on its port, whoever owns it', () => {
    assert.deepEqual(owners('Listener', 'http-80'), [
      'Gateway/default/gw#http',
      'ListenerSet/default/tenant#plain',
    ]);
    assert.deepEqual(owners('Listener', 'https-443'), [
      'Gateway/default/gw#https',
      'ListenerSet/default/tenant#web',
    ]);
  });

  test('without the port index, the filter chains still name the HTTPS listeners', () => {
    assert.deepEqual(summary(ownersOf(model, new Map(), 'Listener', 'https-443')), [
      'Gateway/default/gw#https',
      'ListenerSet/default/tenant#web',
    ]);
    assert.deepEqual(summary(ownersOf(model, new Map(), 'Listener', 'http-80')), []);
  });

  test('a RouteConfiguration: the listeners it serves, and the routes Envoy names', () => {
    assert.deepEqual(owners('RouteConfiguration', 'http-80'), [
      'Gateway/default/gw#http',
      'ListenerSet/default/tenant#plain',
    ]);
    assert.deepEqual(owners('RouteConfiguration', 'https-443/b.example.com'), [
      'ListenerSet/default/tenant#web',
    ]);
    const site = model.ports
      .find((p) => p.port === 80)!
      .http!.virtualHosts.flatMap((vh) => vh.routes)
      .find((r) => r.name.startsWith('HTTPRoute/default/site/'))!.name;
    assert.deepEqual(owners('RouteConfiguration', 'http-80', `route ${site}: invalid regex`), [
      'Gateway/default/gw#http',
      'ListenerSet/default/tenant#plain',
      'HTTPRoute/default/site',
    ]);
    // A route name that only starts like one of ours names nothing.
    assert.deepEqual(owners('RouteConfiguration', 'http-80', `route ${site}7: invalid`), [
      'Gateway/default/gw#http',
      'ListenerSet/default/tenant#plain',
    ]);
  });

  test('a Secret: the listeners that present it', () => {
    assert.deepEqual(owners('Secret', 'default/b-cert'), ['ListenerSet/default/tenant#web']);
    assert.deepEqual(owners('Secret', 'default/a-cert'), ['Gateway/default/gw#https']);
  });

  test('a Cluster or its ClusterLoadAssignment: the routes that use it, as backend or mirror', () => {
    assert.deepEqual(owners('Cluster', 'default/web/80'), [
      'HTTPRoute/default/secure',
      'HTTPRoute/default/site',
    ]);
    assert.deepEqual(owners('ClusterLoadAssignment', 'default/api/8080'), ['HTTPRoute/default/shop']);
    assert.deepEqual(owners('Cluster', 'default/copy/9000'), ['HTTPRoute/default/shop']);
  });

  test('a name the fleet does not have owns nothing', () => {
    assert.deepEqual(owners('Listener', 'http-81'), []);
    assert.deepEqual(owners('Secret', 'default/nope'), []);
    assert.deepEqual(owners('Cluster', 'default/nope/1'), []);
  });
});
