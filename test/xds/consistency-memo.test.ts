import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkConsistency } from '../../src/xds/consistency';
import { fleetResources } from '../support/xds-fixtures';

describe('checkConsistency with memoize', () => {
  test('same errors as without, on first and repeated checks, and names are re-checked each time', () => {
    const res = fleetResources();
    assert.deepEqual(checkConsistency(res, { memoize: true }), checkConsistency(res));
    const withoutSecrets = { ...res, secrets: [] };
    const plain = checkConsistency(withoutSecrets);
    assert.ok(plain.errors.length > 0, 'removing the secrets breaks references');
    assert.deepEqual(checkConsistency(withoutSecrets, { memoize: true }), plain);
    assert.deepEqual(checkConsistency(withoutSecrets, { memoize: true }), plain);
    assert.deepEqual(checkConsistency(res, { memoize: true }).errors, []);
  });
});
