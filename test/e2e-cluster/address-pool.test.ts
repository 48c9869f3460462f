import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AddressPool } from '../../e2e/cluster/address-pool';

test('AddressPool hands out the lowest free address, skips reserved ones, is idempotent per owner and reuses released ones', () => {
  const pool = new AddressPool('192.0.2.0/24', 1, 254, ['192.0.2.1']);
  assert.equal(pool.allocate('a'), '192.0.2.2');
  assert.equal(pool.allocate('b'), '192.0.2.3');
  assert.equal(pool.allocate('a'), '192.0.2.2');
  pool.release('a');
  assert.equal(pool.addressOf('a'), undefined);
  assert.equal(pool.allocate('c'), '192.0.2.2');
  assert.ok(pool.contains('192.0.2.200'));
  assert.ok(!pool.contains('198.51.100.2'));
});

test('AddressPool refuses a range that is not a /24 and says when it is exhausted', () => {
  assert.throws(() => new AddressPool('192.0.2.0/16'), /IPv4 \/24/);
  assert.throws(() => new AddressPool('198.51.100.0/24', 10, 300), /bad host range/);
  const pool = new AddressPool('198.51.100.0/24', 10, 11);
  pool.allocate('x');
  pool.allocate('y');
  assert.throws(() => pool.allocate('z'), /exhausted/);
});
