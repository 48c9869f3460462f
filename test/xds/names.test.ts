import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NO_NAMES,
  diffNameSets,
  explicitNamesOf,
  internEncodedNames,
  starCount,
  withChanges,
} from '../../src/xds/names';
import type { NameSet } from '../../src/xds/names';
import { lenField } from '../../src/xds/wire';
import { decodeNames } from '../../src/xds/request';

describe('shared name sets', () => {
  test('withChanges: adds then removes, never mutates, shares equal transitions', () => {
    const a = withChanges(NO_NAMES, ['x', 'y', 'x'], []);
    assert.deepEqual([...a], ['x', 'y']);
    assert.equal(NO_NAMES.size, 0);
    assert.equal(withChanges(NO_NAMES, ['x', 'y'], []), a, 'same change from the same set: same object');
    const b = withChanges(a, ['z'], ['x']);
    assert.deepEqual([...b].sort(), ['y', 'z']);
    assert.deepEqual([...a], ['x', 'y']);
    assert.equal(withChanges(a, ['x'], ['nope']), a, 'no effective change: the base itself');
    assert.deepEqual([...withChanges(a, ['w'], ['w'])], ['x', 'y'], 'added then removed in one step');
  });

  test('internEncodedNames: equal bytes give one shared copy and names', () => {
    const raw = Buffer.concat(['a', 'b', '*'].map((n) => lenField(3, n)));
    const one = internEncodedNames(raw.subarray(0), decodeNames);
    const two = internEncodedNames(Buffer.from(raw), decodeNames);
    assert.equal(one, two);
    assert.deepEqual(one.names, ['a', 'b', '*']);
    assert.notEqual(one.raw, raw, 'a copy, not the request buffer');
    assert.deepEqual(one.raw, raw);
  });

  test('explicitNamesOf: `*` is a name only where wildcards are not supported', () => {
    const names = ['a', '*'];
    assert.deepEqual([...explicitNamesOf(names, true)], ['a']);
    assert.deepEqual([...explicitNamesOf(names, false)], ['a', '*']);
    assert.equal(explicitNamesOf(names, true), explicitNamesOf(names, true));
    assert.equal(explicitNamesOf([], true), NO_NAMES);
  });
});

describe('diffNameSets and starCount', () => {
  test('the difference of two sets, in each set order, computed once per pair', () => {
    const a: NameSet = new Set(['x', 'y', 'z']);
    const b: NameSet = new Set(['w', 'y', 'v', 'x']);
    const d = diffNameSets(a, b);
    assert.deepEqual(d, { added: ['w', 'v'], removed: ['z'] });
    assert.equal(diffNameSets(a, b), d, 'memoized per pair');
    assert.deepEqual(diffNameSets(b, a), { added: ['z'], removed: ['w', 'v'] });
    assert.deepEqual(diffNameSets(a, a), { added: [], removed: [] });
    assert.deepEqual(diffNameSets(NO_NAMES, a), { added: ['x', 'y', 'z'], removed: [] });
  });

  test('starCount counts the wildcard entries of a names array', () => {
    assert.equal(starCount(Object.freeze(['a', '*', 'b'])), 1);
    assert.equal(starCount(Object.freeze(['*', '*'])), 2);
    assert.equal(starCount(Object.freeze([])), 0);
  });
});
