import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TypeUrl } from '../../src/envoy/resources';
import { fleetResources } from '../support/xds-fixtures';
import { MAX_INFLIGHT } from '../../src/xds/stream';
import { TypeState } from '../../src/xds/type-state';
import { Harness, until } from './harness';

const CDS = TypeUrl.Cluster;

/** Returns a function that publishes fleet default/gw with `clusters`, each with the given timeout. */
function publisher(h: Harness, clusters: string[]): (timeout: number) => void {
  return (timeout) =>
    assert.ok(
      h.cache.setFleet(
        'default/gw',
        fleetResources({ clusters, clusterTimeout: Object.fromEntries(clusters.map((c) => [c, timeout])) }),
      ).ok,
    );
}

test('a stream that does not read delays only itself, and gets the latest state when it resumes', async () => {
  const h = await Harness.start();
  try {
    const clusters = Array.from({ length: 1500 }, (_, i) => `ns/a-service-with-a-long-name-${i}/8080`);
    const publish = publisher(h, clusters);
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

test('streams that stop reading cannot hold the server-wide send budget from the others', async () => {
  // A budget smaller than two responses: before stalled streams gave their bytes back, three
  // streams that stopped reading held it for good after a few updates and the reading one starved.
  const budget = 256 * 1024;
  const h = await Harness.start({ sendBudgetBytes: budget, stallTimeoutMs: 200 });
  try {
    const clusters = Array.from({ length: 1500 }, (_, i) => `ns/a-service-with-a-long-name-${i}/8080`);
    const publish = publisher(h, clusters);
    const version = () => h.cache.snapshot('default/gw')!.types[CDS].version;
    const streamOf = (id: string) => h.server.debugState().streams.find((s) => s.nodeId === id)!;
    publish(1);
    const stuck = [0, 1, 2].map((i) => h.client({ id: `stuck-${i}`, keepResponses: false }));
    const fast = h.client({ id: 'fast', keepResponses: false });
    for (const c of [...stuck, fast]) c.subscribe(CDS, []);
    await until(() => [...stuck, fast].every((c) => !!c.latest.get(CDS)), 10_000, 'initial CDS');
    const size = fast.latest.get(CDS)!.raw.length;
    assert.ok(size * 2 > budget, `CDS response is ${size} bytes`);

    for (const c of stuck) c.pause();
    const updates = 40;
    for (let i = 2; i <= updates + 1; i++) {
      publish(i);
      const v = version();
      await until(() => fast.latest.get(CDS)?.version === v, 30_000, `fast client at update ${i}`);
    }
    // The stuck streams were found stalled; each holds at most MAX_INFLIGHT unflushed responses.
    await until(
      () => stuck.every((_, i) => streamOf(`stuck-${i}`).stalled),
      30_000,
      'every stuck stream marked stalled',
    );
    assert.equal(await h.metric('convoy_xds_stalled_streams'), 3);
    for (let i = 0; i < stuck.length; i++) {
      const u = streamOf(`stuck-${i}`).unflushed;
      assert.ok(u.responses >= 1 && u.responses <= MAX_INFLIGHT, `stuck-${i}: ${JSON.stringify(u)}`);
      assert.ok(u.bytes <= MAX_INFLIGHT * (size + 64), `stuck-${i}: ${JSON.stringify(u)}`);
    }
    assert.equal(streamOf('fast').stalled, false);

    // Reading again, they flush what they hold and then get the latest state.
    const final = version();
    for (const c of stuck) c.resume();
    await until(
      () => stuck.every((c) => c.latest.get(CDS)?.version === final),
      30_000,
      'stuck clients catch up',
    );
    await until(
      () => stuck.every((_, i) => !streamOf(`stuck-${i}`).stalled),
      10_000,
      'no stream stalled any more',
    );
    assert.equal(await h.metric('convoy_xds_stalled_streams'), 0);
    for (const c of stuck) assert.ok(c.counts.get(CDS)! < updates + 1, `${c.counts.get(CDS)} responses`);
  } finally {
    await h.stop();
  }
});

test('a wildcard stream that cannot send keeps a bounded set of names to re-evaluate', () => {
  const st = new TypeState(CDS);
  st.requested = true;
  st.wildcard = true;
  // One name per change, as a stream whose Envoy stopped reading sees them, for a long time.
  for (let i = 0; i < 10_000; i++) st.addPending(`ns/service-${i}/80`);
  assert.ok(st.pendingAll, 'switched to re-evaluating the whole type');
  assert.equal(st.pending.size, 0);
  assert.ok(st.hasWork());

  // An explicit subscription keeps exactly the names it asked for.
  const eds = new TypeState(TypeUrl.Endpoint);
  eds.requested = true;
  for (let i = 0; i < 100; i++) eds.addPending(`ns/service-${i}/80`);
  assert.equal(eds.pendingAll, false);
  assert.equal(eds.pending.size, 100);
});

test('with one response per event-loop turn, every stream still gets every type in push order and the latest state', async () => {
  // A turn limit of one byte: each response after the first of a turn waits for the next turn.
  const h = await Harness.start({ sendTurnBytes: 1 });
  try {
    const clusters = Array.from({ length: 200 }, (_, i) => `ns/svc-${i}/8080`);
    const publish = publisher(h, clusters);
    publish(1);
    const clients = Array.from({ length: 12 }, (_, i) => h.client({ id: `c-${i}`, keepResponses: false }));
    for (const c of clients) {
      c.subscribe(CDS, []);
      c.subscribe(TypeUrl.Listener, []);
    }
    await until(
      () => clients.every((c) => !!c.latest.get(CDS) && !!c.latest.get(TypeUrl.Listener)),
      20_000,
      'initial CDS and LDS on every stream',
    );
    for (let i = 2; i <= 6; i++) publish(i);
    const final = h.cache.snapshot('default/gw')!.types[CDS].version;
    await until(
      () => clients.every((c) => c.latest.get(CDS)?.version === final),
      20_000,
      'every stream at the latest CDS',
    );
    await until(
      () => h.server.debugState().streams.every((s) => s.types[CDS].state === 'synced'),
      20_000,
      'every stream synced',
    );
  } finally {
    await h.stop();
  }
});
