import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { TypeUrl } from '../../src/envoy/resources';
import { StreamAdmission, peerAddress } from '../../src/xds/admission';
import { fleetResources } from '../support/xds-fixtures';
import type { AdsClient } from '../support/ads-client';
import { Harness, sleep, until } from './harness';

/** Stream limits, the bounded wait of streams for unknown fleets, and bounded metric labels. */

const CDS = TypeUrl.Cluster;

function ended(c: AdsClient, timeoutMs = 15_000): Promise<grpc.StatusObject> {
  return Promise.race([
    c.status,
    sleep(timeoutMs).then(() => {
      throw new Error(`the stream was still open after ${timeoutMs} ms`);
    }),
  ]);
}

describe('StreamAdmission', () => {
  test('counts streams per client address and in total', () => {
    const a = new StreamAdmission({ maxStreams: 3, maxStreamsPerPeer: 2 });
    assert.equal(a.admit('10.0.0.1'), undefined);
    assert.equal(a.admit('10.0.0.1'), undefined);
    assert.equal(a.admit('10.0.0.1')?.reason, 'peer_stream_limit');
    assert.equal(a.admit('10.0.0.2'), undefined);
    assert.equal(a.admit('10.0.0.3')?.reason, 'stream_limit');
    a.release('10.0.0.1');
    assert.equal(a.open, 2);
    assert.equal(a.admit('10.0.0.3'), undefined);
    a.release('never-admitted');
    assert.equal(a.open, 3);
    assert.equal(a.peers, 3);
  });

  test('no limits: everything is admitted', () => {
    const a = new StreamAdmission({});
    for (let i = 0; i < 1000; i++) assert.equal(a.admit('x'), undefined);
  });

  test('peer strings from grpc-js become addresses', () => {
    assert.equal(peerAddress('127.0.0.1:5000'), '127.0.0.1');
    assert.equal(peerAddress('::1:5000'), '::1');
    assert.equal(peerAddress('[::1]:5000'), '::1');
    assert.equal(peerAddress('::ffff:10.1.2.3:443'), '10.1.2.3');
    assert.equal(peerAddress('unknown'), 'unknown');
  });
});

describe('ADS stream limits and unknown fleets', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });
  after(async () => h?.stop());

  test('a client address holding its limit is refused with RESOURCE_EXHAUSTED; a freed slot is reused', async () => {
    h = await Harness.start({ limits: { maxStreamsPerPeer: 2 } });
    assert.ok(h.cache.setFleet('default/gw', fleetResources()).ok);
    const open = [h.client(), h.client()];
    for (const c of open) {
      c.subscribe(CDS, []);
      await c.next(CDS);
    }
    const third = h.client();
    third.subscribe(CDS, []);
    const st = await ended(third);
    assert.equal(st.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.match(st.details, /limit of 2 ADS streams/);
    assert.equal(third.responses.length, 0);
    assert.equal(await h.metric('convoy_xds_streams_refused_total', { reason: 'peer_stream_limit' }), 1);
    open[0]!.close();
    await until(() => h!.server.streamCount === 1, 10_000, 'the closed stream to free its slot');
    const fourth = h.client();
    fourth.subscribe(CDS, []);
    assert.deepEqual((await fourth.next(CDS)).names, ['default/app/80']);
  });

  test('the total limit holds across addresses', async () => {
    h = await Harness.start({ limits: { maxStreams: 1 } });
    assert.ok(h.cache.setFleet('default/gw', fleetResources()).ok);
    const first = h.client();
    first.subscribe(CDS, []);
    await first.next(CDS);
    const second = h.client();
    second.subscribe(CDS, []);
    assert.equal((await ended(second)).code, grpc.status.RESOURCE_EXHAUSTED);
    assert.equal(await h.metric('convoy_xds_streams_refused_total', { reason: 'stream_limit' }), 1);
  });

  test('a stream for a fleet nobody serves is closed with NOT_FOUND after the timeout', async () => {
    h = await Harness.start({ unknownFleetTimeoutMs: 300 });
    assert.ok(h.cache.setFleet('default/gw', fleetResources()).ok);
    const known = h.client();
    known.subscribe(CDS, []);
    await known.next(CDS);
    const invented = h.client({ fleet: 'nobody/invented-name' });
    invented.subscribe(CDS, []);
    const st = await ended(invented);
    assert.equal(st.code, grpc.status.NOT_FOUND);
    assert.match(
      st.details,
      /no Gateway "nobody\/invented-name" is served by this control plane within 300ms/,
    );
    // A stream that never sends its first request is not held forever either.
    const idle = h.client();
    const idleStatus = await ended(idle);
    assert.equal(idleStatus.code, grpc.status.NOT_FOUND);
    assert.match(idleStatus.details, /no first request/);
    assert.equal(known.isEnded, false, 'the stream of a served fleet stays');
    assert.ok((await h.metric('convoy_xds_streams_refused_total', { reason: 'unknown_fleet' })) >= 2);
  });

  test('a Gateway that appears within the timeout keeps its waiting stream', async () => {
    h = await Harness.start({ unknownFleetTimeoutMs: 2_000 });
    const early = h.client({ fleet: 'late/gw' });
    early.subscribe(CDS, []);
    await until(() => h!.server.debugState().streams.length === 1, 10_000, 'the stream to attach');
    assert.ok(h.cache.setFleet('late/gw', fleetResources()).ok);
    assert.deepEqual((await early.next(CDS)).names, ['default/app/80']);
    await sleep(2_500);
    assert.equal(early.isEnded, false);
  });

  test('a removed Gateway starts the wait again for its streams', async () => {
    h = await Harness.start({ unknownFleetTimeoutMs: 300 });
    assert.ok(h.cache.setFleet('gone/gw', fleetResources()).ok);
    const c = h.client({ fleet: 'gone/gw' });
    c.subscribe(CDS, []);
    await c.next(CDS);
    h.cache.removeFleet('gone/gw');
    assert.equal((await ended(c)).code, grpc.status.NOT_FOUND);
  });

  test('convoy_xds_streams has series for served fleets only; invented names share "unknown"', async () => {
    h = await Harness.start();
    assert.ok(h.cache.setFleet('default/gw', fleetResources()).ok);
    const served = h.client();
    served.subscribe(CDS, []);
    await served.next(CDS);
    const invented = Array.from({ length: 20 }, (_, i) => h!.client({ fleet: `made-up/name-${i}` }));
    for (const c of invented) c.subscribe(CDS, []);
    await until(() => h!.server.debugState().streams.length === 21, 10_000, 'all streams attached');
    const text = await h.metrics.registry.getSingleMetricAsString('convoy_xds_streams');
    const series = text.split('\n').filter((l) => l.startsWith('convoy_xds_streams{'));
    assert.deepEqual(series.sort(), [
      'convoy_xds_streams{fleet="default/gw",variant="sotw"} 1',
      'convoy_xds_streams{fleet="unknown",variant="sotw"} 20',
    ]);
    for (const c of invented) c.close();
    served.close();
    await until(() => h!.server.streamCount === 0, 10_000, 'all streams closed');
    const after = await h.metrics.registry.getSingleMetricAsString('convoy_xds_streams');
    assert.equal(
      after.split('\n').filter((l) => l.startsWith('convoy_xds_streams{')).length,
      0,
      'no series left',
    );
  });
});
