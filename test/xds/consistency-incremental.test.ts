import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConsistencyChecker, checkConsistency } from '../../src/xds/consistency';
import type { EnvoyResources } from '../../src/envoy/resources';
import { cla, edsCluster, httpListener, routeConfig, secret } from '../support/xds-fixtures';
import { rng } from '../support/rng';

const NAMES = ['a', 'b', 'c', 'd', 'e'];

/** One random edit of a resource set; lists are replaced, never mutated (the cache's rule). */
function mutate(res: EnvoyResources, r: () => number): EnvoyResources {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const name = pick(NAMES);
  const without = <T>(xs: readonly T[], i: number): T[] => xs.filter((_, j) => j !== i);
  switch (Math.floor(r() * 12)) {
    case 0: // a cluster and its endpoints appear (or a duplicate name)
      return {
        ...res,
        clusters: [...res.clusters, edsCluster(`ns/${name}/80`)],
        endpoints: [...res.endpoints, cla(`ns/${name}/80`)],
      };
    case 1: // a cluster goes (its CLA may stay)
      return res.clusters.length
        ? { ...res, clusters: without(res.clusters, Math.floor(r() * res.clusters.length)) }
        : res;
    case 2: // a CLA goes
      return res.endpoints.length
        ? { ...res, endpoints: without(res.endpoints, Math.floor(r() * res.endpoints.length)) }
        : res;
    case 3: // a route configuration pointing at some cluster, maybe a missing one
      return {
        ...res,
        routes: [
          ...res.routes,
          routeConfig(`rc-${name}`, [{ prefix: '/', cluster: `ns/${pick(NAMES)}/80` }]),
        ],
      };
    case 4: // a route configuration goes
      return res.routes.length
        ? { ...res, routes: without(res.routes, Math.floor(r() * res.routes.length)) }
        : res;
    case 5: // a listener using some route configuration and maybe a secret
      return {
        ...res,
        listeners: [
          ...res.listeners,
          httpListener(
            `l-${name}`,
            8000 + NAMES.indexOf(name),
            `rc-${pick(NAMES)}`,
            r() < 0.5 ? { tlsSecret: `s-${pick(NAMES)}` } : {},
          ),
        ],
      };
    case 6: // a listener goes
      return res.listeners.length
        ? { ...res, listeners: without(res.listeners, Math.floor(r() * res.listeners.length)) }
        : res;
    case 7: // a secret appears or goes
      return r() < 0.6
        ? { ...res, secrets: [...res.secrets, secret(`s-${name}`)] }
        : res.secrets.length
          ? { ...res, secrets: without(res.secrets, Math.floor(r() * res.secrets.length)) }
          : res;
    case 8: {
      // a route configuration edited in place (same name, maybe a missing cluster) or renamed in place
      if (!res.routes.length) return res;
      const i = Math.floor(r() * res.routes.length);
      const keep = r() < 0.7;
      const rc = routeConfig(keep ? res.routes[i].name! : `rc-${pick(NAMES)}`, [
        { prefix: '/', cluster: `ns/${pick(NAMES)}/80` },
      ]);
      return { ...res, routes: res.routes.map((x, j) => (j === i ? rc : x)) };
    }
    case 10: {
      // a listener replaced in place under its name with one more chain (another listener's,
      // referencing its own route configuration and secret), its other chains the same objects
      if (!res.listeners.length) return res;
      const i = Math.floor(r() * res.listeners.length);
      const donor = httpListener(`l-${pick(NAMES)}`, 9000, `rc-${pick(NAMES)}`, {
        tlsSecret: r() < 0.5 ? `s-${pick(NAMES)}` : undefined,
      });
      const chains = [...res.listeners[i].filter_chains!];
      chains.splice(Math.floor(r() * (chains.length + 1)), 0, donor.filter_chains![0]);
      const listener = { ...res.listeners[i], filter_chains: chains };
      return { ...res, listeners: res.listeners.map((x, j) => (j === i ? listener : x)) };
    }
    case 11: {
      // a listener replaced in place under its name without one of its chains
      if (!res.listeners.length) return res;
      const i = Math.floor(r() * res.listeners.length);
      const chains = res.listeners[i].filter_chains!;
      const k = Math.floor(r() * chains.length);
      const listener = { ...res.listeners[i], filter_chains: chains.filter((_, j) => j !== k) };
      return { ...res, listeners: res.listeners.map((x, j) => (j === i ? listener : x)) };
    }
    default: // a resource is replaced by an equal copy (new identity), or nothing changes
      return r() < 0.5 && res.routes.length ? { ...res, routes: res.routes.map((x) => ({ ...x })) } : res;
  }
}

describe('ConsistencyChecker', () => {
  test('gives the errors and cluster map of a full check on random edit sequences (200 seeds × 60 steps)', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = rng(seed);
      const checker = new ConsistencyChecker();
      let res: EnvoyResources = { listeners: [], routes: [], clusters: [], endpoints: [], secrets: [] };
      for (let step = 0; step < 60; step++) {
        res = mutate(res, r);
        const got = checker.check(res);
        const want = checkConsistency(res);
        assert.deepEqual(got.errors, want.errors, `seed ${seed} step ${step}`);
        assert.deepEqual([...got.clusterEds], [...want.clusterEds], `seed ${seed} step ${step}`);
        // As the cache does: a snapshot with errors is refused and never accepted.
        if (got.errors.length === 0 && r() < 0.9) got.accept();
      }
    }
  });

  test("gives the full check's errors when checks are accepted late or out of order (100 seeds × 60 steps)", () => {
    for (let seed = 1; seed <= 100; seed++) {
      const r = rng(7000 + seed);
      const checker = new ConsistencyChecker();
      let res: EnvoyResources = { listeners: [], routes: [], clusters: [], endpoints: [], secrets: [] };
      let pending: { accept(): void; errors: string[] } | undefined;
      for (let step = 0; step < 60; step++) {
        res = mutate(res, r);
        const got = checker.check(res);
        assert.deepEqual(got.errors, checkConsistency(res).errors, `seed ${seed} step ${step}`);
        // Now and then a check made against an older base is accepted after a newer one.
        if (got.errors.length === 0 && r() < 0.8) got.accept();
        if (pending && r() < 0.5) {
          pending.accept();
          pending = undefined;
        }
        if (got.errors.length === 0 && r() < 0.3) pending = got;
      }
    }
  });

  test('a check accepted after two newer ones leaves the reference counts of a later state alone', () => {
    // docs/xds.md §8: counts of references move with each accepted change. Here B (endpoints
    // only) is accepted and shares A's counts; D removes the two route configurations that
    // reference cluster a and moves those shared counts to a = 0; then C, checked against A
    // before either, is accepted last. C still has both route configurations, so when E takes
    // cluster a away the check must see that C's units reference it.
    const checker = new ConsistencyChecker();
    const s0: EnvoyResources = {
      listeners: [httpListener('l', 8080, 'rc0')],
      routes: [
        routeConfig('rc0', [{ prefix: '/', cluster: 'ns/z/80' }]),
        routeConfig('rc1', [{ prefix: '/', cluster: 'ns/a/80' }]),
        routeConfig('rc2', [{ prefix: '/', cluster: 'ns/a/80' }]),
      ],
      clusters: [edsCluster('ns/z/80'), edsCluster('ns/a/80'), edsCluster('ns/x/80')],
      endpoints: [cla('ns/z/80'), cla('ns/a/80'), cla('ns/x/80')],
      secrets: [],
    };
    checker.check(s0).accept();
    // A: cluster x goes, so the counts of references are made (at the first name lost).
    const a = { ...s0, clusters: s0.clusters.slice(0, 2) };
    checker.check(a).accept();
    const b = { ...a, endpoints: [...a.endpoints, cla('ns/b/80')] };
    const c = { ...a, endpoints: [...a.endpoints, cla('ns/c/80')] };
    const checkedB = checker.check(b);
    const checkedC = checker.check(c);
    checkedB.accept();
    const d = { ...b, routes: b.routes.slice(0, 1) };
    const checkedD = checker.check(d);
    assert.deepEqual(checkedD.errors, []);
    checkedD.accept();
    checkedC.accept();
    const e = { ...c, clusters: c.clusters.slice(0, 1) };
    const want = checkConsistency(e).errors;
    assert.equal(want.length, 2);
    assert.deepEqual(checker.check(e).errors, want);
  });

  test('a refused snapshot does not become the base: its new objects are checked again', () => {
    const checker = new ConsistencyChecker();
    const base: EnvoyResources = {
      listeners: [httpListener('l', 8080, 'rc')],
      routes: [routeConfig('rc', [{ prefix: '/', cluster: 'ns/a/80' }])],
      clusters: [edsCluster('ns/a/80')],
      endpoints: [cla('ns/a/80')],
      secrets: [],
    };
    checker.check(base).accept();
    const dangling = {
      ...base,
      routes: [...base.routes, routeConfig('rc2', [{ prefix: '/', cluster: 'ns/missing/80' }])],
    };
    const first = checker.check(dangling);
    assert.equal(first.errors.length, 1);
    first.accept(); // ignored: it has errors
    assert.deepEqual(checker.check(dangling).errors, first.errors);
  });
});
