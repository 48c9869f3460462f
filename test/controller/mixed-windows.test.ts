/**
 * Oracle for debounce windows that mix changes the fast paths take one by one (fast-paths.ts
 * applyWindow, docs/architecture.md §8): seeded random windows of two to four changes (route
 * edits, creations and deletions; ListenerSets created, updated and deleted; their Secrets created,
 * deleted and rotated; endpoints), each landing in one build. After every window the incrementally
 * maintained snapshot must equal a fresh full build's byte for byte, and its statuses likewise.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/store/objects';
import { keyOf } from '../../src/store/objects';
import type { HTTPRouteRule } from '../../src/gateway/api';
import {
  backendRef,
  backendService,
  gateway,
  gatewayClass,
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

const LS = { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' };

function rules(path: string, backend: string): HTTPRouteRule[] {
  return [
    { matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [backendRef(backend, 80)] },
  ];
}

/** The n-th second after 2026-01-02T00:00:00Z, as the API server writes creation times. */
function second(n: number): string {
  return new Date(Date.parse('2026-01-02T00:00:00Z') + n * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function world(): KubeObject[] {
  return [
    gatewayClass(),
    gateway(
      'edge',
      [
        httpListener('http', 8080),
        httpsListener('https-a', 8443, 'a.example.com', 'a-cert'),
        httpsListener('https-c', 9443, 'c.example.com', 'a-cert'),
      ],
      { allowedListeners: { namespaces: { from: 'Same' } } },
    ),
    tlsSecret('a-cert', { hostnames: ['a.example.com', 'c.example.com'] }),
    ...backendService('web', 80, ['10.0.0.1']),
    ...backendService('api', 80, ['10.0.0.2']),
    httpRoute('r-gw', rules('/gw', 'web'), { parentRefs: [parentRef('edge')] }),
    httpRoute('r-a', rules('/a', 'api'), { parentRefs: [parentRef('edge')], hostnames: ['a.example.com'] }),
  ];
}

/** One seeded sequence of mixed windows against the oracle; returns the windows' outcomes. */
async function sequence(
  seed: number,
  windows: number,
): Promise<{ fast: number; full: number; mixed: number }> {
  const objects = world();
  const state = new Map(objects.map((o) => [keyOf(o), o]));
  const inc = await runController(objects);
  const random = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
  let n = 0;
  let generation = 1;
  const sets = () => [...state.values()].filter((o) => o.kind === 'ListenerSet');
  const routes = () => [...state.values()].filter((o) => o.kind === 'HTTPRoute');
  const put = (o: KubeObject) => {
    state.set(keyOf(o), o);
    inc.store.put(o);
  };
  const del = (o: KubeObject) => {
    state.delete(keyOf(o));
    inc.store.delete(o.kind, o.metadata.namespace ?? 'default', o.metadata.name);
  };
  const setCert = (set: string) => tlsSecret(`${set}-cert`, { hostnames: [`${set}.example.com`] });
  /** A new set (newest of its Gateway), with its Secret and a route naming it, maybe. */
  const createSet = (): string => {
    const name = `s${++n}`;
    if (random() < 0.7) put(setCert(name));
    put(
      listenerSet(name, { name: 'edge' }, [httpsListener('l', 8443, `${name}.example.com`, `${name}-cert`)], {
        created: second(n),
      }),
    );
    if (random() < 0.5)
      put(
        httpRoute(`r-${name}`, rules(`/${name}`, pick(['web', 'api'])), {
          parentRefs: [parentRef(name, LS)],
        }),
      );
    return `create set ${name}`;
  };
  const changes: (() => string | undefined)[] = [
    createSet,
    () => {
      const r = pick(routes());
      if (!r) return undefined;
      const spec = r.spec as { rules?: unknown };
      put({
        ...r,
        metadata: { ...r.metadata, generation: ++generation },
        spec: { ...(spec as object), rules: rules(`/e${++n}`, pick(['web', 'api'])) },
      });
      return `edit ${r.metadata.name}`;
    },
    () => {
      const parent = pick([...sets().map((s) => s.metadata.name), 'edge', `s${n + 1}`]);
      const name = `c${++n}`;
      put(
        httpRoute(name, rules(`/${name}`, pick(['web', 'api'])), {
          parentRefs: [parent === 'edge' ? parentRef('edge') : parentRef(parent, LS)],
        }),
      );
      return `create ${name} on ${parent}`;
    },
    () => {
      const r = pick(routes());
      if (!r) return undefined;
      del(r);
      return `delete ${r.metadata.name}`;
    },
    () => {
      const s = pick(sets());
      if (!s) return undefined;
      del(s);
      return `delete set ${s.metadata.name}`;
    },
    () => {
      const s = pick(sets());
      if (!s) return undefined;
      const host = `${s.metadata.name}-${++n}.example.com`;
      put(
        listenerSet(
          s.metadata.name,
          { name: 'edge' },
          [httpsListener('l', 8443, host, `${s.metadata.name}-cert`)],
          { created: s.metadata.creationTimestamp, generation: ++generation },
        ),
      );
      return `update set ${s.metadata.name}`;
    },
    () => {
      const s = pick(sets());
      if (!s) return undefined;
      const key = `Secret/default/${s.metadata.name}-cert`;
      const cert = state.get(key);
      if (cert) del(cert);
      else put(setCert(s.metadata.name));
      return `${cert ? 'delete' : 'create'} ${s.metadata.name}-cert`;
    },
    () => {
      put(tlsSecret('a-cert', { hostnames: ['a.example.com', 'c.example.com', `v${++n}.example.com`] }));
      return 'rotate a-cert';
    },
    () => {
      const svc = pick(['web', 'api']);
      put(backendService(svc, 80, [`10.1.0.${++n % 250}`])[1]);
      return `${svc} endpoints`;
    },
  ];
  const outcome = { fast: 0, full: 0, mixed: 0 };
  try {
    for (let i = 0; i < windows; i++) {
      const lastGood = inc.controller.lastGoodCertificates();
      const before = await buildCounts(inc.metrics);
      const done: string[] = [];
      const size = 2 + Math.floor(random() * 3);
      // Several changes before the controller runs: one debounce window.
      for (let k = 0; k < size; k++) {
        const what = pick(changes)();
        if (what) done.push(what);
      }
      await inc.controller.settle();
      const after = await buildCounts(inc.metrics);
      const full = (after.ok ?? 0) - (before.ok ?? 0);
      outcome[full > 0 ? 'full' : 'fast']++;
      outcome.mixed += (after.mixed ?? 0) - (before.mixed ?? 0);
      const oracle: Running = await runController([...state.values()], lastGood);
      try {
        const what = `seed ${seed} window ${i}: ${done.join(', ')}`;
        assert.deepEqual(servedResources(inc.cache), servedResources(oracle.cache), `${what}: resources`);
        assert.deepEqual(lastStatuses(inc), lastStatuses(oracle), `${what}: statuses`);
      } finally {
        oracle.controller.stop();
      }
    }
  } finally {
    inc.controller.stop();
  }
  return outcome;
}

describe('mixed debounce windows against a full-build oracle', { concurrency: false }, () => {
  const totals = { fast: 0, full: 0, mixed: 0 };
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) {
    test(`seeded windows ${seed}`, async () => {
      const got = await sequence(seed, 14);
      totals.fast += got.fast;
      totals.full += got.full;
      totals.mixed += got.mixed;
    });
  }
  test('mixed windows took the fast paths (not every one fell back)', () => {
    assert.ok(totals.mixed > 20, JSON.stringify(totals));
  });
});
