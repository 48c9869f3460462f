import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { deepEqual } from '../../src/util/deep-equal';

describe('deepEqual', () => {
  test('plain data, key order ignored, arrays ordered', () => {
    assert.ok(deepEqual({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 }));
    assert.ok(!deepEqual([1, 2], [2, 1]));
    assert.ok(!deepEqual({ a: 1 }, { a: 1, b: undefined }));
    assert.ok(!deepEqual({ a: [] }, { a: {} }));
    assert.ok(!deepEqual(null, {}));
    assert.ok(deepEqual(undefined, undefined));
  });

  test('the ignored key is skipped at any depth but must be present on both sides', () => {
    const a = { t: 1, list: [{ t: 'x', v: 1 }] };
    assert.ok(deepEqual(a, { t: 2, list: [{ t: 'y', v: 1 }] }, 't'));
    assert.ok(!deepEqual(a, { t: 2, list: [{ t: 'y', v: 1 }] }));
    assert.ok(!deepEqual(a, { t: 2, list: [{ t: 'y', v: 2 }] }, 't'));
    assert.ok(!deepEqual(a, { list: [{ t: 'y', v: 1 }], u: 1 }, 't'));
  });
});
