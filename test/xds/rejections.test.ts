import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TypeUrl } from '../../src/envoy/resources';
import { NACK_MESSAGE_LIMIT, attributeNack, namedParts } from '../../src/xds/nack-attribution';
import { aggregateRejections, sameRejections } from '../../src/xds/rejections';
import type { FleetRejections, StreamRejection } from '../../src/xds/rejections';
import type { AdsClient, AdsResponse } from '../support/ads-client';
import { fleetResources } from '../support/xds-fixtures';
import type { FleetSpec } from '../support/xds-fixtures';
import { Harness, quiet, until } from './harness';

const LDS = TypeUrl.Listener;
const RDS = TypeUrl.Route;
const FLEET = 'default/gw';
const BIND_ERROR = "cannot bind '0.0.0.0:8443': Address already in use";
/** What Envoy's LDS says when one listener of a response cannot be added. */
const LDS_NACK = `Error adding/updating listener(s) https-8443: ${BIND_ERROR}\n`;

describe('NACK attribution', () => {
  const v = (name: string, version = `v-${name}`) => ({ name, version });

  test('LDS: the listener Envoy names is rejected with its own part of the message, the others were applied', () => {
    const r = attributeNack(LDS_NACK, [v('http-8080'), v('https-8443')]);
    assert.deepEqual(r, {
      rejected: [{ name: 'https-8443', version: 'v-https-8443', message: BIND_ERROR }],
      accepted: ['http-8080'],
    });
  });

  test('LDS with several failing listeners: one line each', () => {
    const message =
      "Error adding/updating listener(s) http-80: cannot bind '0.0.0.0:80': Permission denied\n" +
      'tls-9443: duplicate listener tls-9443 found\n';
    const r = attributeNack(message, [v('http-80'), v('tls-9443'), v('https-8443')]);
    assert.deepEqual(
      r.rejected.map((x) => [x.name, x.message]),
      [
        ['http-80', "cannot bind '0.0.0.0:80': Permission denied"],
        ['tls-9443', 'duplicate listener tls-9443 found'],
      ],
    );
    assert.deepEqual(r.accepted, ['https-8443']);
  });

  test('CDS: clusters joined by commas, a comma inside a reason stays in that reason', () => {
    const message = 'Error adding/updating cluster(s) team-a/web/80: bad thing, team-b/api/8080: one, two';
    const r = attributeNack(message, [v('team-a/web/80'), v('team-b/api/8080'), v('team-c/db/5432')]);
    assert.deepEqual(
      r.rejected.map((x) => [x.name, x.message]),
      [
        ['team-a/web/80', 'bad thing'],
        ['team-b/api/8080', 'one, two'],
      ],
    );
    assert.deepEqual(r.accepted, ['team-c/db/5432']);
  });

  test('a name is only found whole: http-80 is not named by a message about http-8080', () => {
    const r = attributeNack('Error adding/updating listener(s) http-8080: boom\n', [
      v('http-80'),
      v('http-8080'),
    ]);
    assert.deepEqual(
      r.rejected.map((x) => x.name),
      ['http-8080'],
    );
    assert.deepEqual(r.accepted, ['http-80']);
    assert.deepEqual([...namedParts('xhttp-80: boom', ['http-80']).keys()], []);
  });

  test('a message naming no candidate (RDS, SDS) rejects every candidate with the whole message, on one line', () => {
    const message = "Invalid regex '/[a-z]{1000}':\n  pattern too large - compile failed";
    const r = attributeNack(message, [v('https-8443/a.example.com'), v('http-8080')]);
    assert.deepEqual(
      r.rejected.map((x) => [x.name, x.message]),
      [
        ['https-8443/a.example.com', "Invalid regex '/[a-z]{1000}': pattern too large - compile failed"],
        ['http-8080', "Invalid regex '/[a-z]{1000}': pattern too large - compile failed"],
      ],
    );
    assert.deepEqual(r.accepted, []);
  });

  test("the response's own version of a candidate wins over an earlier rejected one", () => {
    const r = attributeNack('boom', [v('a', 'new'), v('a', 'old')]);
    assert.deepEqual(r.rejected, [{ name: 'a', version: 'new', message: 'boom' }]);
  });

  test('a huge message is kept short', () => {
    const r = attributeNack(`https-8443: ${'x'.repeat(100_000)}`, [v('https-8443')]);
    assert.equal(r.rejected[0].message.length, NACK_MESSAGE_LIMIT);
    assert.ok(r.rejected[0].message.endsWith('…'));
  });
});

describe('fleet aggregation', () => {
  const rej = (version: string, message: string, time: number): StreamRejection => ({
    version,
    message,
    time,
  });
  const stream = (
    nodeId: string,
    rejected: Record<string, Record<string, StreamRejection>>,
    interested = (_t: string, _n: string) => true,
  ) => ({
    nodeId,
    rejected: new Map(Object.entries(rejected).map(([t, names]) => [t, new Map(Object.entries(names))])),
    interested,
  });

  test('counts distinct Envoys, keeps the latest message, and drops what is gone or no longer wanted', () => {
    const view = aggregateRejections(
      FLEET,
      [
        stream('a', {
          [LDS]: { 'https-8443': rej('v1', 'first', 1) },
          [RDS]: { 'http-8080': rej('r1', 'bad', 1) },
        }),
        // The same Envoy on a second stream (a reconnect not yet noticed) counts once.
        stream('a', { [LDS]: { 'https-8443': rej('v1', 'first', 1) } }),
        stream('b', { [LDS]: { 'https-8443': rej('v2', 'second', 2), gone: rej('g', 'x', 1) } }),
        stream('c', { [RDS]: { 'https-8443/x': rej('r2', 'bad', 1) } }, () => false),
        stream('d', {}),
      ],
      (_t, name) => name !== 'gone',
    );
    assert.deepEqual(view, {
      fleet: FLEET,
      envoys: 4,
      resources: [
        { typeUrl: LDS, name: 'https-8443', version: 'v2', nodes: ['a', 'b'], message: 'second' },
        { typeUrl: RDS, name: 'http-8080', version: 'r1', nodes: ['a'], message: 'bad' },
      ],
    });
  });

  test('Envoys coming and going in a fleet that rejects nothing is no change', () => {
    const empty = (envoys: number): FleetRejections => ({ fleet: FLEET, envoys, resources: [] });
    assert.ok(sameRejections(undefined, empty(3)));
    assert.ok(sameRejections(empty(1), empty(3)));
    const one = (envoys: number): FleetRejections => ({
      fleet: FLEET,
      envoys,
      resources: [{ typeUrl: LDS, name: 'l', version: 'v', nodes: ['a'], message: 'm' }],
    });
    assert.ok(sameRejections(one(2), one(2)));
    assert.ok(!sameRejections(one(2), one(3)), 'the "N of M" changes');
    assert.ok(!sameRejections(undefined, one(2)));
    assert.ok(!sameRejections(one(2), empty(2)));
  });
});

for (const variant of ['sotw', 'delta'] as const) {
  describe(`rejections of real ADS streams (${variant})`, () => {
    let h: Harness;
    let n = 0;
    const views: FleetRejections[] = [];
    const ids = new WeakMap<AdsClient, string>();
    const client = (name: string, nack?: (r: AdsResponse) => string | undefined): AdsClient => {
      const id = `${name}-${++n}`;
      const c = h.client({ id, variant, nack });
      ids.set(c, id);
      return c;
    };
    const set = (spec: FleetSpec = {}) => assert.ok(h.cache.setFleet(FLEET, fleetResources(spec)).ok);
    const current = () => h.server.rejections().find((v) => v.fleet === FLEET);
    const names = () =>
      current()?.resources.map((r) => `${r.typeUrl === LDS ? 'LDS' : 'RDS'} ${r.name}`) ?? [];

    beforeEach(async () => {
      h = await Harness.start();
      views.length = 0;
      h.server.onRejectionsChange((v) => views.push(v));
      set();
    });
    afterEach(() => h.stop());

    test('a listener one Envoy cannot bind is rejected by 1 of 2; a reoffer it accepts clears it', async () => {
      let reject = true;
      const bad = client('bad', (r) =>
        reject && r.typeUrl === LDS && r.names.includes('https-8443') ? LDS_NACK : undefined,
      );
      const good = client('good');
      for (const c of [bad, good]) c.subscribe(LDS, []);
      await until(() => current() !== undefined, 10_000, 'the rejection view');
      const view = current()!;
      assert.equal(view.envoys, 2);
      assert.deepEqual(view.resources, [
        {
          typeUrl: LDS,
          name: 'https-8443',
          version: h.cache.snapshot(FLEET)!.types[LDS].entries.get('https-8443')!.version,
          nodes: [ids.get(bad)!],
          message: BIND_ERROR,
        },
      ]);
      assert.deepEqual(views.at(-1), view, 'subscribers got the same view');
      assert.equal(await h.metric('convoy_xds_nacks_total', { type: 'Listener', fleet: FLEET }), 1);

      // The port is free again: offering the same listener again lets the Envoy take it.
      reject = false;
      const mark = bad.received;
      const goodMark = good.received;
      h.server.reoffer(FLEET, [{ typeUrl: LDS, name: 'https-8443' }]);
      const again = await bad.waitFor((r) => r.typeUrl === LDS, { since: mark });
      assert.ok(again.names.includes('https-8443'));
      if (variant === 'delta')
        assert.deepEqual(again.names, ['https-8443'], 'delta resends only that listener');
      await until(() => current() === undefined, 10_000, 'the rejection to clear');
      assert.deepEqual(views.at(-1)?.resources, [], 'subscribers were told it cleared');
      assert.deepEqual(
        (await quiet(good)).filter((r) => r.seq >= goodMark),
        [],
        'an Envoy that accepted is not sent anything',
      );
    });

    test('a rejection goes when its Envoy disconnects, and with the resource', async () => {
      const bad = client('bad', (r) =>
        r.typeUrl === LDS && r.names.includes('https-8443') ? LDS_NACK : undefined,
      );
      bad.subscribe(LDS, []);
      await until(() => names().length === 1, 10_000, 'the rejection');
      bad.close();
      await until(() => current() === undefined, 10_000, 'the disconnect to clear it');

      const again = client('again', (r) =>
        r.typeUrl === LDS && r.names.includes('https-8443') ? LDS_NACK : undefined,
      );
      again.subscribe(LDS, []);
      await until(() => names().length === 1, 10_000, 'the new rejection');
      set({ https: false });
      await until(() => current() === undefined, 10_000, 'the removal to clear it');
    });

    test('RDS names nothing: the route configurations of the response are rejected until a newer one is accepted', async () => {
      let reject = true;
      const c = client('rds', (r) => (reject && r.typeUrl === RDS ? 'Invalid regex: too large' : undefined));
      c.subscribe(LDS, []);
      c.subscribe(RDS, ['http-8080', 'https-8443']);
      await until(() => names().length === 2, 10_000, 'both route configurations rejected');
      assert.deepEqual(names(), ['RDS http-8080', 'RDS https-8443']);
      assert.ok(current()!.resources.every((r) => r.message === 'Invalid regex: too large'));
      // A fix of http-8080 alone: accepted, so only https-8443 stays rejected.
      reject = false;
      set({ routePrefix: '/fixed' });
      await until(() => names().length === 1, 10_000, 'http-8080 accepted');
      assert.deepEqual(names(), ['RDS https-8443']);
    });
  });
}
