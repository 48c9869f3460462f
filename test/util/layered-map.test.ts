import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LayeredMap, LayeredSet } from '../../src/util/layered-map';
import { rng } from '../support/rng';

/**
 * A LayeredMap behaves as a Map copied before each change (same entries, values, size and
 * iteration order), and every version keeps its contents whatever is derived from it later.
 */
describe('LayeredMap', () => {
  for (const seed of [1, 2, 3, 4]) {
    test(`seed ${seed}: every version equals a copied Map, before and after later changes`, () => {
      const random = rng(seed);
      const initial = new Map<string, number>();
      for (let i = 0; i < 200 * seed; i++) initial.set(`k${i}`, i);
      const versions: { map: LayeredMap<string, number>; expected: Map<string, number> }[] = [
        { map: LayeredMap.adopt(new Map(initial)), expected: new Map(initial) },
      ];
      for (let step = 0; step < 300; step++) {
        // Mostly from the latest version (long chains, whose top maps get merged into their base),
        // sometimes from a random earlier one (branches).
        const from =
          random() < 0.7 ? versions[versions.length - 1] : versions[Math.floor(random() * versions.length)];
        const expected = new Map(from.expected);
        const changes: [string, number][] = [];
        const n = 1 + Math.floor(random() * 8);
        for (let i = 0; i < n; i++) {
          // Existing keys (overwritten in place) and new ones (appended), some set twice.
          const key = random() < 0.5 ? `k${Math.floor(random() * 250 * seed)}` : `n${step}-${i % 3}`;
          const value = Math.floor(random() * 1000);
          changes.push([key, value]);
          expected.set(key, value);
        }
        if (random() < 0.3) {
          // Removals too: of existing keys, of keys just set, of keys absent.
          const gone: string[] = [];
          for (let i = 0; i < 1 + Math.floor(random() * 6); i++)
            gone.push(
              random() < 0.2 ? `absent${i}` : [...expected.keys()][Math.floor(random() * expected.size)],
            );
          for (const key of gone) expected.delete(key);
          versions.push({ map: from.map.with(changes).without(gone), expected });
          continue;
        }
        versions.push({ map: from.map.with(changes), expected });
      }
      for (const [i, { map, expected }] of versions.entries()) {
        assert.equal(map.size, expected.size, `version ${i}`);
        assert.deepEqual([...map], [...expected], `version ${i}`);
        assert.deepEqual([...map.keys()], [...expected.keys()], `version ${i}`);
        assert.deepEqual([...map.values()], [...expected.values()], `version ${i}`);
        for (const [key, value] of expected) {
          assert.equal(map.get(key), value, `version ${i} ${key}`);
          assert.ok(map.has(key), `version ${i} ${key}`);
        }
        assert.equal(map.get('absent'), undefined);
        assert.equal(map.has('absent'), false);
      }
    });
  }

  test('a map handed to adopt is not copied, and with() never changes it', () => {
    const base = new Map([
      ['a', 1],
      ['b', 2],
    ]);
    const map = LayeredMap.adopt(base);
    const next = map.with([
      ['a', 10],
      ['c', 3],
    ]);
    assert.deepEqual(
      [...base],
      [
        ['a', 1],
        ['b', 2],
      ],
    );
    assert.deepEqual(
      [...next],
      [
        ['a', 10],
        ['b', 2],
        ['c', 3],
      ],
    );
    assert.equal(map.with([]), map);
  });

  test('forEach visits entries in order with the map as third argument', () => {
    const map = LayeredMap.adopt(new Map([['x', 1]])).with([['y', 2]]);
    const seen: [string, number][] = [];
    map.forEach((value, key, self) => {
      assert.equal(self, map);
      seen.push([key, value]);
    });
    assert.deepEqual(seen, [
      ['x', 1],
      ['y', 2],
    ]);
  });
});

describe('LayeredSet', () => {
  test('with() adds members to a new set and leaves the old one as it was', () => {
    const a = LayeredSet.of(['x', 'y']);
    const b = a.with(['y', 'z']);
    assert.deepEqual([...a], ['x', 'y']);
    assert.deepEqual([...b], ['x', 'y', 'z']);
    assert.equal(a.size, 2);
    assert.equal(b.size, 3);
    assert.ok(b.has('z') && !a.has('z'));
    assert.equal(b.with([]), b);
  });
});
