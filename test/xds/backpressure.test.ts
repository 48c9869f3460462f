import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TypeUrl } from '../../src/envoy/resources';
import { fleetResources } from '../support/xds-fixtures';
import { Harness, until } from './harness';

const CDS = TypeUrl.Cluster;

test('a stream that does not read delays only itself, and gets the latest state when it resumes', async () => {
  const h = await Harness.start();
  try {
    const clusters = Array.from({ length: 1500 }, (_, i) => `ns/a-service-with-a-long-name-${i}/8080`);
    const publish = (timeout: number) =>
      assert.ok(
        h.cache.setFleet(
          'default/gw',
          fleetResources({ clusters, clusterTimeout: Object.fromEntries(clusters.map((c) => [c, timeout])) }),
        ).ok,
      );
    publish(1);
    const slow = h.client({ id: 'slow', keepResponses: false });
    const fast = h.client({ id: 'fast', keepResponses: false });
    slow.subscribe(CDS, []);
    fast.subscribe(CDS, []);
    await until(() => !!slow.latest.get(CDS) && !!fast.latest.get(CDS), 10_000, 'initial CDS');
    const size = fast.latest.get(CDS)!.raw.length;
    assert.ok(size > 100_000, `CDS response is ${size} bytes`);

    slow.pause();
    const updates = 60;
    for (let i = 2; i <= updates + 1; i++) {
      publish(i);
      // Let the fast client receive each version (it must not wait for the slow one).
      const version = h.cache.snapshot('default/gw')!.types[CDS].version;
      await until(() => fast.latest.get(CDS)?.version === version, 10_000, `fast client at update ${i}`);
    }
    const final = h.cache.snapshot('default/gw')!.types[CDS].version;
    const stuck = h.server.debugState().streams.find((s) => s.nodeId === 'slow')!;
    assert.equal(stuck.types[CDS].state, 'stale');
    assert.equal(fast.counts.get(CDS), updates + 1);

    slow.resume();
    await until(() => slow.latest.get(CDS)?.version === final, 20_000, 'slow client catches up');
    // Versions published while it was stuck were skipped: it got the latest, not every one.
    assert.ok(slow.counts.get(CDS)! < updates + 1, `slow client got ${slow.counts.get(CDS)} responses`);
    await until(
      () => h.server.debugState().streams.find((s) => s.nodeId === 'slow')!.types[CDS].state === 'synced',
      10_000,
      'slow synced',
    );
  } finally {
    await h.stop();
  }
});
