import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TypeUrl } from '../../src/envoy/resources';
import { typeStateCounts } from '../../src/xds/debug-state';
import { fleetResources } from '../support/xds-fixtures';
import { Harness, until } from './harness';

type Count = { fleet: string; state: string; count: number };
const sorted = (counts: Count[]) =>
  [...counts].sort((a, b) => `${a.fleet} ${a.state}`.localeCompare(`${b.fleet} ${b.state}`));

describe('AdsServer.typeStateCounts (convoy_xds_type_states at scrape time)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await Harness.start();
  });
  afterEach(async () => {
    await h.stop();
  });

  test('counts what typeStateCounts counts over the whole debug view', async () => {
    assert.ok(h.cache.setFleet('default/gw', fleetResources({ clusters: ['a', 'b'] })).ok);
    const sotw = h.client({ id: 'sotw-1' });
    const delta = h.client({ id: 'delta-1', variant: 'delta' });
    const stranger = h.client({ id: 'stranger', variant: 'delta', fleet: 'default/none' });
    for (const c of [sotw, delta]) {
      c.subscribe(TypeUrl.Cluster, []);
      c.subscribe(TypeUrl.Endpoint, ['a']);
    }
    stranger.subscribe(TypeUrl.Cluster, []);
    await until(
      () => h.server.debugState().streams.filter((s) => Object.keys(s.types).length > 0).length === 3,
      10_000,
      'three streams with requested types',
    );
    const cheap = sorted(h.server.typeStateCounts());
    const full = sorted(typeStateCounts(h.server.debugState()));
    assert.deepEqual(cheap, full);
    assert.ok(
      cheap.some((c) => c.fleet === 'unknown'),
      JSON.stringify(cheap),
    );
    assert.ok(
      cheap.some((c) => c.fleet === 'default/gw'),
      JSON.stringify(cheap),
    );
  });
});
