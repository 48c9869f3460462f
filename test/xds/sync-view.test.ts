import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { formatAge, normaliseXdsDebug, renderProxyStatus, renderXdsDebugText } from '../../src/xds/sync-view';
import { TypeUrl } from '../../src/envoy/resources';

const now = Date.parse('2026-01-01T00:10:00Z');

describe('proxy-status rendering of /debug/xds', () => {
  test('derives Istio-style states from nonces when the server reports no state', () => {
    const rows = normaliseXdsDebug({
      streams: [
        {
          node: { id: 'gw-b', cluster: 'infra/gw' },
          delta: false,
          types: {
            [TypeUrl.Cluster]: {
              lastSentNonce: '3',
              lastAckedNonce: '3',
              lastSentVersion: 'v1',
              lastAckAt: '2026-01-01T00:09:55Z',
            },
            [TypeUrl.Listener]: { lastSentNonce: '4', lastAckedNonce: '2', lastSentVersion: 'v2' },
            [TypeUrl.Route]: {},
            [TypeUrl.Endpoint]: {
              lastSentNonce: '5',
              lastSentVersion: 'v9',
              lastAckedVersion: 'v8',
              lastNack: { nonce: '5', message: 'bad\n regex', at: '2026-01-01T00:07:00Z' },
            },
          },
        },
      ],
    });
    assert.equal(rows.length, 1);
    const byType = Object.fromEntries(rows[0].types.map((t) => [t.type, t]));
    assert.equal(rows[0].node, 'gw-b');
    assert.equal(rows[0].fleet, 'infra/gw');
    assert.equal(rows[0].variant, 'sotw');
    assert.equal(byType.CDS.state, 'SYNCED');
    assert.equal(byType.LDS.state, 'STALE');
    assert.equal(byType.RDS.state, 'NOT SENT');
    assert.equal(byType.EDS.state, 'NACKED');
    assert.equal(byType.EDS.error, 'bad\n regex');

    const text = renderProxyStatus(rows, now);
    const lines = text.split('\n');
    assert.match(lines[0], /^NODE\s+FLEET\s+VARIANT\s+CDS\s+EDS\s+LDS\s+RDS$/);
    assert.match(lines[1], /^gw-b\s+infra\/gw\s+sotw\s+SYNCED \(5s\)\s+NACKED \(3m\)\s+STALE\s+NOT SENT$/);
    assert.match(text, /Rejected \(NACK\):\n {2}gw-b \[infra\/gw\] EDS version v9 \(keeps v8\): bad regex\n/);
  });

  test('reads the AdsServer debug shape (sent/ackedTime/lastNack, held streams)', () => {
    const state = {
      time: '2026-01-01T00:10:00Z',
      streams: [
        {
          id: 1,
          nodeId: 'edge-1',
          fleet: 'infra/gw',
          variant: 'delta',
          connectedSince: '2026-01-01T00:00:00Z',
          peer: 'ipv4:127.0.0.1:5000',
          held: false,
          userAgent: 'envoy',
          types: {
            [TypeUrl.Cluster]: {
              state: 'synced',
              wildcard: true,
              subscribed: [],
              sent: {
                version: 'c1',
                nonce: '1',
                time: '2026-01-01T00:00:01Z',
                resources: 1,
                removed: 0,
                bytes: 10,
              },
              ackedVersion: 'c1',
              ackedTime: '2026-01-01T00:09:30Z',
            },
            [TypeUrl.Route]: {
              state: 'nacked',
              wildcard: false,
              subscribed: ['http-8080'],
              sent: {
                version: 'r2',
                nonce: '4',
                time: '2026-01-01T00:09:00Z',
                resources: 1,
                removed: 0,
                bytes: 10,
              },
              ackedVersion: 'r1',
              lastNack: {
                version: 'r2',
                nonce: '4',
                message: 'invalid regex',
                acceptedVersion: 'r1',
                time: '2026-01-01T00:09:50Z',
              },
            },
            [TypeUrl.Listener]: { state: 'not_sent', wildcard: true, subscribed: [] },
            [TypeUrl.Endpoint]: {
              state: 'stale',
              wildcard: false,
              subscribed: ['a', 'b'],
              sent: {
                version: 'e1',
                nonce: '3',
                time: '2026-01-01T00:08:00Z',
                resources: 2,
                removed: 0,
                bytes: 10,
              },
            },
          },
        },
        { id: 2, nodeId: 'edge-2', fleet: 'infra/gw', variant: 'sotw', held: true, types: {} },
        { id: 3, nodeId: 'edge-3', fleet: 'infra/gw', variant: 'delta', stalled: true, types: {} },
      ],
      fleets: [],
    };
    const rows = normaliseXdsDebug(state);
    assert.deepEqual(
      rows.map((r) => [r.node, r.variant, r.held ?? false, r.stalled ?? false]),
      [
        ['edge-1', 'delta', false, false],
        ['edge-2', 'sotw', true, false],
        ['edge-3', 'delta', false, true],
      ],
    );
    const t = Object.fromEntries(rows[0].types.map((x) => [x.type, x]));
    assert.deepEqual(t.CDS, {
      type: 'CDS',
      state: 'SYNCED',
      sentVersion: 'c1',
      ackedVersion: 'c1',
      since: '2026-01-01T00:09:30Z',
      subscribed: 0,
    });
    assert.equal(t.RDS.state, 'NACKED');
    assert.equal(t.RDS.sentVersion, 'r2');
    assert.equal(t.RDS.ackedVersion, 'r1');
    assert.equal(t.RDS.error, 'invalid regex');
    assert.equal(t.LDS.state, 'NOT SENT');
    assert.equal(t.EDS.state, 'STALE');
    assert.equal(t.EDS.subscribed, 2);
    const text = renderProxyStatus(rows, now);
    assert.match(
      text,
      /edge-1\s+infra\/gw\s+delta\s+SYNCED \(30s\)\s+STALE \(2m\)\s+NOT SENT\s+NACKED \(10s\)/,
    );
    assert.match(text, /edge-2\s+infra\/gw\s+sotw \(held: no snapshot\)/);
    assert.match(text, /edge-3\s+infra\/gw\s+delta \(stalled: not reading\)/);
    assert.match(text, /edge-1 \[infra\/gw\] RDS version r2 \(keeps r1\): invalid regex/);
  });

  test('a NACK superseded by a newer send is no longer NACKED', () => {
    const [row] = normaliseXdsDebug([
      {
        nodeId: 'n',
        fleet: 'f',
        types: [
          {
            typeUrl: TypeUrl.Route,
            lastSentNonce: '7',
            lastAckedNonce: '7',
            lastNack: { nonce: '5', message: 'x' },
          },
        ],
      },
    ]);
    assert.equal(row.types[0].state, 'SYNCED');
  });

  test('uses the server state when given, sorted by fleet then node', () => {
    const rows = normaliseXdsDebug({
      proxies: {
        z: { fleet: 'b/gw', variant: 'delta', types: { lds: { state: 'acked' } } },
        a: { fleet: 'a/gw', variant: 'delta', types: { lds: { state: 'error', error: 'nope' } } },
      },
    });
    assert.deepEqual(
      rows.map((r) => [r.node, r.fleet, r.types[0].type, r.types[0].state, r.types[0].error]),
      [
        ['a', 'a/gw', 'LDS', 'NACKED', 'nope'],
        ['z', 'b/gw', 'LDS', 'SYNCED', undefined],
      ],
    );
  });

  test('nothing connected, garbage input, ages', () => {
    assert.equal(renderXdsDebugText({ streams: [] }), 'No Envoy is connected.\n');
    assert.equal(renderXdsDebugText(42), 'No Envoy is connected.\n');
    assert.equal(formatAge(now - 59_000, now), '59s');
    assert.equal(formatAge(now - 600_000, now), '10m');
    assert.equal(formatAge(now - 3 * 3600_000, now), '3h');
    assert.equal(formatAge(now - 3 * 86400_000, now), '3d');
    assert.equal(formatAge('not a date', now), undefined);
  });
});
