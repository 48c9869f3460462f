import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/observability/logger';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { XdsCache } from '../../src/xds/cache';
import { checkConsistency } from '../../src/xds/consistency';
import { TypeUrl } from '../../src/envoy/resources';
import type { EnvoyResources } from '../../src/envoy/resources';
import { encodeMessage, setVerifyEncoding } from '../../src/envoy/protos';
import { MEMO_IDLE_MS, MEMO_LARGE_BYTES, TypeSnapshot } from '../../src/xds/snapshot';
import { bodyBuffer } from '../../src/xds/wire';
import type { FleetChange } from '../../src/xds/snapshot';
import { rng } from '../support/rng';
import { cla, edsCluster, fleetResources, httpListener, routeConfig, secret } from '../support/xds-fixtures';

function newCache(): { cache: XdsCache; metrics: ConvoyMetrics } {
  const metrics = new ConvoyMetrics();
  return { cache: new XdsCache({ logger: silentLogger(), metrics }), metrics };
}

function versions(cache: XdsCache, fleet: string): Record<string, Record<string, string>> {
  const snap = cache.snapshot(fleet)!;
  const out: Record<string, Record<string, string>> = {};
  for (const [type, ts] of Object.entries(snap.types)) {
    out[type] = { '': ts.version };
    for (const [name, e] of ts.entries) out[type][name] = e.version;
  }
  return out;
}

describe('consistency check', () => {
  test('accepts a complete fleet', () => {
    assert.deepEqual(checkConsistency(fleetResources({ clusters: ['a/b/1', 'a/c/2'] })).errors, []);
  });

  test('missing route configuration, CLA, secret and route clusters are all reported', () => {
    const res: EnvoyResources = {
      listeners: [
        httpListener('l', 80, 'missing-route'),
        httpListener('t', 443, 'r', { tlsSecret: 'missing-secret' }),
      ],
      routes: [
        routeConfig('r', [
          { prefix: '/a', cluster: 'missing-cluster' },
          {
            prefix: '/b',
            weighted: [
              { name: 'c1', weight: 1 },
              { name: 'missing-weighted', weight: 1 },
            ],
          },
          { prefix: '/c', cluster: 'c1', mirror: 'missing-mirror' },
        ]),
      ],
      clusters: [
        edsCluster('c1'),
        edsCluster('c2', { serviceName: 'missing-cla' }),
        edsCluster('c3', { tlsSecret: 'missing-upstream-secret' }),
      ],
      endpoints: [cla('c1'), cla('c3')],
      secrets: [],
    };
    const errors = checkConsistency(res).errors;
    for (const name of [
      'missing-route',
      'missing-secret',
      'missing-cluster',
      'missing-weighted',
      'missing-mirror',
      'missing-cla',
      'missing-upstream-secret',
    ]) {
      assert.match(errors.join('\n'), new RegExp(`"${name}" not found`), name);
    }
    assert.equal(errors.length, 7);
  });

  test('routes with cluster_not_found_response_code may name missing clusters on purpose', () => {
    const res = fleetResources({ https: false });
    const action = res.routes[0].virtual_hosts![0].routes![0].route!;
    action.weighted_clusters = {
      clusters: [
        { name: 'default/app/80', weight: { value: 1 } },
        { name: 'convoy:invalid-backend', weight: { value: 1 } },
      ],
    };
    delete action.cluster;
    assert.match(checkConsistency(res).errors.join(), /"convoy:invalid-backend" not found/);
    action.cluster_not_found_response_code = 2;
    assert.deepEqual(checkConsistency(res).errors, []);
  });

  test('duplicate and empty names are refused', () => {
    const res = fleetResources();
    res.clusters.push(edsCluster('default/app/80'));
    res.secrets.push({ name: '' });
    const errors = checkConsistency(res).errors;
    assert.ok(errors.some((e) => e.includes('duplicate cluster "default/app/80"')));
    assert.ok(errors.some((e) => e.includes('secret #1 has no name')));
  });

  test('an HCM packed as { type_url, value } bytes is walked too', () => {
    const hcm = {
      stat_prefix: 'x',
      rds: { route_config_name: 'nope', config_source: { ads: {}, resource_api_version: 2 } },
    };
    const typeUrl =
      'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
    const value = encodeMessage(typeUrl.split('/')[1], hcm);
    const res = fleetResources({ https: false });
    res.listeners[0].filter_chains![0].filters![0].typed_config = { type_url: typeUrl, value };
    assert.deepEqual(checkConsistency(res).errors, [
      'listener "http-8080" filter chain "Gateway/default/gw/http-8080": route configuration "nope" not found',
    ]);
  });

  test('Anys of types the check does not inspect are left alone, even when their proto is not loaded', () => {
    const res = fleetResources({ https: false });
    res.listeners[0].filter_chains!.push({
      name: 'direct',
      filters: [
        {
          name: 'envoy.filters.network.direct_response',
          typed_config: {
            type_url: 'type.googleapis.com/envoy.extensions.filters.network.direct_response.v3.Config',
            value: Buffer.alloc(0),
          },
        },
      ],
    });
    assert.deepEqual(checkConsistency(res).errors, []);
  });

  test('EDS service names map clusters to their CLA', () => {
    const res = fleetResources({ https: false });
    res.clusters.push(edsCluster('x', { serviceName: 'x-eds' }));
    res.endpoints.push(cla('x-eds'));
    assert.deepEqual(
      [...checkConsistency(res).clusterEds],
      [
        ['default/app/80', 'default/app/80'],
        ['x', 'x-eds'],
      ],
    );
  });
});

describe('XdsCache', () => {
  test('versions are content hashes: equal across cache instances, different for different content', () => {
    const a = newCache().cache;
    const b = newCache().cache;
    assert.equal(a.setFleet('ns/gw', fleetResources()).ok, true);
    assert.equal(b.setFleet('other/gw', fleetResources()).ok, true);
    assert.deepEqual(versions(a, 'ns/gw'), versions(b, 'other/gw'));
    b.setFleet('other/gw', fleetResources({ routePrefix: '/v2' }));
    const va = versions(a, 'ns/gw');
    const vb = versions(b, 'other/gw');
    assert.notEqual(va[TypeUrl.Route]['http-8080'], vb[TypeUrl.Route]['http-8080']);
    assert.notEqual(va[TypeUrl.Route][''], vb[TypeUrl.Route]['']);
    assert.equal(va[TypeUrl.Route]['https-8443'], vb[TypeUrl.Route]['https-8443']);
    assert.equal(va[TypeUrl.Cluster][''], vb[TypeUrl.Cluster]['']);
  });

  test('setFleet reports changed and removed names per type, and nothing for an identical update', () => {
    const { cache } = newCache();
    const first = cache.setFleet('ns/gw', fleetResources({ clusters: ['a', 'b'] }));
    assert.ok(first.ok);
    assert.deepEqual(first.changed[TypeUrl.Cluster], ['a', 'b']);
    assert.deepEqual(first.removed, {});

    const same = cache.setFleet('ns/gw', fleetResources({ clusters: ['a', 'b'] }));
    assert.deepEqual(same, { ok: true, changed: {}, removed: {} });

    const next = cache.setFleet(
      'ns/gw',
      fleetResources({ clusters: ['b', 'c'], routeTo: 'b', ports: { b: 9 } }),
    );
    assert.ok(next.ok);
    assert.deepEqual(next.changed, {
      [TypeUrl.Cluster]: ['c'],
      [TypeUrl.Endpoint]: ['b', 'c'],
      [TypeUrl.Route]: ['http-8080', 'https-8443'],
    });
    assert.deepEqual(next.removed, { [TypeUrl.Cluster]: ['a'], [TypeUrl.Endpoint]: ['a'] });
  });

  test('unchanged resources keep their bytes; unchanged types keep their snapshot object', () => {
    const { cache } = newCache();
    cache.setFleet('ns/gw', fleetResources({ clusters: ['a', 'b'] }));
    const before = cache.snapshot('ns/gw')!;
    cache.setFleet('ns/gw', fleetResources({ clusters: ['a', 'b'], ports: { b: 9 } }));
    const after = cache.snapshot('ns/gw')!;
    assert.equal(after.types[TypeUrl.Cluster], before.types[TypeUrl.Cluster]);
    assert.equal(after.types[TypeUrl.Listener], before.types[TypeUrl.Listener]);
    assert.notEqual(after.types[TypeUrl.Endpoint], before.types[TypeUrl.Endpoint]);
    assert.equal(
      after.types[TypeUrl.Endpoint].entries.get('a')!.bytes,
      before.types[TypeUrl.Endpoint].entries.get('a')!.bytes,
    );
  });

  test('identical resources in different fleets share one Buffer; unreferenced ones are released', () => {
    const { cache } = newCache();
    cache.setFleet('ns/one', fleetResources());
    cache.setFleet('ns/two', fleetResources());
    const one = cache.snapshot('ns/one')!.types[TypeUrl.Listener].entries.get('http-8080')!;
    const two = cache.snapshot('ns/two')!.types[TypeUrl.Listener].entries.get('http-8080')!;
    assert.equal(one.bytes, two.bytes);
    // secret, cluster, CLA, 2 listeners, 2 routes: stored once for both fleets
    assert.equal(cache.stats().entries, 7);
    cache.setFleet('ns/two', fleetResources({ routePrefix: '/x' }));
    assert.equal(cache.stats().entries, 8);
    cache.removeFleet('ns/one');
    assert.equal(cache.stats().entries, 7);
    cache.removeFleet('ns/two');
    assert.deepEqual(cache.stats(), { fleets: 0, entries: 0, bytes: 0 });
  });

  test('the same resource object is encoded once (identity memo; objects are treated as immutable)', () => {
    const { cache } = newCache();
    const res = fleetResources();
    cache.setFleet('ns/gw', res);
    const entry = cache.snapshot('ns/gw')!.types[TypeUrl.Secret].entries.get('default/cert')!;
    // Mutating an object after handing it in is a caller bug; it shows the object is not re-encoded.
    res.secrets[0].tls_certificate!.certificate_chain = { inline_string: 'changed' };
    cache.setFleet('ns/other', res);
    assert.equal(cache.snapshot('ns/other')!.types[TypeUrl.Secret].entries.get('default/cert'), entry);
    // A fresh object with the new content is encoded and gets a new version.
    const fresh = fleetResources();
    fresh.secrets[0].tls_certificate!.certificate_chain = { inline_string: 'changed' };
    cache.setFleet('ns/other', fresh);
    assert.notEqual(
      cache.snapshot('ns/other')!.types[TypeUrl.Secret].entries.get('default/cert')!.version,
      entry.version,
    );
  });

  test('a rejected snapshot keeps the previous one, counts and returns the errors', async () => {
    const { cache, metrics } = newCache();
    const changes: FleetChange[] = [];
    cache.onChange((c) => changes.push(c));
    assert.ok(cache.setFleet('ns/gw', fleetResources()).ok);
    const before = cache.snapshot('ns/gw');
    const bad = fleetResources({ routeTo: 'does/not/exist' });
    const result = cache.setFleet('ns/gw', bad);
    assert.equal(result.ok, false);
    assert.ok(!result.ok && result.errors.some((e) => e.includes('cluster "does/not/exist" not found')));
    assert.equal(cache.snapshot('ns/gw'), before);
    assert.equal(changes.length, 1);
    const counted = (await metrics.snapshotsRejected.get()).values.find((v) => v.labels.fleet === 'ns/gw');
    assert.equal(counted?.value, 1);
    // A first snapshot that fails leaves the fleet without a snapshot (its Envoys stay held).
    assert.equal(cache.setFleet('ns/new', bad).ok, false);
    assert.equal(cache.hasSnapshot('ns/new'), false);
    assert.deepEqual(cache.fleets(), ['ns/gw']);
  });

  test('a resource that cannot be encoded rejects the snapshot (schema verification on, as in tests)', () => {
    setVerifyEncoding(true);
    const { cache } = newCache();
    const res = fleetResources();
    (res.secrets[0] as Record<string, unknown>).tls_certificate = {
      certificate_chain: { inline_string: 42 },
    };
    const result = cache.setFleet('ns/gw', res);
    assert.equal(result.ok, false);
    assert.ok(!result.ok && /cannot be encoded/.test(result.errors[0]));
  });

  test('without schema verification (production), a message that cannot be built still rejects the snapshot', () => {
    setVerifyEncoding(false);
    try {
      const { cache } = newCache();
      const res = fleetResources();
      // A nested message given as a scalar: protobufjs cannot build it at all.
      (res.secrets[0] as Record<string, unknown>).tls_certificate = 42;
      const result = cache.setFleet('ns/gw', res);
      assert.equal(result.ok, false);
      assert.ok(!result.ok && /cannot be encoded/.test(result.errors[0]));
    } finally {
      setVerifyEncoding(process.env.CONVOY_VERIFY_XDS === '1');
    }
  });

  test('listeners are notified of changes, first snapshots and removals', () => {
    const { cache } = newCache();
    const changes: FleetChange[] = [];
    cache.onChange((c) => changes.push(c));
    cache.setFleet('ns/gw', fleetResources());
    cache.setFleet('ns/gw', fleetResources({ cert: 'rotated' }));
    cache.removeFleet('ns/gw');
    assert.deepEqual(
      changes.map((c) => [c.first, !!c.snapshot, [...c.changed.keys()], [...c.removed.keys()].length]),
      [
        [true, true, [TypeUrl.Secret, TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route], 0],
        [false, true, [TypeUrl.Secret], 0],
        [false, false, [], 5],
      ],
    );
    assert.equal(cache.hasSnapshot('ns/gw'), false);
  });

  test('memoized responses are bounded per type snapshot and the newest is kept', () => {
    const ts = new TypeSnapshot(TypeUrl.Cluster, new Map());
    let builds = 0;
    const make = (bytes: number) => () => {
      builds++;
      return { body: Buffer.alloc(bytes), version: 'v', count: 0 };
    };
    const first = ts.memoize('k0', make(10));
    assert.equal(ts.memoize('k0', make(10)), first);
    assert.equal(builds, 1);
    for (let i = 1; i < 100; i++) ts.memoize(`k${i}`, make(10));
    assert.equal(ts.memoSize, 32);
    ts.memoize('huge', make(20 * 1024 * 1024));
    assert.equal(ts.memoSize, 1);
    builds = 0;
    ts.memoize('huge', make(1));
    assert.equal(builds, 0);
  });

  test('large memoized responses are dropped when idle and built again to the same bytes', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const ts = new TypeSnapshot(TypeUrl.Cluster, new Map());
    let builds = 0;
    const make = (bytes: number, fill: number) => () => {
      builds++;
      return { body: Buffer.alloc(bytes, fill), version: 'v', count: 0 };
    };
    const large = ts.memoize('large', make(MEMO_LARGE_BYTES, 7));
    ts.memoize('small', make(10, 1));
    assert.equal(builds, 2);
    // Used again before it idles out: kept, and its idle time starts over.
    t.mock.timers.tick(MEMO_IDLE_MS - 1);
    assert.equal(ts.memoize('large', make(MEMO_LARGE_BYTES, 7)), large);
    t.mock.timers.tick(MEMO_IDLE_MS - 1);
    assert.equal(ts.memoSize, 2);
    assert.equal(builds, 2);
    t.mock.timers.tick(1);
    assert.equal(ts.memoSize, 1, 'the large body is dropped, the small one kept');
    assert.equal(ts.memoize('small', make(10, 1)).body.length, 10);
    assert.equal(builds, 2);
    const again = ts.memoize('large', make(MEMO_LARGE_BYTES, 7));
    assert.equal(builds, 3);
    assert.ok(bodyBuffer(again.body).equals(bodyBuffer(large.body)));
  });

  test('an empty fleet is a valid snapshot', () => {
    const { cache } = newCache();
    const r = cache.setFleet('ns/gw', {
      listeners: [],
      routes: [],
      clusters: [],
      endpoints: [],
      secrets: [secret('s')],
    });
    assert.ok(r.ok);
    assert.equal(cache.snapshot('ns/gw')!.types[TypeUrl.Listener].entries.size, 0);
  });
});

describe('XdsCache interning under random changes', () => {
  test('live entries are exactly the distinct (type, version) pairs of the current snapshots', () => {
    const { cache } = newCache();
    let seed = 11;
    const r = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
    const clusterSets = [['a/b/1'], ['a/b/1', 'a/c/2'], ['a/c/2', 'a/d/3'], ['a/b/1', 'a/c/2', 'a/d/3']];
    for (let step = 0; step < 200; step++) {
      const fleet = pick(['ns/one', 'ns/two']);
      if (r() < 0.1) cache.removeFleet(fleet);
      else
        cache.setFleet(
          fleet,
          fleetResources({
            clusters: pick(clusterSets),
            routePrefix: pick(['/', '/x', '/y']),
            cert: pick(['A', 'B']),
          }),
        );
      const distinct = new Set<string>();
      for (const f of cache.fleets())
        for (const [type, ts] of Object.entries(cache.snapshot(f)!.types))
          for (const e of ts.entries.values()) distinct.add(`${type} ${e.version}`);
      assert.equal(cache.stats().entries, distinct.size, `step ${step}`);
    }
  });
});

describe('XdsCache patching a type in place (a full build as the oracle)', () => {
  test('random replacements, renames, additions, removals and reorders give a full build’s snapshot', () => {
    const next = rng(13);
    const { cache } = newCache();
    let secrets = Array.from({ length: 40 }, (_, i) => secret(`s-${i}`));
    let before: Record<string, Record<string, string>> | undefined;
    for (let step = 0; step < 300; step++) {
      const r = next();
      const i = Math.floor(next() * secrets.length);
      const at = (s: ReturnType<typeof secret>) => secrets.map((x, j) => (j === i ? s : x));
      if (r < 0.35)
        secrets = at(secret(secrets[i].name!, `CERT-${step}`)); // content changed
      else if (r < 0.5)
        secrets = at(secret(secrets[i].name!, `CERT-${Math.floor(step / 7)}`)); // maybe equal
      else if (r < 0.6)
        secrets = at({ ...secrets[i] }); // a new object, the same content
      else if (r < 0.67) secrets = at(secret(`renamed-${step}`));
      else if (r < 0.74) secrets = [...secrets.slice(0, i), secret(`added-${step}`), ...secrets.slice(i)];
      else if (r < 0.8 && secrets.length > 1) secrets = secrets.filter((_, j) => j !== i);
      else if (r < 0.85)
        secrets = [...secrets.slice(i), ...secrets.slice(0, i)]; // the same names, reordered
      else if (r < 0.9)
        secrets = [...secrets]; // the same objects in a new array
      else secrets = secrets.map((s, j) => (j % 3 === i % 3 ? secret(s.name!, `CERT-${step}`) : s)); // many
      const resources: EnvoyResources = { listeners: [], routes: [], clusters: [], endpoints: [], secrets };
      const result = cache.setFleet('ns/gw', resources);
      const oracle = newCache().cache;
      assert.ok(oracle.setFleet('ns/gw', resources).ok && result.ok, `step ${step}`);
      const got = cache.snapshot('ns/gw')!.types[TypeUrl.Secret];
      const want = oracle.snapshot('ns/gw')!.types[TypeUrl.Secret];
      assert.equal(got.version, want.version, `set version at step ${step}`);
      assert.deepEqual(
        got.sorted.map((e) => [e.name, e.version, e.bytes.toString('base64')]),
        want.sorted.map((e) => [e.name, e.version, e.bytes.toString('base64')]),
        `entries at step ${step}`,
      );
      assert.deepEqual(
        [...got.entries.keys()].sort(),
        [...want.entries.keys()].sort(),
        `names at step ${step}`,
      );
      for (const [name, e] of got.entries) assert.equal(e.version, want.entries.get(name)!.version);
      // What the step reported as changed and removed is the difference between the full builds.
      const now = versions(oracle, 'ns/gw')[TypeUrl.Secret];
      const was = before?.[TypeUrl.Secret] ?? {};
      const changedNames = Object.keys(now).filter((n) => n !== '' && was[n] !== now[n]);
      const removedNames = Object.keys(was).filter((n) => n !== '' && !(n in now));
      assert.deepEqual(
        [...(result.changed[TypeUrl.Secret] ?? [])].sort(),
        changedNames.sort(),
        `changed ${step}`,
      );
      assert.deepEqual(
        [...(result.removed[TypeUrl.Secret] ?? [])].sort(),
        removedNames.sort(),
        `removed ${step}`,
      );
      before = versions(oracle, 'ns/gw');
    }
  });
});
