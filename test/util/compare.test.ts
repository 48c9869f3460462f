import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byName, compareStrings } from '../../src/util/compare';

test('compareStrings orders by code unit, not by locale', () => {
  assert.deepEqual(['b', 'a', 'B', 'é', 'z', 'a'].sort(compareStrings), ['B', 'a', 'a', 'b', 'z', 'é']);
  assert.equal(compareStrings('x', 'x'), 0);
  assert.equal(compareStrings('a/b', 'a-b'), 1, "'/' (0x2f) sorts after '-' (0x2d)");
  assert.equal(compareStrings('a-b', 'a/b'), -1);
  assert.equal(compareStrings('', 'a'), -1);
});

test('byName orders by the name field and keeps equal names in input order', () => {
  const items = [
    { name: 'b', i: 0 },
    { name: 'a', i: 1 },
    { name: 'b', i: 2 },
  ];
  assert.deepEqual(
    items.sort(byName).map((x) => x.i),
    [1, 0, 2],
  );
});
