import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import type { FleetModel } from '../../src/model/fleet';
import {
  OPTS,
  backendRef,
  backendService,
  condSummary,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  routeParents,
  storeOf,
} from '../support/objects';

describe('buildGateways: Gateway with an HTTP listener and an HTTPRoute', () => {
  const objects = [
    gatewayClass(),
    gateway('gw', [httpListener('http', 80)]),
    httpRoute(
      'web',
      [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/app' } }],
          backendRefs: [backendRef('web', 8080)],
        },
      ],
      { hostnames: ['www.example.com'], generation: 3 },
    ),
    ...backendService('web', 8080, ['10.0.0.2', '10.0.0.1']),
  ];

  test('produces the fleet model', () => {
    const result = buildGateways(storeOf(...objects), OPTS);
    const expected: FleetModel = {
      fleet: 'default/gw',
      gateway: { namespace: 'default', name: 'gw' },
      ports: [
        {
          name: 'http-80',
          port: 80,
          http: {
            routeConfigName: 'http-80',
            virtualHosts: [
              {
                name: 'www.example.com',
                domains: ['www.example.com'],
                routes: [
                  {
                    name: 'HTTPRoute/default/web/rule/0/match/0',
                    match: { path: { type: 'PathPrefix', value: '/app' } },
                    action: { kind: 'forward', backends: [{ cluster: 'default/web/8080', weight: 1 }] },
                  },
                ],
              },
            ],
          },
          filterChains: [],
        },
      ],
      clusters: [
        {
          name: 'default/web/8080',
          protocol: 'http1',
          endpoints: [
            { address: '10.0.0.1', port: 8080, ready: true },
            { address: '10.0.0.2', port: 8080, ready: true },
          ],
        },
      ],
      secrets: [],
    };
    assert.deepEqual(result.fleets, [expected]);
  });

  test('writes route status with observedGeneration and attachedRoutes on the listener', () => {
    const result = buildGateways(storeOf(...objects), OPTS);
    const parents = routeParents(result.statuses, 'HTTPRoute', 'web');
    assert.ok(parents);
    assert.equal(parents.length, 1);
    assert.deepEqual(parents[0].parentRef, { name: 'gw' });
    assert.equal(parents[0].controllerName, OPTS.controllerName);
    assert.deepEqual(condSummary(parents[0].conditions), [
      'Accepted=True/Accepted',
      'ResolvedRefs=True/ResolvedRefs',
    ]);
    for (const c of parents[0].conditions) assert.equal(c.observedGeneration, 3);

    const gw = result.statuses.find((s) => s.kind === 'Gateway');
    assert.ok(gw);
    const listeners = gw.status.listeners as { name: string; attachedRoutes: number }[];
    assert.deepEqual(
      listeners.map((l) => [l.name, l.attachedRoutes]),
      [['http', 1]],
    );
    assert.ok(result.statuses.some((s) => s.kind === 'GatewayClass'));
  });

  test('a Gateway of another class gets no fleet and its routes no status', () => {
    const result = buildGateways(
      storeOf(gatewayClass('other', 'example.com/other'), ...objects.slice(1).map((o) => o), {
        ...gateway('gw', [httpListener('http', 80)], { className: 'other' }),
      }),
      OPTS,
    );
    assert.deepEqual(result.fleets, []);
    assert.equal(routeParents(result.statuses, 'HTTPRoute', 'web'), undefined);
  });
});

describe('buildGateways: stale route status', () => {
  test('a route that no longer names a Convoy parent gets parents: [] when it still shows our entry', () => {
    const stale = {
      ...httpRoute('moved', [{ backendRefs: [backendRef('web', 8080)] }], {
        parentRefs: [{ name: 'elsewhere' }],
      }),
      status: {
        parents: [
          { parentRef: { name: 'gw' }, controllerName: OPTS.controllerName, conditions: [] },
          { parentRef: { name: 'elsewhere' }, controllerName: 'example.com/other', conditions: [] },
        ],
      },
    };
    const foreignOnly = {
      ...httpRoute('foreign', [{ backendRefs: [backendRef('web', 8080)] }], {
        parentRefs: [{ name: 'elsewhere' }],
      }),
      status: {
        parents: [{ parentRef: { name: 'elsewhere' }, controllerName: 'example.com/other', conditions: [] }],
      },
    };
    const result = buildGateways(
      storeOf(gatewayClass(), gateway('gw', [httpListener('http', 80)]), stale, foreignOnly),
      OPTS,
    );
    assert.deepEqual(routeParents(result.statuses, 'HTTPRoute', 'moved'), []);
    assert.equal(routeParents(result.statuses, 'HTTPRoute', 'foreign'), undefined);
  });
});
