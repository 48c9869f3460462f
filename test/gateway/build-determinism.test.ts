import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import type { KubeObject } from '../../src/store/objects';
import {
  OPTS,
  backendRef,
  backendService,
  endpointSlice,
  gateway,
  gatewayClass,
  grpcRoute,
  httpListener,
  httpRoute,
  httpsListener,
  listenerSet,
  namespace,
  parentRef,
  referenceGrant,
  storeOf,
  tlsListener,
  tlsRoute,
  tlsSecret,
} from '../support/objects';
import { rng } from '../support/rng';

function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  const next = rng(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export function scenario(): KubeObject[] {
  return [
    gatewayClass(),
    namespace('infra'),
    namespace('apps', { shared: 'yes' }),
    gateway(
      'edge',
      [
        httpListener('http', 80, undefined, { allowedRoutes: { namespaces: { from: 'All' } } }),
        httpListener('wild', 80, '*.example.com', { allowedRoutes: { namespaces: { from: 'All' } } }),
        httpsListener('www', 443, 'www.example.com', 'www-cert', {
          allowedRoutes: { namespaces: { from: 'All' } },
        }),
        tlsListener('db', 443, '*.db.example.com', 'Passthrough', undefined, {
          allowedRoutes: { namespaces: { from: 'All' } },
        }),
      ],
      { namespace: 'infra', allowedListeners: { namespaces: { from: 'All' } } },
    ),
    gateway('internal', [httpListener('http', 8080)], { namespace: 'infra' }),
    listenerSet(
      'team',
      { name: 'edge', namespace: 'infra' },
      [httpListener('team', 80, 'team.example.org')],
      {
        namespace: 'apps',
      },
    ),
    tlsSecret('www-cert', { hostnames: ['www.example.com'], namespace: 'infra' }),
    referenceGrant(
      'apps-to-infra',
      {
        from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }],
        to: [{ group: '', kind: 'Service' }],
      },
      { namespace: 'infra' },
    ),
    ...backendService('web', 80, ['10.0.0.3', '10.0.0.1', '10.0.0.2'], { namespace: 'apps' }),
    endpointSlice(
      'web-extra',
      'web',
      [{ name: 'http', port: 8080 }],
      [{ addresses: ['10.0.0.2', '10.0.0.4'] }],
      {
        namespace: 'apps',
      },
    ),
    ...backendService('api', 8080, ['10.1.0.1'], { namespace: 'infra' }),
    ...backendService('rpc', 9000, ['10.2.0.1'], { namespace: 'apps', portName: 'grpc' }),
    ...backendService('pg', 5432, ['10.3.0.1'], { namespace: 'apps', portName: 'pg', targetPort: 5432 }),
    httpRoute(
      'site',
      [
        { matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [backendRef('web', 80)] },
        {
          matches: [{ path: { type: 'Exact', value: '/api' } }, { headers: [{ name: 'x-api', value: '1' }] }],
          backendRefs: [
            backendRef('api', 8080, { namespace: 'infra', weight: 3 }),
            backendRef('web', 80, { weight: 1 }),
          ],
        },
      ],
      {
        namespace: 'apps',
        parentRefs: [parentRef('edge', { namespace: 'infra' })],
        created: '2026-01-02T00:00:00Z',
      },
    ),
    httpRoute('wild', [{ backendRefs: [backendRef('web', 80)] }], {
      namespace: 'apps',
      hostnames: ['*.example.com', 'a.example.com'],
      parentRefs: [parentRef('edge', { namespace: 'infra' })],
      created: '2026-01-02T00:00:00Z',
    }),
    httpRoute('team', [{ backendRefs: [backendRef('web', 80)] }], {
      namespace: 'apps',
      parentRefs: [parentRef('team', { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' })],
    }),
    httpRoute('internal', [{ backendRefs: [backendRef('api', 8080)] }], {
      namespace: 'infra',
      parentRefs: [parentRef('internal')],
    }),
    grpcRoute(
      'rpc',
      [
        {
          matches: [{ method: { service: 'pkg.Svc', method: 'Get' } }],
          backendRefs: [backendRef('rpc', 9000)],
        },
      ],
      {
        namespace: 'apps',
        hostnames: ['grpc.example.com'],
        parentRefs: [parentRef('edge', { namespace: 'infra' })],
      },
    ),
    tlsRoute('pg', ['main.db.example.com'], [{ backendRefs: [backendRef('pg', 5432)] }], {
      namespace: 'apps',
      parentRefs: [parentRef('edge', { namespace: 'infra', sectionName: 'db' })],
    }),
    httpRoute('broken', [{ backendRefs: [backendRef('api', 8080, { namespace: 'other' })] }], {
      namespace: 'apps',
      parentRefs: [parentRef('edge', { namespace: 'infra' }), parentRef('internal', { namespace: 'infra' })],
    }),
  ];
}

test('same input twice → deep-equal output', () => {
  const a = buildGateways(storeOf(...scenario()), OPTS);
  const b = buildGateways(storeOf(...scenario()), OPTS);
  assert.deepEqual(a, b);
  // The scenario is not trivially empty.
  assert.equal(a.fleets.length, 2);
  assert.ok(a.fleets[0].ports.length >= 2);
  assert.ok(a.statuses.filter((s) => s.kind === 'HTTPRoute').length >= 4);
});

test('shuffled store insertion order → identical output', () => {
  const reference = buildGateways(storeOf(...scenario()), OPTS);
  for (const seed of [1, 2, 3, 42, 1234, 99991]) {
    const got = buildGateways(storeOf(...shuffled(scenario(), seed)), OPTS);
    assert.deepEqual(got, reference, `seed ${seed}`);
    assert.equal(JSON.stringify(got), JSON.stringify(reference), `seed ${seed} (serialised)`);
  }
});

test('shuffled list order inside spec fields that are sets (endpoints) → identical clusters', () => {
  const a = buildGateways(storeOf(...scenario()), OPTS);
  const objs = scenario().map((o) =>
    o.kind === 'EndpointSlice' ? { ...o, endpoints: shuffled((o.endpoints as unknown[]) ?? [], 7) } : o,
  );
  const b = buildGateways(storeOf(...objs), OPTS);
  assert.deepEqual(
    b.fleets.map((f) => f.clusters),
    a.fleets.map((f) => f.clusters),
  );
});
