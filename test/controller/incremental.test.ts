/**
 * Oracle for the controller's fast paths: after every step of a seeded random sequence of
 * certificate rotations and route edits, the incrementally maintained snapshot and statuses must
 * equal what a fresh Controller publishes after a full build of a copy of the same store.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TypeUrl } from '../../src/envoy/resources';
import type { KubeObject } from '../../src/store/objects';
import { keyOf } from '../../src/store/objects';
import type { HTTPRouteRule } from '../../src/gateway/api';
import {
  CONTROLLER,
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
  tlsSecret,
} from '../support/objects';
import { rng } from '../support/rng';
import {
  buildCounts,
  lastStatuses,
  runController,
  servedResources,
  type Running,
} from '../support/controller-oracle';

const SECRETS = ['a-cert', 'b-cert', 'shared-cert', 'ls-cert'];
const HOSTS: Record<string, string> = {
  'a-cert': 'a.example.com',
  'b-cert': 'b.example.com',
  'shared-cert': 'c.example.com',
  'ls-cert': 'ls.example.com',
};

/** A certificate for the Secret; variants differ in an extra SAN, hence in bytes. */
function secret(name: string, variant: number): KubeObject {
  const host = HOSTS[name];
  return tlsSecret(name, { hostnames: variant === 0 ? [host] : [host, `v${variant}.${host}`] });
}

function badSecret(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name, namespace: 'default' },
    data: { 'tls.crt': Buffer.from('garbage').toString('base64'), 'tls.key': 'eA==' },
  };
}

function rules(path: string, backend: string): HTTPRouteRule[] {
  return [
    {
      matches: [{ path: { type: 'PathPrefix', value: path } }],
      backendRefs: [backendRef(backend, 80)],
    },
    { matches: [{ path: { type: 'Exact', value: `${path}/exact` } }], backendRefs: [backendRef('web', 80)] },
  ];
}

const ROUTES: { name: string; hostnames?: string[]; parent: ReturnType<typeof parentRef> }[] = [
  { name: 'r-all', parent: parentRef('edge') },
  { name: 'r-a', hostnames: ['a.example.com'], parent: parentRef('edge') },
  { name: 'r-b', hostnames: ['b.example.com', 'c.example.com'], parent: parentRef('edge') },
  { name: 'r-https', parent: parentRef('edge', { sectionName: 'https-a' }) },
  {
    name: 'r-ls',
    parent: parentRef('tenant', { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' }),
  },
];

/** Every route object gets a new generation, as the API server gives every spec change. */
let generation = 0;

function route(
  name: string,
  path: string,
  backend = 'web',
  parent?: ReturnType<typeof parentRef>,
): KubeObject {
  const spec = ROUTES.find((r) => r.name === name)!;
  return httpRoute(name, rules(path, backend), {
    parentRefs: [parent ?? spec.parent],
    generation: ++generation,
    ...(spec.hostnames ? { hostnames: spec.hostnames } : {}),
  });
}

function world(): KubeObject[] {
  return [
    gatewayClass(),
    gateway(
      'edge',
      [
        httpListener('http', 8080),
        httpsListener('https-a', 8443, 'a.example.com', 'a-cert'),
        httpsListener('https-b', 8443, 'b.example.com', 'b-cert'),
        httpsListener('https-c', 8443, 'c.example.com', 'shared-cert'),
        httpsListener('https-c2', 9443, 'c.example.com', 'shared-cert'),
      ],
      { allowedListeners: { namespaces: { from: 'Same' } } },
    ),
    listenerSet('tenant', { name: 'edge' }, [httpsListener('ls', 8443, 'ls.example.com', 'ls-cert')]),
    ...SECRETS.map((s) => secret(s, 0)),
    ...backendService('web', 80, ['10.0.0.1']),
    ...backendService('api', 80, ['10.0.0.2']),
    // Only ever named by an edit: its cluster comes and goes with that route.
    ...backendService('solo', 80, ['10.0.0.3']),
    ...ROUTES.map((r) => route(r.name, `/${r.name}`)),
    grpcRoute('g', [{ backendRefs: [backendRef('api', 80)] }], { parentRefs: [parentRef('edge')] }),
  ];
}

/** Applies a change to the incremental controller, then compares it with a fresh full build. */
async function step(
  inc: Running,
  state: Map<string, KubeObject>,
  o: KubeObject,
  what: string,
): Promise<void> {
  const lastGood = inc.controller.lastGoodCertificates();
  state.set(keyOf(o), o);
  inc.store.put(o);
  await inc.controller.settle();
  const oracle = await runController([...state.values()], lastGood);
  try {
    assert.deepEqual(servedResources(inc.cache), servedResources(oracle.cache), `${what}: resources`);
    assert.deepEqual(lastStatuses(inc), lastStatuses(oracle), `${what}: statuses`);
  } finally {
    oracle.controller.stop();
  }
}

/** Applies several changes at once (one build), then compares with a fresh full build. */
async function stepMany(
  inc: Running,
  state: Map<string, KubeObject>,
  objects: KubeObject[],
  what: string,
): Promise<void> {
  await stepChange(inc, state, [], objects, what);
}

/** Deletes objects (and puts others) in one build, then compares with a fresh full build. */
async function stepChange(
  inc: Running,
  state: Map<string, KubeObject>,
  deleted: KubeObject[],
  put: KubeObject[],
  what: string,
): Promise<void> {
  const lastGood = inc.controller.lastGoodCertificates();
  for (const o of deleted) {
    state.delete(keyOf(o));
    inc.store.delete(o.kind, o.metadata.namespace ?? 'default', o.metadata.name);
  }
  for (const o of put) {
    state.set(keyOf(o), o);
    inc.store.put(o);
  }
  await inc.controller.settle();
  const oracle = await runController([...state.values()], lastGood);
  try {
    assert.deepEqual(servedResources(inc.cache), servedResources(oracle.cache), `${what}: resources`);
    assert.deepEqual(lastStatuses(inc), lastStatuses(oracle), `${what}: statuses`);
  } finally {
    oracle.controller.stop();
  }
}

const TENANT = 'ListenerSet/default/tenant';

/** The removal and replacement fast paths' results (convoy_builds_total). */
const STRUCTURAL = ['route_removed', 'listenerset_removed', 'listenerset_replaced'];

type Addition = 'ok' | 'no-route' | 'not-allowed' | 'conflict' | 'conflict-added' | 'bad-cert' | 'grpc';
type Fallback = 'wildcard' | 'older' | 'same-time' | 'new-port' | 'also-gateway' | 'no-hostname';

/** Seconds after DEFAULT_CREATED: every added ListenerSet is newer than the last one. */
let addedCount = 0;
/** The hostname of the last 'ok' addition: 'conflict-added' claims it again (a conflict with a set the fast path added). */
let lastAddedHost: string | undefined;

/**
 * A new ListenerSet `add-<n>` on `edge` with its Secret and (unless 'no-route') a route naming
 * only it. Every Addition takes the ListenerSet fast path; every Fallback needs a full build.
 */
function addition(how: Addition | Fallback): { objects: KubeObject[]; set: string; route?: KubeObject } {
  const n = ++addedCount;
  const name = `add-${n}`;
  const ns = how === 'not-allowed' ? 'other' : 'default';
  const host =
    how === 'conflict'
      ? 'a.example.com'
      : how === 'conflict-added'
        ? (lastAddedHost ?? 'a.example.com')
        : how === 'wildcard'
          ? '*.example.com'
          : how === 'no-hostname'
            ? undefined
            : `n${n}.example.com`;
  const created =
    how === 'older'
      ? '2025-12-31T00:00:00Z'
      : how === 'same-time'
        ? '2026-01-01T00:00:00Z'
        : new Date(Date.parse('2026-01-02T00:00:00Z') + n * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  // Overlapping hostnames go to 9443 (c.example.com), so later additions on 8443 stay fast;
  // a new port is new every time (once served, the next addition there could be fast).
  const port = how === 'new-port' ? 10000 + n : how === 'wildcard' || how === 'no-hostname' ? 9443 : 8443;
  if (how === 'ok') lastAddedHost = host;
  const certName = `${name}-cert`;
  const cert =
    how === 'bad-cert'
      ? { ...badSecret(certName), metadata: { name: certName, namespace: ns } }
      : tlsSecret(certName, {
          hostnames: [host && !host.startsWith('*') ? host : `x${n}.example.com`],
          namespace: ns,
        });
  const set = listenerSet(
    name,
    { name: 'edge', namespace: 'default' },
    [httpsListener('l', port, host, certName)],
    { namespace: ns, created },
  );
  const lsRef = parentRef(name, { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' });
  const refs = how === 'also-gateway' ? [lsRef, parentRef('edge', { namespace: 'default' })] : [lsRef];
  const route =
    how === 'no-route'
      ? undefined
      : how === 'grpc'
        ? grpcRoute(`r-${name}`, [{ backendRefs: [backendRef('api', 80)] }], {
            parentRefs: refs,
            namespace: ns,
          })
        : httpRoute(`r-${name}`, rules(`/${name}`, n % 2 ? 'solo' : 'web'), {
            parentRefs: refs,
            namespace: ns,
          });
  // Every other route carries a status of ours, as in Kubernetes once written: with no parent left
  // it gets the empty one (and back its real one when its set is replaced).
  if (route && n % 2 === 0)
    route.status = { parents: [{ parentRef: lsRef, controllerName: CONTROLLER, conditions: [] }] };
  return { objects: [cert, set, ...(route ? [route] : [])], set: name, route };
}

function delta(after: Record<string, number>, before: Record<string, number>, k: string): number {
  return (after[k] ?? 0) - (before[k] ?? 0);
}

describe('Controller fast paths against a full-build oracle', { concurrency: false }, () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
    test(`seeded sequence ${seed}: rotations, invalid certificates, route edits, ListenerSets added`, async () => {
      const objects = world();
      const state = new Map(objects.map((o) => [keyOf(o), o]));
      const inc = await runController(objects);
      const random = rng(seed);
      const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
      const variant = new Map(SECRETS.map((s) => [s, 0]));
      const bad = new Set<string>();
      const parents = new Map(ROUTES.map((r) => [r.name, r.parent]));
      const addedRoutes: KubeObject[] = [];
      const overlapping = new Set<string>();
      const addedSets: ReturnType<typeof addition>[] = [];
      let removals = 0;
      let structural = 0;
      try {
        for (let i = 0; i < 26; i++) {
          const before = await buildCounts(inc.metrics);
          if (random() < 0.25) {
            // Deletions, ListenerSet updates, Secrets of ListenerSets deleted or created again.
            await removal(inc, state, random, addedSets, addedRoutes, i);
            removals++;
            const after = await buildCounts(inc.metrics);
            structural += STRUCTURAL.reduce((n, k) => n + delta(after, before, k), 0);
            continue;
          }
          if (random() < 0.15) {
            // A route created alone, on a parent and hostnames of the world's routes.
            const like = pick(ROUTES);
            const created = httpRoute(`c-${seed}-${i}`, rules(`/c${i}`, pick(['web', 'api', 'solo'])), {
              parentRefs: [like.parent],
              created: new Date(Date.parse('2026-01-01T00:00:00Z') + Math.floor(random() * 3) * 1000)
                .toISOString()
                .replace(/\.\d{3}Z$/, 'Z'),
              ...(like.hostnames ? { hostnames: like.hostnames } : {}),
            });
            await step(inc, state, created, `step ${i}: create ${created.metadata.name}`);
            const after = await buildCounts(inc.metrics);
            const reasons = JSON.stringify((await inc.metrics.fullBuilds.get()).values);
            assert.equal(
              delta(after, before, 'route_created'),
              1,
              `step ${i}: route-creation fast path ${reasons}`,
            );
            assert.equal(delta(after, before, 'ok'), 0, `step ${i}: no full build`);
            continue;
          }
          if (random() < 0.25) {
            // A ListenerSet added (with its Secret and maybe a route), or an edit of such a route.
            const fallback = random() < 0.3;
            if (!fallback && addedRoutes.length > 0 && random() < 0.3) {
              const old = pick(addedRoutes);
              const edited = { ...old, metadata: { ...old.metadata, generation: ++generation } };
              edited.spec = { ...(old.spec as object), rules: rules(`/e${i}`, pick(['web', 'api', 'solo'])) };
              if (old.kind === 'GRPCRoute') edited.spec = { ...(old.spec as object) };
              await step(inc, state, edited, `step ${i}: edit added ${old.metadata.name}`);
              const after = await buildCounts(inc.metrics);
              assert.equal(delta(after, before, 'route'), 1, `step ${i}: added route edit fast path`);
              assert.equal(delta(after, before, 'ok'), 0, `step ${i}: no full build`);
              continue;
            }
            let how = fallback
              ? pick<Fallback>(['wildcard', 'older', 'same-time', 'new-port', 'also-gateway', 'no-hostname'])
              : pick<Addition>([
                  'ok',
                  'ok',
                  'no-route',
                  'not-allowed',
                  'conflict',
                  'conflict-added',
                  'bad-cert',
                  'grpc',
                ]);
            // A second identical overlapping listener would be Conflicted (not ready): a fast path.
            if (how === 'wildcard' || how === 'no-hostname') {
              if (overlapping.has(how)) how = 'older';
              overlapping.add(how);
            }
            const add = addition(how);
            addedSets.push(add);
            await stepMany(inc, state, add.objects, `step ${i}: add ListenerSet ${add.set} (${how})`);
            const after = await buildCounts(inc.metrics);
            // With the world's older set deleted, an 'older' one may be its Gateway's newest.
            if ((how === 'older' || how === 'same-time') && !state.has(TENANT)) continue;
            assert.equal(
              delta(after, before, 'listenerset'),
              fallback ? 0 : 1,
              `step ${i}: ${how} fast path`,
            );
            assert.equal(delta(after, before, 'ok'), fallback ? 1 : 0, `step ${i}: ${how} full builds`);
            if (add.route && how !== 'grpc') addedRoutes.push(add.route);
            continue;
          }
          const r = random();
          if (r < 0.45) {
            const name = pick(SECRETS);
            const v = ((variant.get(name) ?? 0) + 1 + Math.floor(random() * 2)) % 3;
            variant.set(name, v);
            const wasBad = bad.delete(name);
            await step(inc, state, secret(name, v), `step ${i}: rotate ${name} → ${v}`);
            const after = await buildCounts(inc.metrics);
            // Once its set is deleted, ls-cert is no Secret the build refers to (checked above only).
            if (name === 'ls-cert' && !state.has(TENANT)) continue;
            // Valid → valid takes the fast path; invalid → valid needs a full build.
            assert.equal(delta(after, before, 'secrets'), wasBad ? 0 : 1, `step ${i}: secrets fast path`);
            assert.equal(delta(after, before, 'ok'), wasBad ? 1 : 0, `step ${i}: full builds`);
          } else if (r < 0.6) {
            const name = pick(SECRETS);
            const wasBad = bad.has(name);
            bad.add(name);
            await step(inc, state, badSecret(name), `step ${i}: invalidate ${name}`);
            const after = await buildCounts(inc.metrics);
            if (name === 'ls-cert' && !state.has(TENANT)) continue;
            if (!wasBad)
              assert.equal(delta(after, before, 'ok'), 1, `step ${i}: invalid certificate rebuilds`);
            assert.equal(delta(after, before, 'secrets'), 0, `step ${i}: no fast path`);
          } else if (r < 0.82) {
            const name = pick(ROUTES).name;
            const path = `/${name}/${Math.floor(random() * 1000)}`;
            const parent = parents.get(name)!;
            const parentChanged =
              JSON.stringify(parent) !== JSON.stringify(ROUTES.find((x) => x.name === name)!.parent);
            parents.set(name, ROUTES.find((x) => x.name === name)!.parent);
            await step(
              inc,
              state,
              route(name, path, pick(['web', 'api', 'solo'])),
              `step ${i}: edit ${name} ${path}`,
            );
            const after = await buildCounts(inc.metrics);
            // r-ls names the deleted tenant: no parent of ours (checked above only).
            if (name === 'r-ls' && !state.has(TENANT)) continue;
            // Same parentRefs and hostnames, valid rules: the route fast path; else a full build.
            assert.equal(delta(after, before, 'route'), parentChanged ? 0 : 1, `step ${i}: route fast path`);
            assert.equal(delta(after, before, 'ok'), parentChanged ? 1 : 0, `step ${i}: full builds`);
          } else if (r < 0.9) {
            // Endpoints, including of a Service only an earlier route fast path made relevant.
            const svc = pick(['web', 'api', 'solo']);
            const address = `10.1.0.${Math.floor(random() * 250)}`;
            const [, slice] = backendService(svc, 80, [address]);
            await step(inc, state, slice, `step ${i}: ${svc} endpoints`);
          } else if (r < 0.95) {
            // A route created earlier alone (c-*), deleted.
            const created = [...state.values()].filter((o) => o.metadata.name.startsWith('c-'));
            if (created.length === 0) continue;
            await stepChange(inc, state, [pick(created)], [], `step ${i}: delete a created route`);
          } else {
            const name = pick(ROUTES).name;
            const parent = pick([
              parentRef('edge'),
              parentRef('edge', { sectionName: 'https-b' }),
              parentRef('edge', { sectionName: 'http' }),
            ]);
            const same = JSON.stringify(parents.get(name)) === JSON.stringify(parent);
            parents.set(name, parent);
            await step(inc, state, route(name, `/${name}`, 'web', parent), `step ${i}: reparent ${name}`);
            const after = await buildCounts(inc.metrics);
            if (same)
              assert.equal(delta(after, before, 'ok'), 0, `step ${i}: same parentRefs, no full build`);
            else {
              assert.equal(delta(after, before, 'route'), 0, `step ${i}: parentRefs change is no fast path`);
              assert.equal(delta(after, before, 'ok'), 1, `step ${i}: parentRefs change is a full build`);
            }
          }
        }
        // The removal fast paths ran (each step's result is checked against the oracle above).
        if (removals >= 3) assert.ok(structural > 0, `${removals} removals, none fast`);
      } finally {
        inc.controller.stop();
      }
    });
  }

  test('a rotation of two Secrets at once is one fast pass; statuses are not republished', async () => {
    const inc = await runController(world());
    try {
      const before = await buildCounts(inc.metrics);
      const publishedBefore = inc.published.length;
      const secretsBefore = inc.cache.snapshot('default/edge')!.types[TypeUrl.Secret].entries;
      const listenersBefore = inc.cache.snapshot('default/edge')!.types[TypeUrl.Listener].entries;
      inc.store.put(secret('a-cert', 1));
      inc.store.put(secret('shared-cert', 2));
      await inc.controller.settle();
      const after = await buildCounts(inc.metrics);
      assert.equal(delta(after, before, 'secrets'), 1);
      assert.equal(delta(after, before, 'ok'), 0);
      assert.equal(inc.published.length, publishedBefore, 'no status publication');
      const snap = inc.cache.snapshot('default/edge')!;
      const changed = [...snap.types[TypeUrl.Secret].entries]
        .filter(([n, e]) => secretsBefore.get(n)?.version !== e.version)
        .map(([n]) => n)
        .sort();
      assert.deepEqual(changed, ['default/a-cert', 'default/shared-cert']);
      for (const [n, e] of snap.types[TypeUrl.Listener].entries)
        assert.equal(e.version, listenersBefore.get(n)?.version, `listener ${n} unchanged`);
    } finally {
      inc.controller.stop();
    }
  });

  test('route edits that change hostnames, parentRefs or validity fall back to a full build', async () => {
    const objects = world();
    const state = new Map(objects.map((o) => [keyOf(o), o]));
    const inc = await runController(objects);
    try {
      const cases: [string, KubeObject][] = [
        [
          'hostnames',
          httpRoute('r-a', rules('/x', 'web'), {
            parentRefs: [parentRef('edge')],
            hostnames: ['b.example.com'],
          }),
        ],
        ['parentRefs', route('r-b', '/y', 'web', parentRef('edge', { sectionName: 'https-b' }))],
        [
          'no valid rule',
          httpRoute(
            'r-all',
            [{ filters: [{ type: 'Bogus' } as never], backendRefs: [backendRef('web', 80)] }],
            {
              parentRefs: [parentRef('edge')],
            },
          ),
        ],
        ['valid again', route('r-all', '/z')],
      ];
      for (const [what, o] of cases) {
        const before = await buildCounts(inc.metrics);
        await step(inc, state, o, what);
        const after = await buildCounts(inc.metrics);
        assert.equal(delta(after, before, 'route'), 0, `${what}: no fast path`);
        assert.equal(delta(after, before, 'ok'), 1, `${what}: full build`);
      }
      // And a plain edit afterwards takes the fast path again, for GRPCRoutes too.
      const before = await buildCounts(inc.metrics);
      await step(inc, state, route('r-all', '/w', 'api'), 'plain edit');
      const grpc = grpcRoute('g', [{ backendRefs: [backendRef('web', 80)] }], {
        parentRefs: [parentRef('edge')],
        generation: 2,
      });
      await step(inc, state, grpc, 'GRPCRoute edit');
      assert.equal(delta(await buildCounts(inc.metrics), before, 'route'), 2);
      assert.equal(delta(await buildCounts(inc.metrics), before, 'ok'), 0);
    } finally {
      inc.controller.stop();
    }
  });

  test('ListenerSet additions take the fast path, or fall back when they could change more', async () => {
    const objects = world();
    const state = new Map(objects.map((o) => [keyOf(o), o]));
    const inc = await runController(objects);
    try {
      const cases: [Addition | Fallback, boolean][] = [
        ['ok', true],
        ['no-route', true],
        ['not-allowed', true],
        ['conflict', true],
        ['bad-cert', true],
        ['grpc', true],
        ['wildcard', false],
        ['older', false],
        ['same-time', false],
        ['new-port', false],
        ['also-gateway', false],
        ['no-hostname', false],
        ['ok', true],
        // Conflicts with the set just added by the fast path (its claims carried from that addition).
        ['conflict-added', true],
      ];
      for (const [how, fast] of cases) {
        const before = await buildCounts(inc.metrics);
        const add = addition(how);
        await stepMany(inc, state, add.objects, `add ${add.set} (${how})`);
        const after = await buildCounts(inc.metrics);
        assert.equal(delta(after, before, 'listenerset'), fast ? 1 : 0, `${how}: fast path`);
        assert.equal(delta(after, before, 'ok'), fast ? 0 : 1, `${how}: full build`);
      }
      // A route created alone, naming an existing ListenerSet, takes the route-creation fast path.
      const before = await buildCounts(inc.metrics);
      const lone = httpRoute('r-lone', rules('/lone', 'web'), {
        parentRefs: [parentRef('tenant', { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' })],
      });
      await step(inc, state, lone, 'route created alone');
      assert.equal(delta(await buildCounts(inc.metrics), before, 'route_created'), 1);
      assert.equal(delta(await buildCounts(inc.metrics), before, 'ok'), 0);
      // A route created before the set it names: nothing of ours changes until the set arrives,
      // which then takes the ListenerSet fast path and attaches the waiting route.
      const early = httpRoute('r-early', rules('/early', 'web'), {
        parentRefs: [
          parentRef(`add-${addedCount + 1}`, { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' }),
        ],
      });
      await step(inc, state, early, 'route naming a future set');
      const before3 = await buildCounts(inc.metrics);
      const named = addition('no-route');
      await stepMany(inc, state, named.objects, 'add a set an existing route names');
      assert.equal(delta(await buildCounts(inc.metrics), before3, 'listenerset'), 1);
      assert.equal(delta(await buildCounts(inc.metrics), before3, 'ok'), 0);
      // A route created before the set that also names an existing parent: adding the set is a full build.
      const both = httpRoute('r-both', rules('/both', 'web'), {
        parentRefs: [
          parentRef(`add-${addedCount + 1}`, { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' }),
          parentRef('edge'),
        ],
      });
      await step(inc, state, both, 'route naming a future set and the Gateway');
      const before4 = await buildCounts(inc.metrics);
      await stepMany(inc, state, addition('no-route').objects, 'add a set an attached route names');
      assert.equal(delta(await buildCounts(inc.metrics), before4, 'listenerset'), 0);
      assert.equal(delta(await buildCounts(inc.metrics), before4, 'ok'), 1);
      // The Secret of a fast-pathed set is referenced: its rotation takes the certificate fast path.
      await stepMany(inc, state, addition('ok').objects, 'one more addition');
      const before2 = await buildCounts(inc.metrics);
      const host = `n${addedCount}.example.com`;
      await step(
        inc,
        state,
        tlsSecret(`add-${addedCount}-cert`, { hostnames: [host, `v1.${host}`] }),
        'rotate added',
      );
      assert.equal(delta(await buildCounts(inc.metrics), before2, 'secrets'), 1);
    } finally {
      inc.controller.stop();
    }
  });

  test('a certificate becoming invalid is a full build; the listener keeps serving its last good one', async () => {
    const objects = world();
    const state = new Map(objects.map((o) => [keyOf(o), o]));
    const inc = await runController(objects);
    try {
      const entry = () =>
        inc.cache.snapshot('default/edge')!.types[TypeUrl.Secret].entries.get('default/b-cert');
      const served = entry();
      assert.ok(served);
      const before = await buildCounts(inc.metrics);
      await step(inc, state, badSecret('b-cert'), 'invalidate b-cert');
      const after = await buildCounts(inc.metrics);
      assert.equal(delta(after, before, 'secrets'), 0);
      assert.equal(delta(after, before, 'ok'), 1);
      // The same SDS Secret, byte for byte: Envoy sees no change at all.
      assert.equal(entry()?.version, served.version);
      const listener = listenerStatus(inc, 'https-b');
      assert.deepEqual(condition(listener, 'ResolvedRefs'), ['False', 'InvalidCertificateRef']);
      assert.deepEqual(condition(listener, 'Programmed'), ['True', 'Programmed']);
      assert.deepEqual(condition(listener, 'convoy.dev/ServingLastGoodCertificate'), [
        'True',
        'LastGoodCertificate',
      ]);
      // A new valid version is served and the conditions clear.
      await step(inc, state, secret('b-cert', 1), 'fix b-cert');
      assert.notEqual(entry()?.version, served.version);
      assert.deepEqual(condition(listenerStatus(inc, 'https-b'), 'ResolvedRefs'), ['True', 'ResolvedRefs']);
      assert.equal(
        condition(listenerStatus(inc, 'https-b'), 'convoy.dev/ServingLastGoodCertificate'),
        undefined,
      );
      // Deleting the Secret stops serving it; re-creating it invalid does not bring the old one back.
      inc.store.delete('Secret', 'default', 'b-cert');
      state.delete(keyOf(secret('b-cert', 1)));
      await inc.controller.settle();
      assert.equal(entry(), undefined);
      await step(inc, state, badSecret('b-cert'), 're-create b-cert invalid');
      assert.equal(entry(), undefined);
      assert.deepEqual(condition(listenerStatus(inc, 'https-b'), 'Programmed'), ['False', 'Invalid']);
      // The memory holds only listeners that exist and Secrets they served.
      const size = inc.controller.lastGoodCertificates().size();
      assert.ok(size.listeners <= 5 && size.secrets <= SECRETS.length, JSON.stringify(size));
    } finally {
      inc.controller.stop();
    }
  });
});

/** The status of listener `name` of Gateway default/edge in the last published statuses. */
function listenerStatus(
  r: Running,
  name: string,
): { conditions: { type: string; status: string; reason: string }[] } {
  const gw = r.published.at(-1)!.find((s) => s.kind === 'Gateway' && s.metadata.name === 'edge')!;
  const listeners = (gw.status as { listeners: { name: string; conditions: never[] }[] }).listeners;
  return listeners.find((l) => l.name === name)!;
}

/** [status, reason] of the condition of `type`, or undefined when it is absent. */
function condition(
  l: { conditions: { type: string; status: string; reason: string }[] },
  type: string,
): [string, string] | undefined {
  const c = l.conditions.find((x) => x.type === type);
  return c && [c.status, c.reason];
}

/**
 * One random removal or replacement step of the seeded sequence: a ListenerSet deleted (alone, or
 * with its route and Secret in the same build), a ListenerSet updated (another exact hostname, or
 * a wildcard, which falls back), its Secret deleted or created again, or an added route deleted.
 */
async function removal(
  inc: Running,
  state: Map<string, KubeObject>,
  random: () => number,
  addedSets: ReturnType<typeof addition>[],
  addedRoutes: KubeObject[],
  i: number,
): Promise<void> {
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
  const live = addedSets.filter((a) => state.has(keyOf(a.objects[1])));
  const r = random();
  if (live.length === 0 || r < 0.1) {
    // The world's own ListenerSet (its route r-ls stays, naming no parent left), or a route.
    const tenant = [...state.values()].find((o) => o.kind === 'ListenerSet' && o.metadata.name === 'tenant');
    if (tenant) return stepChange(inc, state, [tenant], [], `step ${i}: delete tenant`);
    const routes = addedRoutes.filter((o) => state.has(keyOf(o)));
    if (routes.length === 0) return;
    const route = pick(routes);
    addedRoutes.splice(addedRoutes.indexOf(route), 1);
    return stepChange(inc, state, [route], [], `step ${i}: delete added route ${route.metadata.name}`);
  }
  const add = pick(live);
  const [cert, set] = add.objects;
  const route = add.route && state.has(keyOf(add.route)) ? add.route : undefined;
  const drop = (o: KubeObject | undefined) => {
    if (o && addedRoutes.includes(o)) addedRoutes.splice(addedRoutes.indexOf(o), 1);
  };
  if (r < 0.4) {
    // Its route (if kept) names no parent of ours any more: no route fast path for its edits.
    drop(add.route);
    const all = random() < 0.5;
    const objects = all ? [set, ...(route ? [route] : []), ...(state.has(keyOf(cert)) ? [cert] : [])] : [set];
    return stepChange(
      inc,
      state,
      objects,
      [],
      `step ${i}: delete ${add.set}${all ? ' with route and Secret' : ''}`,
    );
  }
  if (r < 0.6 && route) {
    drop(route);
    return stepChange(inc, state, [route], [], `step ${i}: delete route of ${add.set}`);
  }
  if (r < 0.8) {
    const current = state.get(keyOf(set))!;
    const spec = current.spec as { listeners: { hostname?: string }[] };
    const host = random() < 0.2 ? '*.wild.example.com' : `u${i}.example.com`;
    const updated = {
      ...current,
      metadata: { ...current.metadata, generation: (current.metadata.generation ?? 1) + 1 },
      spec: { ...spec, listeners: spec.listeners.map((l) => ({ ...l, hostname: host })) },
    };
    return stepChange(inc, state, [], [updated], `step ${i}: update ${add.set} to ${host}`);
  }
  if (state.has(keyOf(cert)))
    return stepChange(inc, state, [cert], [], `step ${i}: delete Secret of ${add.set}`);
  return stepChange(inc, state, [], [cert], `step ${i}: create Secret of ${add.set} again`);
}
