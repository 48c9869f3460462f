/**
 * A ListenerSet deleted with its Secret and routes in Kubernetes mode (bench/README.md "Kubernetes
 * mode (session 18)"): kubectl deletes them one by one, but each kind has its own watch, so Convoy
 * may see the Secret go before the set does, in a window with the routes' deletions and without
 * the set's. Every order must take the fast paths and serve, after each window, exactly what a
 * fresh full build serves (docs/architecture.md §8).
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
  httpsListener,
  httpRoute,
  listenerSet,
  parentRef,
  tlsSecret,
} from '../support/objects';
import { lastStatuses, runController, servedResources } from '../support/controller-oracle';

const LS = { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' };

function rules(path: string): HTTPRouteRule[] {
  return [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [backendRef('web', 80)] }];
}

/** The n-th second after 2026-01-02T00:00:00Z, as the API server writes creation times. */
function second(n: number): string {
  return new Date(Date.parse('2026-01-02T00:00:00Z') + n * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Set `name` created at second `n`, with its Secret and two routes naming it. */
function setWith(name: string, n: number): KubeObject[] {
  return [
    tlsSecret(`${name}-cert`, { hostnames: [`${name}.example.com`] }),
    listenerSet(name, { name: 'edge' }, [httpsListener('l', 8443, `${name}.example.com`, `${name}-cert`)], {
      created: second(n),
    }),
    httpRoute(`${name}-r1`, rules(`/${name}/1`), { parentRefs: [parentRef(name, LS)] }),
    httpRoute(`${name}-r2`, rules(`/${name}/2`), { parentRefs: [parentRef(name, LS)] }),
  ];
}

/** A Gateway with its own HTTPS listener on the sets' port and three sets: s1 oldest, s3 newest. */
function world(): KubeObject[] {
  return [
    gatewayClass(),
    gateway('edge', [httpsListener('https-a', 8443, 'a.example.com', 'a-cert')], {
      allowedListeners: { namespaces: { from: 'Same' } },
    }),
    tlsSecret('a-cert', { hostnames: ['a.example.com'] }),
    ...backendService('web', 80, ['10.0.0.1']),
    ...setWith('s1', 1),
    ...setWith('s2', 2),
    ...setWith('s3', 3),
  ];
}

/** convoy_full_builds_total by reason. */
async function fullBuilds(
  running: Awaited<ReturnType<typeof runController>>,
): Promise<Record<string, number>> {
  const m = await running.metrics.fullBuilds.get();
  return Object.fromEntries(m.values.map((v) => [String(v.labels.reason), v.value]));
}

/**
 * Deletes the named objects of set `set` window by window (each inner list lands in one debounce
 * window; `+secret` creates its Secret again) and checks the snapshot and statuses against a full build after each; returns the full
 * builds the windows caused, by reason.
 */
async function deleteInWindows(set: string, windows: string[][]): Promise<Record<string, number>> {
  const objects = world();
  const current = new Map(objects.map((o) => [keyOf(o), o]));
  const inc = await runController(objects);
  const before = await fullBuilds(inc);
  const named = (what: string): KubeObject => {
    const key =
      what === 'set'
        ? `ListenerSet/default/${set}`
        : what === 'secret'
          ? `Secret/default/${set}-cert`
          : `HTTPRoute/default/${set}-${what}`;
    const o = current.get(key);
    assert.ok(o, key);
    return o;
  };
  try {
    for (const window of windows) {
      const lastGood = inc.controller.lastGoodCertificates();
      for (const what of window) {
        if (what === '+secret') {
          // Created again (as a Secret deleted by mistake and restored).
          const o = objects.find((x) => keyOf(x) === `Secret/default/${set}-cert`)!;
          current.set(keyOf(o), o);
          inc.store.put(o);
          continue;
        }
        const o = named(what);
        current.delete(keyOf(o));
        inc.store.delete(o.kind, o.metadata.namespace ?? 'default', o.metadata.name);
      }
      await inc.controller.settle();
      const oracle = await runController([...current.values()], lastGood);
      try {
        const label = `${set}, window [${window.join(', ')}] of ${JSON.stringify(windows)}`;
        assert.deepEqual(servedResources(inc.cache), servedResources(oracle.cache), `${label}: resources`);
        assert.deepEqual(lastStatuses(inc), lastStatuses(oracle), `${label}: statuses`);
      } finally {
        oracle.controller.stop();
      }
    }
    const after = await fullBuilds(inc);
    const caused: Record<string, number> = {};
    for (const [reason, n] of Object.entries(after))
      if (n - (before[reason] ?? 0) > 0) caused[reason] = n - (before[reason] ?? 0);
    return caused;
  } finally {
    inc.controller.stop();
  }
}

describe(
  'a ListenerSet deleted with its Secret and routes, in any watch order',
  { concurrency: false },
  () => {
    const orders: string[][][] = [
      // kubectl's order, one window each, and all in one.
      [['r1'], ['r2'], ['set'], ['secret']],
      [['r1', 'r2', 'set', 'secret']],
      // The Secret's watch ahead of the set's: the Secret goes in a window with the routes.
      [['r1', 'r2', 'secret'], ['set']],
      [['r1'], ['r2', 'secret'], ['set']],
      [['secret'], ['r1', 'r2', 'set']],
      // The set's watch ahead of the routes'.
      [
        ['set', 'secret'],
        ['r1', 'r2'],
      ],
      [['set'], ['r1'], ['secret', 'r2']],
      // Only its Secret goes, and comes back: the set's listener stops and starts serving.
      [['secret'], ['+secret']],
      [
        ['r1', 'secret'],
        ['+secret', 'r2'],
      ],
    ];
    for (const set of ['s1', 's2', 's3']) {
      for (const windows of orders) {
        test(`${set}: ${JSON.stringify(windows)} takes the fast paths`, async () => {
          const caused = await deleteInWindows(set, windows);
          assert.deepEqual(caused, {}, `full builds: ${JSON.stringify(caused)}`);
        });
      }
    }
  },
);
