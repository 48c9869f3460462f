/**
 * Property test of the route-creation fast path (gateway/incremental/route-added.ts): on seeded
 * random worlds, adding random new HTTPRoutes/GRPCRoutes with addRoutes gives exactly what a full
 * build of the changed store gives (FleetModels and their Envoy resources, every status, the
 * state), or declines; and it applies often enough that the comparison means something.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { BuildMemo } from '../../src/gateway/build-memo';
import { addRoutes } from '../../src/gateway/incremental/route-added';
import { addListenerSet } from '../../src/gateway/incremental/listenerset';
import { translateFleet } from '../../src/envoy/translate';
import type { FleetModel } from '../../src/model/fleet';
import type { ObjectStatus } from '../../src/status/types';
import { statusKey } from '../../src/status/types';
import type { HTTPRouteRule, ParentReference } from '../../src/gateway/api';
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
  tlsSecret,
} from '../support/objects';
import { rng } from '../support/rng';
import { stateContents } from '../support/build-state';

const LS = { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' } as const;
const SERVICES = ['web', 'api', 'solo', 'h2', 'missing'];
const HOSTNAMES = [
  'a.example.com',
  'x.wild.example.com',
  'n0.example.com',
  'n1.example.com',
  'h.example.com',
];

type Random = () => number;
const pick = <T>(r: Random, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const chance = (r: Random, p: number): boolean => r() < p;

/** A creation time in January 2026 (ties are likely: precedence then goes by name). */
function created(r: Random): string {
  return `2026-01-${String(1 + Math.floor(r() * 4)).padStart(2, '0')}T00:00:00Z`;
}

/** A random world: Gateways, ListenerSets, certificates, Services, and some routes. */
function world(r: Random): { objects: KubeObject[]; sets: string[] } {
  const listeners = [
    httpListener('http', 8080),
    ...(chance(r, 0.5) ? [httpListener('http-h', 8080, 'h.example.com')] : []),
    httpsListener('https-a', 8443, 'a.example.com', 'a-cert'),
    ...(chance(r, 0.5) ? [httpsListener('https-w', 8443, '*.wild.example.com', 'w-cert')] : []),
    ...(chance(r, 0.3) ? [httpsListener('https-any', 9443, undefined, 'a-cert')] : []),
    ...(chance(r, 0.3)
      ? [httpListener('http-only', 8081, undefined, { allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }] } })]
      : []),
    ...(chance(r, 0.3)
      ? [httpListener('http-all', 8082, undefined, { allowedRoutes: { namespaces: { from: 'All' } } })]
      : []),
  ];
  const objects: KubeObject[] = [
    gatewayClass(),
    gateway('edge', listeners, { allowedListeners: { namespaces: { from: 'All' } } }),
    gateway('second', [httpListener('http', 9090)]),
    tlsSecret('a-cert', { hostnames: ['a.example.com'] }),
    tlsSecret('w-cert', { hostnames: ['*.wild.example.com'] }),
    ...backendService('web', 80, ['10.0.0.1']),
    ...backendService('api', 80, ['10.0.0.2']),
    ...backendService('solo', 80, ['10.0.0.3']),
    ...backendService('h2', 80, ['10.0.0.4'], { appProtocol: 'kubernetes.io/h2c' }),
  ];
  const sets: string[] = [];
  const count = Math.floor(r() * 3);
  for (let i = 0; i < count; i++) {
    const name = `ls-${i}`;
    sets.push(name);
    const host = chance(r, 0.8) ? `n${i}.example.com` : 'a.example.com'; // a.example.com: Conflicted
    objects.push(
      listenerSet(name, { name: 'edge' }, [httpsListener('l', 8443, host, `${name}-cert`)], {
        created: `2026-01-0${i + 1}T00:00:00Z`,
      }),
    );
    // Sometimes the certificate is missing: the listener is not ready, routes still attach.
    if (chance(r, 0.8)) objects.push(tlsSecret(`${name}-cert`, { hostnames: [host] }));
  }
  const existing = Math.floor(r() * 6);
  for (let i = 0; i < existing; i++) objects.push(randomRoute(r, `old-${i}`, sets));
  return { objects, sets };
}

/** A parentRef among those the world can have (and some it does not own). */
function randomParent(r: Random, sets: string[]): ParentReference {
  const options: ParentReference[] = [
    parentRef('edge'),
    parentRef('edge'),
    parentRef('edge', { sectionName: pick(r, ['http', 'https-a', 'https-w', 'http-only', 'http-all']) }),
    parentRef('edge', { port: pick(r, [8080, 8443, 9443]) }),
    parentRef('second'),
    parentRef('ghost'),
    parentRef('later', LS),
    ...sets.map((s) => parentRef(s, LS)),
    ...sets.map((s) => parentRef(s, LS)),
  ];
  return pick(r, options);
}

function randomRules(r: Random, name: string): HTTPRouteRule[] {
  const rules: HTTPRouteRule[] = [];
  const n = 1 + Math.floor(r() * 2);
  for (let i = 0; i < n; i++) {
    const bad = chance(r, 0.1);
    rules.push({
      matches: [
        {
          path: {
            type: pick(r, ['PathPrefix', 'Exact'] as const),
            value: pick(r, ['/', `/${name}`, '/shared']),
          },
        },
      ],
      ...(bad ? { filters: [{ type: 'Bogus' } as never] } : {}),
      backendRefs: [backendRef(pick(r, SERVICES), 80)],
    });
  }
  return rules;
}

/** A random HTTPRoute or GRPCRoute named `name`. */
function randomRoute(r: Random, name: string, sets: string[]): KubeObject {
  const refs = [randomParent(r, sets), ...(chance(r, 0.25) ? [randomParent(r, sets)] : [])];
  const hostnames = chance(r, 0.5)
    ? []
    : [pick(r, HOSTNAMES), ...(chance(r, 0.3) ? [pick(r, HOSTNAMES)] : [])].filter(
        (h, i, all) => all.indexOf(h) === i,
      );
  const o = {
    parentRefs: refs,
    created: created(r),
    ...(chance(r, 0.15) ? { namespace: 'other' } : {}),
    ...(hostnames.length ? { hostnames } : {}),
  };
  if (chance(r, 0.2)) {
    return grpcRoute(name, [{ backendRefs: [backendRef(pick(r, ['api', 'h2', 'web']), 80)] }], o);
  }
  return httpRoute(name, randomRules(r, name), o);
}

function byKey(statuses: readonly ObjectStatus[]): [string, ObjectStatus][] {
  return statuses
    .map((s): [string, ObjectStatus] => [statusKey(s), s])
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

/** Asserts that the fast path's fleets and statuses are those of a full build of `objects`' store. */
function assertSameAsFullBuild(
  objects: KubeObject[],
  fleets: Map<string, FleetModel>,
  statuses: readonly ObjectStatus[],
  state: unknown,
  what: string,
): void {
  const full = buildGateways(storeOf(...objects), OPTS);
  assert.deepEqual(byKey(statuses), byKey(full.statuses), `${what}: statuses`);
  assert.deepEqual(
    [...fleets.keys()].sort(),
    full.fleets.map((f) => f.fleet),
    `${what}: fleets`,
  );
  for (const expected of full.fleets) {
    const actual = fleets.get(expected.fleet)!;
    assert.deepEqual(actual, expected, `${what}: FleetModel of ${expected.fleet}`);
    assert.deepEqual(
      translateFleet(actual),
      translateFleet(expected),
      `${what}: resources of ${expected.fleet}`,
    );
  }
  assert.deepEqual(state, stateContents(full.state), `${what}: state`);
}

describe('route-creation fast path against a full build', () => {
  test('random worlds, random new routes: the same fleets, statuses and state, or a decline', () => {
    let applied = 0;
    let served = 0;
    let declined = 0;
    let picked = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const { objects, sets } = world(r);
      const store = storeOf(...objects);
      const memo = new BuildMemo();
      const built = buildGateways(store, OPTS, memo);
      const fleets = new Map(built.fleets.map((f) => [f.fleet, f]));
      const before = stateContents(built.state);
      const added = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, i) =>
        randomRoute(r, `new-${i}`, sets),
      );
      for (const o of added) store.put(o);
      const result = addRoutes(store, OPTS, memo, built.state, added, (f) => fleets.get(f));
      assert.deepEqual(stateContents(built.state), before, `seed ${seed}: the given state is left as it was`);
      if (!result) {
        declined++;
        continue;
      }
      applied++;
      if (result.fleets.length > 0) served++;
      for (const f of result.fleets) fleets.set(f.fleet, f);
      const all = [...objects, ...added];
      assertSameAsFullBuild(all, fleets, result.statuses, stateContents(result.state), `seed ${seed}`);

      // The set a new route named before it existed arrives: addListenerSet attaches the route.
      if (!added.some((o) => JSON.stringify(o.spec).includes('"later"'))) continue;
      const later = listenerSet(
        'later',
        { name: 'edge' },
        [httpsListener('l', 8443, 'n9.example.com', 'later-cert')],
        {
          created: '2026-02-01T00:00:00Z',
        },
      );
      const cert = tlsSecret('later-cert', { hostnames: ['n9.example.com'] });
      store.put(cert);
      store.put(later);
      const next = addListenerSet(store, OPTS, memo, result.state, later, [], (f) => fleets.get(f));
      if (!next) continue;
      picked++;
      if (next.fleet) fleets.set(next.fleet.fleet, next.fleet);
      assertSameAsFullBuild(
        [...all, cert, later],
        fleets,
        next.statuses,
        stateContents(next.state),
        `seed ${seed} + later`,
      );
    }
    // Enough cases of each outcome for the comparison to mean something.
    assert.ok(applied >= 100, `applied ${applied} of 300`);
    assert.ok(served >= 50, `served something new in ${served}`);
    assert.ok(declined >= 10, `declined ${declined}`);
    assert.ok(picked >= 5, `a set picked up routes created before it ${picked} times`);
    if (process.env.ROUTE_ADDED_COUNTS) console.error({ applied, served, declined, picked });
  });
});
