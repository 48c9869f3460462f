import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LayeredMap } from '../../src/xds/layered-map';
import { rng } from '../support/rng';

describe('LayeredMap (a plain Map with the same changes as the oracle)', () => {
  test('random sets and removals read back as a Map: get, has, size and the same key set', () => {
    const next = rng(99);
    let map: ReadonlyMap<string, number> = new Map(
      Array.from({ length: 400 }, (_, i) => [`k${i}`, i] as const),
    );
    const oracle = new Map(map);
    let layered = 0;
    for (let step = 0; step < 4000; step++) {
      const set: [string, number][] = [];
      const removed: string[] = [];
      for (let n = Math.floor(next() * 4); n > 0; n--) {
        const key = `k${Math.floor(next() * 600)}`;
        if (next() < 0.4) removed.push(key);
        else set.push([key, step * 10 + n]);
      }
      map = LayeredMap.patched(map, set, removed);
      if (map instanceof LayeredMap) layered++;
      for (const key of removed) oracle.delete(key);
      for (const [key, value] of set) oracle.set(key, value);
      assert.equal(map.size, oracle.size, `size at step ${step}`);
      for (let probe = 0; probe < 8; probe++) {
        const key = `k${Math.floor(next() * 600)}`;
        assert.equal(map.get(key), oracle.get(key), `get ${key} at step ${step}`);
        assert.equal(map.has(key), oracle.has(key), `has ${key} at step ${step}`);
      }
      if (step % 50 === 0) {
        assert.deepEqual([...map.entries()].sort(), [...oracle.entries()].sort(), `entries at step ${step}`);
        assert.deepEqual([...map.keys()].sort(), [...oracle.keys()].sort());
        assert.deepEqual([...map.values()].sort(), [...oracle.values()].sort());
        assert.equal([...map].length, oracle.size);
      }
    }
    assert.ok(layered > 2000, `most results were layered (${layered}), some flattened`);
    assert.ok(layered < 4000, 'and some flattened');
  });
});
