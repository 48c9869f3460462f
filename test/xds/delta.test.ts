import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { messageType } from '../../src/envoy/protos';
import { TypeUrl } from '../../src/envoy/resources';
import type { AdsClient, AdsResponse } from '../support/ads-client';
import { fleetResources } from '../support/xds-fixtures';
import type { FleetSpec } from '../support/xds-fixtures';
import { Harness, quiet, until } from './harness';

const CDS = TypeUrl.Cluster;
const EDS = TypeUrl.Endpoint;
const LDS = TypeUrl.Listener;
const RDS = TypeUrl.Route;
const SDS = TypeUrl.Secret;
const FLEET = 'default/gw';
function short(r: AdsResponse): string {
  return r.typeUrl.slice(r.typeUrl.lastIndexOf('.') + 1);
}

/** "Type:+added,...:-removed,..." for compact assertions. */
function summary(r: AdsResponse): string {
  return `${short(r)}:+${r.names.join(',')}:-${r.removed.join(',')}`;
}

describe('delta ADS', () => {
  let h: Harness;
  let n = 0;
  const ids = new WeakMap<AdsClient, string>();
  const client = (opts: Parameters<Harness['client']>[0] = {}): AdsClient => {
    const id = `delta-${++n}`;
    const c = h.client({ id, variant: 'delta', ...opts });
    ids.set(c, id);
    return c;
  };
  const set = (spec: FleetSpec = {}) => {
    const r = h.cache.setFleet(FLEET, fleetResources(spec));
    assert.ok(r.ok, JSON.stringify(r));
  };
  const versionOf = (type: TypeUrl, name: string) =>
    h.cache.snapshot(FLEET)!.types[type].entries.get(name)!.version;
  const typeDebug = (c: AdsClient, type: string) =>
    h.server.debugState().streams.find((s) => s.nodeId === ids.get(c))?.types[type];
  const untilSynced = (c: AdsClient) =>
    until(
      () => {
        const s = h.server.debugState().streams.find((x) => x.nodeId === ids.get(c));
        return !!s && Object.values(s.types).every((t) => t.state !== 'stale');
      },
      10_000,
      'synced',
    );

  async function connectLikeEnvoy(c: AdsClient, clusters: string[]) {
    let mark = c.received;
    c.subscribe(CDS, []);
    await c.waitFor((r) => r.typeUrl === CDS, { since: mark });
    mark = c.received;
    c.subscribe(EDS, clusters);
    await c.waitFor((r) => r.typeUrl === EDS, { since: mark });
    mark = c.received;
    c.subscribe(SDS, ['default/cert']);
    c.subscribe(LDS, []);
    await c.waitFor((r) => r.typeUrl === LDS, { since: mark });
    mark = c.received;
    c.subscribe(RDS, ['http-8080', 'https-8443']);
    await c.waitFor((r) => r.typeUrl === RDS, { since: mark });
    await untilSynced(c);
  }

  beforeEach(async () => {
    h = await Harness.start();
  });
  afterEach(async () => {
    await h.stop();
  });

  test('legacy wildcard CDS gets every cluster with its content version; "*" too', async () => {
    set({ clusters: ['a', 'b'] });
    const c = client();
    c.subscribe(CDS, []);
    const r = await c.next(CDS);
    assert.deepEqual(r.names, ['a', 'b']);
    assert.deepEqual(r.versions, { a: versionOf(CDS, 'a'), b: versionOf(CDS, 'b') });
    assert.deepEqual(r.removed, []);
    assert.equal(r.version, h.cache.snapshot(FLEET)!.types[CDS].version);
    const star = client();
    star.subscribe(CDS, ['*']);
    assert.deepEqual((await star.next(CDS)).names, ['a', 'b']);
    const resp = messageType('envoy.service.discovery.v3.DeltaDiscoveryResponse');
    assert.deepEqual(Buffer.from(resp.encode(resp.decode(r.raw)).finish()), r.raw);
  });

  test('a wildcard request on a fleet without clusters gets an empty answer (once)', async () => {
    assert.ok(
      h.cache.setFleet(FLEET, { listeners: [], routes: [], clusters: [], endpoints: [], secrets: [] }).ok,
    );
    const c = client();
    c.subscribe(CDS, []);
    const r = await c.next(CDS);
    assert.deepEqual([r.names, r.removed], [[], []]);
    assert.deepEqual(await quiet(c), []);
  });

  test('subscribed names that do not exist are reported removed once, then sent when they appear', async () => {
    set({ clusters: ['a'] });
    const c = client();
    c.subscribe(EDS, ['a', 'x']);
    const r = await c.next(EDS);
    assert.deepEqual([r.names, r.removed], [['a'], ['x']]);
    await untilSynced(c);
    set({ clusters: ['a'], ports: { a: 1 } });
    assert.deepEqual(summary(await c.next(EDS)), 'ClusterLoadAssignment:+a:-');
    const mark = c.received;
    set({ clusters: ['a', 'x'], ports: { a: 1 } });
    assert.deepEqual(
      summary(await c.waitFor((x) => x.typeUrl === EDS, { since: mark })),
      'ClusterLoadAssignment:+x:-',
    );
  });

  test('initial_resource_versions: only what the client lacks is sent, and what is gone is removed', async () => {
    set({ clusters: ['a', 'b', 'c'] });
    const c = client();
    c.subscribe(CDS, [], { a: versionOf(CDS, 'a'), b: 'old', gone: 'v1' });
    const r = await c.next(CDS);
    assert.deepEqual([r.names, r.removed], [['b', 'c'], []]);
    // Cluster removals always come last, in their own response.
    const removal = await c.next(CDS);
    assert.deepEqual([removal.names, removal.removed], [[], ['gone']]);
    c.subscribe(EDS, ['a', 'b'], { a: versionOf(EDS, 'a') });
    assert.deepEqual(summary(await c.next(EDS)), 'ClusterLoadAssignment:+b:-');
    // A reconnect that holds everything at the current versions gets nothing at all.
    const snap = h.cache.snapshot(FLEET)!;
    const all = (t: TypeUrl) =>
      Object.fromEntries([...snap.types[t].entries.values()].map((e) => [e.name, e.version]));
    const again = client();
    again.subscribe(CDS, [], all(CDS));
    again.subscribe(EDS, ['a', 'b', 'c'], all(EDS));
    again.subscribe(LDS, [], all(LDS));
    again.subscribe(RDS, ['http-8080', 'https-8443'], all(RDS));
    again.subscribe(SDS, ['default/cert'], all(SDS));
    const stream = () => h.server.debugState().streams.find((s) => s.nodeId === ids.get(again));
    await until(
      () => Object.values(stream()?.types ?? {}).filter((t) => t.state === 'synced').length === 5,
      10_000,
      'all types requested and synced',
    );
    // Nothing was sent, neither while the requests were processed nor after.
    await quiet(again, 250);
    assert.deepEqual(again.responses, []);
  });

  test('unsubscribed names are not pushed; a resubscription is answered even when unchanged', async () => {
    set({ clusters: ['a', 'b'] });
    const c = client();
    c.subscribe(EDS, ['a']);
    assert.deepEqual((await c.next(EDS)).names, ['a']);
    await untilSynced(c);
    c.deltaSubscribe(EDS, ['b']);
    assert.deepEqual((await c.next(EDS)).names, ['b']);
    await untilSynced(c);
    // Subscribing again to a name the client already holds is still answered.
    c.deltaSubscribe(EDS, ['a']);
    assert.deepEqual((await c.next(EDS)).names, ['a']);
    await untilSynced(c);
    c.deltaSubscribe(EDS, [], ['b']);
    await until(() => typeDebug(c, EDS)?.subscribedNames.join() === 'a', 10_000, 'unsubscribed');
    set({ clusters: ['a', 'b'], ports: { b: 2 } });
    assert.deepEqual(await quiet(c), []);
    c.deltaSubscribe(EDS, ['b']);
    assert.deepEqual(summary(await c.next(EDS)), 'ClusterLoadAssignment:+b:-');
    await untilSynced(c);
    c.deltaSubscribe(EDS, [], ['b']);
    c.deltaSubscribe(EDS, ['b']);
    assert.deepEqual(summary(await c.next(EDS)), 'ClusterLoadAssignment:+b:-');
    // Phantom unsubscribes are ignored quietly.
    c.deltaSubscribe(EDS, [], ['never-subscribed']);
    assert.deepEqual(await quiet(c), []);
  });

  test('with a wildcard, unsubscribing an explicit name resends it', async () => {
    set({ clusters: ['a', 'b'] });
    const c = client();
    c.deltaSubscribe(CDS, ['*', 'a']);
    assert.deepEqual((await c.next(CDS)).names, ['a', 'b']);
    await untilSynced(c);
    c.deltaSubscribe(CDS, [], ['a']);
    assert.deepEqual(summary(await c.next(CDS)), 'Cluster:+a:-');
    await untilSynced(c);
    // Leaving the wildcard: nothing else is sent for names that are no longer wanted.
    c.deltaSubscribe(CDS, [], ['*']);
    await until(() => typeDebug(c, CDS)?.wildcard === false, 10_000, 'wildcard dropped');
    set({ clusters: ['a', 'b'], clusterTimeout: { a: 4 } });
    assert.deepEqual(await quiet(c), []);
  });

  test('subscriptions are honoured even with a stale or unknown nonce', async () => {
    set({ clusters: ['a', 'b'] });
    const c = client({ autoAck: false });
    c.subscribe(CDS, []);
    const r1 = await c.next(CDS);
    set({ clusters: ['a', 'b'], clusterTimeout: { a: 2 } });
    const r2 = await c.next(CDS);
    assert.notEqual(r1.nonce, r2.nonce);
    c.deltaSubscribe(EDS, ['a'], [], 'no-such-nonce');
    assert.deepEqual(summary(await c.next(EDS)), 'ClusterLoadAssignment:+a:-');
    // An ACK of the older response is attributed to it, and the newer one stays unanswered.
    c.send({ type_url: CDS, response_nonce: r1.nonce });
    await until(() => typeDebug(c, CDS)?.ackedVersion === r1.version, 10_000, 'old ack recorded');
    assert.equal(typeDebug(c, CDS)?.state, 'stale');
  });

  test('a NACK is recorded and the rejected resource is not resent until it changes', async () => {
    set({ clusters: ['a', 'b'] });
    let reject = true;
    const c = client({ nack: (r) => (reject && r.typeUrl === CDS ? 'cluster a: bad' : undefined) });
    c.subscribe(CDS, []);
    const r1 = await c.next(CDS);
    await until(() => typeDebug(c, CDS)?.state === 'nacked', 10_000, 'nacked');
    assert.deepEqual(typeDebug(c, CDS)?.lastNack?.message, 'cluster a: bad');
    assert.equal(typeDebug(c, CDS)?.lastNack?.nonce, r1.nonce);
    assert.equal(await h.metric('convoy_xds_nacks_total', { type: 'Cluster' }), 1);
    assert.deepEqual(await quiet(c), []);
    reject = false;
    set({ clusters: ['a', 'b'], clusterTimeout: { b: 3 } });
    assert.deepEqual(summary(await c.next(CDS)), 'Cluster:+b:-');
    await until(() => typeDebug(c, CDS)?.state === 'synced', 10_000, 'synced');
  });

  test('nothing is sent when nothing changed', async () => {
    set();
    const c = client();
    await connectLikeEnvoy(c, ['default/app/80']);
    set();
    assert.deepEqual(await quiet(c), []);
  });

  test('one push is ordered: secret, cluster, endpoints, listener, route', async () => {
    set();
    const c = client();
    await connectLikeEnvoy(c, ['default/app/80']);
    const mark = c.received;
    set({
      cert: 'rotated',
      clusterTimeout: { 'default/app/80': 5 },
      ports: { 'default/app/80': 9 },
      routePrefix: '/v2',
      httpStatPrefix: 'x',
    });
    await c.waitFor((r) => r.typeUrl === RDS, { since: mark });
    await quiet(c);
    assert.deepEqual(c.responses.filter((r) => r.seq >= mark).map(summary), [
      'Secret:+default/cert:-',
      'Cluster:+default/app/80:-',
      'ClusterLoadAssignment:+default/app/80:-',
      'Listener:+http-8080:-',
      'RouteConfiguration:+http-8080:-',
    ]);
  });

  test('removed clusters and their endpoints go after the routes that stopped using them', async () => {
    set({ clusters: ['a', 'b'], routeTo: 'a' });
    const c = client();
    await connectLikeEnvoy(c, ['a', 'b']);
    const mark = c.received;
    set({ clusters: ['b', 'c'], routeTo: 'c' });
    await c.waitFor((r) => r.typeUrl === EDS && r.removed.includes('a'), { since: mark });
    await quiet(c);
    assert.deepEqual(c.responses.filter((r) => r.seq >= mark).map(summary), [
      'Cluster:+c:-',
      'RouteConfiguration:+http-8080,https-8443:-',
      'Cluster:+:-a',
      'ClusterLoadAssignment:+:-a',
    ]);
  });

  test('routes to a new cluster wait until Envoy answered the CDS that added it; its endpoints go first', async () => {
    set({ clusters: ['a', 'b'], routeTo: 'a' });
    // Like Envoy: applying a CDS response that adds a cluster subscribes to its endpoints, and only
    // then ACKs.
    const c: AdsClient = client({
      nack: (r) => {
        if (r.typeUrl === CDS && r.names.includes('c')) c.deltaSubscribe(EDS, ['c']);
        return undefined;
      },
    });
    await connectLikeEnvoy(c, ['a', 'b']);
    const mark = c.received;
    set({ clusters: ['b', 'c'], routeTo: 'c' });
    await c.waitFor((r) => r.typeUrl === EDS && r.removed.includes('a'), { since: mark });
    await quiet(c);
    assert.deepEqual(c.responses.filter((r) => r.seq >= mark).map(summary), [
      'Cluster:+c:-',
      'ClusterLoadAssignment:+c:-',
      'RouteConfiguration:+http-8080,https-8443:-',
      'Cluster:+:-a',
      'ClusterLoadAssignment:+:-a',
    ]);
  });

  test('a changed cluster gets its unchanged ClusterLoadAssignment resent', async () => {
    set();
    const c = client();
    await connectLikeEnvoy(c, ['default/app/80']);
    const mark = c.received;
    set({ clusterTimeout: { 'default/app/80': 7 } });
    await c.waitFor((r) => r.typeUrl === EDS, { since: mark });
    await quiet(c);
    assert.deepEqual(c.responses.filter((r) => r.seq >= mark).map(summary), [
      'Cluster:+default/app/80:-',
      'ClusterLoadAssignment:+default/app/80:-',
    ]);
  });
});
