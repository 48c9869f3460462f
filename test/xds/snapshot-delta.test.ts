/**
 * FleetDelta, the build thread's snapshot message (docs/architecture.md §14): through a real
 * structured clone with the bytes transferred, a MirrorCache ends up with every name, version,
 * set version and byte of the XdsCache it mirrors, reports the same changed and removed names,
 * and the same change always encodes to the same message.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { translateFleet } from '../../src/envoy/translate';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { silentLogger } from '../../src/observability/logger';
import { XdsCache } from '../../src/xds/cache';
import { MirrorCache, type SnapshotSource } from '../../src/xds/mirror-cache';
import { FleetDeltaEncoder, type FleetDelta } from '../../src/xds/snapshot-delta';
import { PUSH_ORDER } from '../../src/xds/served-types';
import type { FleetChange } from '../../src/xds/snapshot';
import type { ObjectStore } from '../../src/store/store';
import {
  CONTROLLER,
  backendRef,
  backendService,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  httpsListener,
  parentRef,
  storeOf,
  tlsSecret,
} from '../support/objects';

const FLEET = 'default/edge';

function store(): ObjectStore {
  return storeOf(
    gatewayClass(),
    gateway('edge', [httpListener('http', 8080), httpsListener('https', 8443, 'a.example.com', 'a-cert')]),
    tlsSecret('a-cert', { hostnames: ['a.example.com'] }),
    ...backendService('app', 80, ['192.0.2.10']),
    ...backendService('api', 80, ['192.0.2.20']),
    httpRoute('r1', [{ backendRefs: [backendRef('app', 80)] }], { parentRefs: [parentRef('edge')] }),
    httpRoute(
      'r2',
      [{ matches: [{ path: { type: 'PathPrefix', value: '/api' } }], backendRefs: [backendRef('api', 80)] }],
      {
        parentRefs: [parentRef('edge')],
      },
    ),
  );
}

/** Builds the store's fleet into the cache. */
function publish(cache: XdsCache, s: ObjectStore): void {
  const built = buildGateways(s, { controllerName: CONTROLLER, now: '2026-01-01T00:00:00Z' });
  const fleet = built.fleets.find((f) => f.fleet === FLEET)!;
  const outcome = cache.setFleet(FLEET, translateFleet(fleet, { bindAddress: '127.0.0.1' }));
  assert.ok(outcome.ok);
}

/** Sends a delta as postMessage would: structured clone, bytes transferred (the sender's copy is detached). */
function send(delta: FleetDelta): FleetDelta {
  const received = structuredClone(delta, { transfer: [delta.bytes] });
  assert.equal(delta.bytes.byteLength, 0, 'the bytes were transferred, not copied');
  return received;
}

function served(cache: SnapshotSource): unknown {
  return cache.fleets().map((fleet) => {
    const snap = cache.snapshot(fleet)!;
    return {
      fleet,
      eds: [...snap.clusterEds].sort(),
      types: PUSH_ORDER.map((t) => [
        snap.types[t].version,
        snap.types[t].sorted.map((e) => [e.name, e.version, e.bytes.toString('base64')]),
      ]),
    };
  });
}

function names(c: FleetChange): unknown {
  const sorted = (m: ReadonlyMap<string, readonly string[]>) =>
    [...m].map(([t, n]) => [t, [...n].sort()]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return {
    fleet: c.fleet,
    first: c.first,
    changed: sorted(c.changed),
    removed: sorted(c.removed),
    gone: !c.snapshot,
  };
}

describe('FleetDelta', () => {
  test('round trip: the mirror serves what the cache serves and reports the same changes', () => {
    const s = store();
    const cache = new XdsCache({ logger: silentLogger(), metrics: new ConvoyMetrics() });
    const mirror = new MirrorCache(silentLogger());
    const encoder = new FleetDeltaEncoder();
    const sourceChanges: FleetChange[] = [];
    const mirrorChanges: FleetChange[] = [];
    cache.onChange((c) => {
      sourceChanges.push(c);
      mirror.apply(send(encoder.encode(c)));
    });
    mirror.onChange((c) => mirrorChanges.push(c));

    publish(cache, s);
    assert.deepEqual(served(mirror), served(cache));
    // An edited route, a removed route (and its cluster), then the fleet removed.
    s.put(
      httpRoute(
        'r1',
        [{ matches: [{ path: { type: 'Exact', value: '/x' } }], backendRefs: [backendRef('app', 80)] }],
        {
          parentRefs: [parentRef('edge')],
        },
      ),
    );
    publish(cache, s);
    assert.deepEqual(served(mirror), served(cache));
    s.delete('HTTPRoute', 'default', 'r2');
    publish(cache, s);
    assert.deepEqual(served(mirror), served(cache));
    assert.ok(sourceChanges.at(-1)!.removed.size > 0, 'the deletion removed resources');
    cache.removeFleet(FLEET);
    assert.deepEqual(mirror.fleets(), []);
    assert.deepEqual(mirrorChanges.map(names), sourceChanges.map(names));
  });

  test('a full delta replaces what the mirror held: only differences are reported', () => {
    const s = store();
    const first = new XdsCache({ logger: silentLogger(), metrics: new ConvoyMetrics() });
    const mirror = new MirrorCache(silentLogger());
    first.onChange((c) => mirror.apply(send(new FleetDeltaEncoder().encode(c))));
    publish(first, s);
    // A new build thread starts from nothing: its first delta is full, from a changed store.
    s.delete('HTTPRoute', 'default', 'r2');
    const second = new XdsCache({ logger: silentLogger(), metrics: new ConvoyMetrics() });
    const seen: FleetChange[] = [];
    mirror.onChange((c) => seen.push(c));
    second.onChange((c) => {
      assert.ok(c.first);
      mirror.apply(send(new FleetDeltaEncoder().encode(c)));
    });
    publish(second, s);
    assert.deepEqual(served(mirror), served(second));
    assert.equal(seen.length, 1);
    assert.equal(seen[0].first, false, 'the mirror already had the fleet');
    const changedCount = [...seen[0].changed.values()].reduce((a, n) => a + n.length, 0);
    const total = PUSH_ORDER.reduce((a, t) => a + second.snapshot(FLEET)!.types[t].entries.size, 0);
    assert.ok(changedCount < total, 'unchanged resources are not reported as changed');
    assert.ok(seen[0].removed.size > 0, 'what the new build lacks is removed');
  });

  test('determinism: the same change encodes to the same message', () => {
    const encode = () => {
      const cache = new XdsCache({ logger: silentLogger(), metrics: new ConvoyMetrics() });
      const deltas: FleetDelta[] = [];
      cache.onChange((c) => deltas.push(new FleetDeltaEncoder().encode(c)));
      publish(cache, store());
      return deltas.map((d) => ({ ...d, bytes: Buffer.from(d.bytes).toString('base64') }));
    };
    assert.deepEqual(encode(), encode());
  });
});
