import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { decodeMessage, messageType } from '../../src/envoy/protos';
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
/** Subscribes like Envoy does (CDS, EDS, then SDS + LDS, then RDS) and waits until all are ACKed. */
async function connectLikeEnvoy(
  h: Harness,
  c: AdsClient,
  clusters: string[],
  routes = ['http-8080', 'https-8443'],
) {
  const wait = async (type: string, since: number) => c.waitFor((r) => r.typeUrl === type, { since });
  let mark = c.received;
  c.subscribe(CDS, []);
  await wait(CDS, mark);
  mark = c.received;
  c.subscribe(EDS, clusters);
  await wait(EDS, mark);
  mark = c.received;
  c.subscribe(SDS, ['default/cert']);
  c.subscribe(LDS, []);
  await wait(LDS, mark);
  await wait(SDS, mark);
  mark = c.received;
  c.subscribe(RDS, routes);
  await wait(RDS, mark);
  await untilSynced(h, c);
}

/** Waits until the server saw every response of this client answered. */
async function untilSynced(h: Harness, c: AdsClient): Promise<void> {
  await until(
    () => {
      const s = h.server.debugState().streams.find((x) => x.nodeId === nodeIdOf(c));
      return !!s && Object.values(s.types).every((t) => t.state === 'synced' || t.state === 'nacked');
    },
    10_000,
    'stream synced',
  );
}

const nodeIds = new WeakMap<AdsClient, string>();
function nodeIdOf(c: AdsClient): string {
  return nodeIds.get(c)!;
}

function typeDebug(h: Harness, c: AdsClient, type: string) {
  const s = h.server.debugState().streams.find((x) => x.nodeId === nodeIdOf(c));
  return s?.types[type];
}

describe('SotW ADS', () => {
  let h: Harness;
  let n = 0;
  const client = (opts: Parameters<Harness['client']>[0] = {}): AdsClient => {
    const id = `envoy-${++n}`;
    const c = h.client({ id, ...opts });
    nodeIds.set(c, id);
    return c;
  };
  const set = (spec: FleetSpec = {}, fleet = FLEET) => {
    const r = h.cache.setFleet(fleet, fleetResources(spec));
    assert.ok(r.ok, JSON.stringify(r));
  };

  beforeEach(async () => {
    h = await Harness.start();
  });
  afterEach(async () => {
    await h.stop();
  });

  test('streams are held until the fleet has a snapshot, then answered CDS before LDS', async () => {
    const c = client();
    c.subscribe(LDS, []);
    c.subscribe(CDS, []);
    // Both requests reached the server (a busy CPU may delay them past any fixed pause).
    await until(() => !!typeDebug(h, c, CDS) && !!typeDebug(h, c, LDS), 10_000, 'both requests received');
    assert.deepEqual(await quiet(c, 200), []);
    const stream = h.server.debugState().streams[0];
    assert.equal(stream.held, true);
    assert.equal(stream.fleet, FLEET);
    assert.equal(stream.types[CDS].state, 'not_sent');
    set();
    await c.waitFor((r) => r.typeUrl === LDS);
    assert.deepEqual(c.responses.map(short), ['Cluster', 'Listener']);
    assert.deepEqual(c.responses[0].names, ['default/app/80']);
    assert.deepEqual(c.responses[1].names, ['http-8080', 'https-8443']);
    assert.equal(h.server.debugState().streams[0].held, false);
  });

  test('a wildcard request on a fleet without clusters gets an empty answer (once)', async () => {
    assert.ok(
      h.cache.setFleet(FLEET, { listeners: [], routes: [], clusters: [], endpoints: [], secrets: [] }).ok,
    );
    const c = client();
    c.subscribe(CDS, []);
    c.subscribe(LDS, []);
    const cds = await c.next(CDS);
    assert.deepEqual(cds.names, []);
    await c.waitFor((r) => r.typeUrl === LDS);
    assert.deepEqual(await quiet(c), []);
    const mark = c.received;
    set({ clusters: ['a'] });
    assert.deepEqual((await c.waitFor((r) => r.typeUrl === CDS, { since: mark })).names, ['a']);
  });

  test('responses are byte-identical to protobufjs encodings; nonces are unique per type and stream', async () => {
    set();
    const c = client();
    await connectLikeEnvoy(h, c, ['default/app/80']);
    const resp = messageType('envoy.service.discovery.v3.DiscoveryResponse');
    for (const r of c.responses)
      assert.deepEqual(Buffer.from(resp.encode(resp.decode(r.raw)).finish()), r.raw);
    const nonces = c.responses.map((r) => r.nonce);
    assert.equal(new Set(nonces).size, nonces.length);
    const decoded = decodeMessage<{ resources: { '@type': string; name: string }[] }>(
      'envoy.service.discovery.v3.DiscoveryResponse',
      c.responses.find((r) => r.typeUrl === SDS)!.raw,
    );
    assert.equal(decoded.resources[0]['@type'], SDS);
    assert.equal(decoded.resources[0].name, 'default/cert');
  });

  test('one push is ordered: secret, cluster, endpoints, listener, route', async () => {
    set();
    const c = client();
    await connectLikeEnvoy(h, c, ['default/app/80']);
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
    const pushed = c.responses.filter((r) => r.seq >= mark);
    assert.deepEqual(pushed.map(short), [
      'Secret',
      'Cluster',
      'ClusterLoadAssignment',
      'Listener',
      'RouteConfiguration',
    ]);
    // SotW: full state for LDS, only the changed route for RDS.
    assert.deepEqual(pushed[3].names, ['http-8080', 'https-8443']);
    assert.deepEqual(pushed[4].names, ['http-8080']);
  });

  test('a changed cluster gets its unchanged ClusterLoadAssignment resent in the same push', async () => {
    set();
    const c = client();
    await connectLikeEnvoy(h, c, ['default/app/80']);
    const eds1 = c.responses.find((r) => r.typeUrl === EDS)!;
    const mark = c.received;
    set({ clusterTimeout: { 'default/app/80': 7 } });
    const eds2 = await c.waitFor((r) => r.typeUrl === EDS, { since: mark });
    await quiet(c);
    assert.deepEqual(c.responses.filter((r) => r.seq >= mark).map(short), [
      'Cluster',
      'ClusterLoadAssignment',
    ]);
    assert.deepEqual(eds2.names, ['default/app/80']);
    assert.equal(eds2.version, eds1.version);
    assert.notEqual(eds2.nonce, eds1.nonce);
  });

  test('requests with a stale nonce are ignored', async () => {
    set({ clusters: ['a', 'b'] });
    const c = client({ autoAck: false });
    c.subscribe(CDS, []);
    c.ack(await c.next(CDS));
    c.subscribe(EDS, ['a']);
    const e1 = await c.next(EDS);
    c.ack(e1);
    await untilSynced(h, c);
    const mark = c.received;
    set({ clusters: ['a', 'b'], ports: { a: 1234 } });
    const e2 = await c.waitFor((r) => r.typeUrl === EDS, { since: mark });
    assert.deepEqual(e2.names, ['a']);
    // An answer to the older response arrives after the newer one was sent: stale, ignored.
    c.send({ type_url: EDS, resource_names: ['a', 'b'], version_info: e1.version, response_nonce: e1.nonce });
    assert.deepEqual(await quiet(c), []);
    assert.deepEqual(typeDebug(h, c, EDS)?.subscribedNames, ['a']);
    assert.equal(typeDebug(h, c, EDS)?.ackedVersion, e1.version);
    // The same request with the current nonce is processed: b is new and answered.
    c.send({ type_url: EDS, resource_names: ['a', 'b'], version_info: e2.version, response_nonce: e2.nonce });
    const e3 = await c.next(EDS);
    assert.deepEqual(e3.names, ['b']);
  });

  test('a NACK is recorded, counted and not answered with the same content; a fix is accepted', async () => {
    set();
    let reject = true;
    const c = client({
      nack: (r) => (reject && r.typeUrl === RDS ? 'route http-8080: invalid regex' : undefined),
    });
    await connectLikeEnvoy(h, c, ['default/app/80']);
    const rds1 = c.responses.find((r) => r.typeUrl === RDS)!;
    await until(() => typeDebug(h, c, RDS)?.state === 'nacked', 10_000, 'nacked');
    const nack = typeDebug(h, c, RDS)!.lastNack!;
    assert.equal(nack.message, 'route http-8080: invalid regex');
    assert.equal(nack.version, rds1.version);
    assert.equal(nack.nonce, rds1.nonce);
    assert.equal(nack.acceptedVersion, '');
    assert.equal(await h.metric('convoy_xds_nacks_total', { type: 'RouteConfiguration' }), 1);
    assert.deepEqual(await quiet(c), []);
    // Re-publishing the same content, or changing other types, does not resend the rejected routes.
    set();
    let mark = c.received;
    set({ clusterTimeout: { 'default/app/80': 3 } });
    await c.waitFor((r) => r.typeUrl === EDS, { since: mark });
    assert.deepEqual(
      (await quiet(c)).filter((r) => r.typeUrl === RDS),
      [],
    );
    assert.deepEqual(c.responses.filter((r) => r.seq >= mark).map(short), [
      'Cluster',
      'ClusterLoadAssignment',
    ]);
    assert.equal(typeDebug(h, c, RDS)?.state, 'nacked');
    // Changed content is sent, and accepted.
    reject = false;
    mark = c.received;
    set({ clusterTimeout: { 'default/app/80': 3 }, routePrefix: '/fixed' });
    const rds2 = await c.waitFor((r) => r.typeUrl === RDS, { since: mark });
    assert.deepEqual(rds2.names, ['http-8080']);
    assert.notEqual(rds2.version, rds1.version);
    await until(() => typeDebug(h, c, RDS)?.state === 'synced', 10_000, 'synced after fix');
    assert.equal(typeDebug(h, c, RDS)?.ackedVersion, rds2.version);
  });

  test('unsubscribed names are not pushed; a resubscription is answered even when unchanged', async () => {
    set({ clusters: ['a', 'b'] });
    const c = client();
    c.subscribe(CDS, []);
    await c.next(CDS);
    c.subscribe(EDS, ['a', 'b']);
    assert.deepEqual((await c.next(EDS)).names, ['a', 'b']);
    await untilSynced(h, c);
    c.subscribe(EDS, ['a']);
    // The change below must reach the server after the unsubscription, not race it.
    await until(() => typeDebug(h, c, EDS)?.subscribedNames.join() === 'a', 10_000, 'unsubscribed');
    assert.deepEqual(await quiet(c), []);
    set({ clusters: ['a', 'b'], ports: { b: 1 } });
    assert.deepEqual(await quiet(c), []);
    c.subscribe(EDS, ['a', 'b']);
    const again = await c.next(EDS);
    assert.deepEqual(again.names, ['b']);
    await untilSynced(h, c);
    // Unsubscribe and resubscribe without any change: still answered.
    c.subscribe(EDS, ['a']);
    await until(() => typeDebug(h, c, EDS)?.subscribedNames.join() === 'a', 10_000, 'unsubscribed again');
    c.subscribe(EDS, ['a', 'b']);
    assert.deepEqual((await c.next(EDS)).names, ['b']);
  });

  test('wildcard: explicit "*", legacy empty list, and explicit names ending the legacy wildcard', async () => {
    set({ clusters: ['a', 'b'] });
    const star = client();
    star.subscribe(CDS, ['*']);
    assert.deepEqual((await star.next(CDS)).names, ['a', 'b']);
    const legacy = client();
    legacy.subscribe(CDS, []);
    assert.deepEqual((await legacy.next(CDS)).names, ['a', 'b']);
    await untilSynced(h, legacy);
    // An explicit name ends the legacy wildcard: the full state is now just "a".
    legacy.subscribe(CDS, ['a']);
    assert.deepEqual((await legacy.next(CDS)).names, ['a']);
    await untilSynced(h, legacy);
    // ... and an empty list now means "nothing", not wildcard (and is not answered with an empty CDS).
    legacy.subscribe(CDS, []);
    assert.deepEqual(await quiet(legacy), []);
    assert.equal(typeDebug(h, legacy, CDS)?.wildcard, false);
    // "*" plus a name is still everything.
    const both = client();
    both.subscribe(CDS, ['*', 'zzz']);
    assert.deepEqual((await both.next(CDS)).names, ['a', 'b']);
    // Wildcard exists only for LDS/CDS.
    const rds = client();
    rds.subscribe(RDS, []);
    rds.subscribe(RDS, ['*']);
    assert.deepEqual(await quiet(rds), []);
  });

  test('names that do not exist yet are remembered and pushed when they appear', async () => {
    set();
    const c = client();
    await connectLikeEnvoy(h, c, ['default/app/80']);
    let mark = c.received;
    c.subscribe(RDS, ['http-8080', 'https-8443', 'http-9090']);
    // The name must be remembered before it appears, so wait for the server to hold it.
    await until(
      () => typeDebug(h, c, RDS)?.subscribedNames.includes('http-9090') === true,
      10_000,
      'http-9090 subscribed',
    );
    assert.deepEqual(await quiet(c), []);
    assert.equal(typeDebug(h, c, RDS)?.state, 'synced');
    set({ extraHttpPorts: [9090] });
    const rds = await c.waitFor((r) => r.typeUrl === RDS, { since: mark });
    assert.deepEqual(rds.names, ['http-9090']);
    await quiet(c);
    assert.deepEqual(c.responses.filter((r) => r.seq >= mark).map(short), ['Listener', 'RouteConfiguration']);
    mark = c.received;
    void mark;
  });

  test('a snapshot refused by the consistency check leaves the old one in service', async () => {
    set();
    const c = client();
    await connectLikeEnvoy(h, c, ['default/app/80']);
    const result = h.cache.setFleet(FLEET, fleetResources({ routeTo: 'missing/cluster/1' }));
    assert.equal(result.ok, false);
    assert.deepEqual(await quiet(c), []);
    assert.equal(await h.metric('convoy_snapshots_rejected_total', { fleet: FLEET }), 1);
    // A new Envoy still gets the previous (valid) snapshot.
    const fresh = client();
    await connectLikeEnvoy(h, fresh, ['default/app/80']);
    const pick = (x: AdsClient) => x.responses.map((r) => [r.typeUrl, r.version, r.names.join()]).sort();
    assert.deepEqual(pick(fresh), pick(c));
  });

  test('full-state CDS keeps removed clusters until the routes moved away, then drops them', async () => {
    set({ clusters: ['a', 'b'], routeTo: 'a' });
    const c = client();
    await connectLikeEnvoy(h, c, ['a', 'b']);
    const mark = c.received;
    set({ clusters: ['b', 'c'], routeTo: 'c' });
    await c.waitFor((r) => r.typeUrl === CDS && !r.names.includes('a'), { since: mark });
    await quiet(c);
    const pushed = c.responses.filter((r) => r.seq >= mark);
    assert.deepEqual(
      pushed.map((r) => `${short(r)}:${r.names.join(',')}`),
      ['Cluster:a,b,c', 'RouteConfiguration:http-8080,https-8443', 'Cluster:b,c'],
    );
    // Versions are content-derived: the final CDS has the snapshot's version.
    assert.equal(pushed[2].version, h.cache.snapshot(FLEET)!.types[CDS].version);
    assert.notEqual(pushed[0].version, pushed[2].version);
  });

  test('routes to a new cluster wait until Envoy answered the CDS that added it; its endpoints go first', async () => {
    set({ clusters: ['a', 'b'], routeTo: 'a' });
    // Like Envoy: applying a CDS response that adds a cluster subscribes to its endpoints, and only
    // then ACKs.
    let subscribed = false;
    const c: AdsClient = client({
      nack: (r) => {
        if (r.typeUrl === CDS && r.names.includes('c') && !subscribed) {
          subscribed = true;
          c.subscribe(EDS, ['a', 'b', 'c']);
        }
        return undefined;
      },
    });
    await connectLikeEnvoy(h, c, ['a', 'b']);
    const mark = c.received;
    set({ clusters: ['b', 'c'], routeTo: 'c' });
    await c.waitFor((r) => r.typeUrl === CDS && !r.names.includes('a'), { since: mark });
    await quiet(c);
    assert.deepEqual(
      c.responses.filter((r) => r.seq >= mark).map((r) => `${short(r)}:${r.names.join(',')}`),
      ['Cluster:a,b,c', 'ClusterLoadAssignment:c', 'RouteConfiguration:http-8080,https-8443', 'Cluster:b,c'],
    );
  });

  test('a CDS response that adds clusters holds listeners and routes until it is answered', async () => {
    set({ clusters: ['a'], routeTo: 'a' });
    const c = client({ autoAck: false });
    c.subscribe(CDS, []);
    const cds = await c.waitFor((r) => r.typeUrl === CDS);
    c.subscribe(EDS, ['a']);
    c.subscribe(LDS, []);
    await c.waitFor((r) => r.typeUrl === EDS);
    await quiet(c);
    assert.equal(c.counts.get(LDS), undefined, 'no listener before the clusters are answered');
    c.ack(cds);
    await c.waitFor((r) => r.typeUrl === LDS);
  });

  test('a restarted server gives the same versions, and a reconnecting wildcard client is not resent LDS/CDS', async () => {
    set({ clusters: ['a'] });
    const c = client();
    await connectLikeEnvoy(h, c, ['a']);
    const had = new Map(c.responses.map((r) => [r.typeUrl, r.version]));
    await h.stop();
    h = await Harness.start();
    set({ clusters: ['a'] });
    const again = client();
    // Envoy reconnecting: each first request carries the version it applied, with no nonce.
    again.send({ type_url: CDS, version_info: had.get(CDS) });
    again.send({ type_url: EDS, version_info: had.get(EDS), resource_names: ['a'] });
    again.send({ type_url: LDS, version_info: had.get(LDS) });
    again.send({ type_url: SDS, version_info: had.get(SDS), resource_names: ['default/cert'] });
    again.send({ type_url: RDS, version_info: had.get(RDS), resource_names: ['http-8080', 'https-8443'] });
    // Responses of different types may arrive in any order: wait for each one expected.
    await Promise.all([EDS, SDS, RDS].map((t) => again.waitFor((r) => r.typeUrl === t)));
    await quiet(again);
    assert.deepEqual(again.responses.map(short).sort(), [
      'ClusterLoadAssignment',
      'RouteConfiguration',
      'Secret',
    ]);
    for (const r of again.responses) assert.equal(r.version, had.get(r.typeUrl), short(r));
    const st = h.server.debugState().streams[0].types;
    assert.equal(st[CDS].state, 'synced');
    assert.equal(st[CDS].ackedVersion, had.get(CDS));
  });

  test('fleets are isolated; streams are counted per fleet', async () => {
    set({}, 'ns/one');
    set({}, 'ns/two');
    const one = client({ fleet: 'ns/one' });
    const two = client({ fleet: 'ns/two' });
    one.subscribe(CDS, []);
    two.subscribe(CDS, []);
    await one.next(CDS);
    await two.next(CDS);
    assert.equal(await h.metric('convoy_xds_streams', { fleet: 'ns/one', variant: 'sotw' }), 1);
    const mark = two.received;
    set({ clusterTimeout: { 'default/app/80': 9 } }, 'ns/one');
    await one.next(CDS);
    assert.deepEqual((await quiet(two)).length, 0);
    assert.equal(two.received, mark);
    one.close();
    await until(() => h.server.debugState().streams.length === 1, 10_000, 'stream gone');
    assert.equal(await h.metric('convoy_xds_streams', { fleet: 'ns/one', variant: 'sotw' }), 0);
    assert.ok((await h.metric('convoy_xds_pushes_total', { type: 'Cluster' })) >= 3);
  });

  test('a first request without node, or any request without type_url, is refused', async () => {
    set();
    const noNode = client();
    const req = messageType('envoy.service.discovery.v3.DiscoveryRequest');
    noNode.sendRaw(Buffer.from(req.encode(req.fromObject({ type_url: CDS })).finish()));
    assert.equal((await noNode.status).code, status.INVALID_ARGUMENT);
    const noType = client();
    noType.send({ resource_names: [] });
    const st = await noType.status;
    assert.equal(st.code, status.INVALID_ARGUMENT);
    assert.match(st.details, /type_url/);
    const noCluster = client({ fleet: '' });
    noCluster.subscribe(CDS, []);
    assert.equal((await noCluster.status).code, status.INVALID_ARGUMENT);
  });
});
