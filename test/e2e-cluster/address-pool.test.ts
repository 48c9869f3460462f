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

test('AddressPool.claim gives a requested free address in its range and refuses others', () => {
  const pool = new AddressPool('198.51.100.0/24', 10, 254);
  assert.equal(pool.allocate('a'), '198.51.100.10');
  assert.equal(pool.claim('b', '198.51.100.200'), '198.51.100.200');
  assert.equal(pool.claim('b', '198.51.100.200'), '198.51.100.200', 'idempotent for its holder');
  assert.equal(pool.claim('c', '198.51.100.200'), undefined, 'held by another owner');
  assert.equal(pool.claim('c', '198.51.100.5'), undefined, 'below the host range');
  assert.equal(pool.claim('c', '203.0.113.200'), undefined, 'outside the /24');
  assert.equal(pool.claim('c', '198.51.100.2000'), undefined, 'not an address');
  assert.equal(pool.addressOf('c'), undefined);
  assert.equal(pool.claim('a', '198.51.100.11'), '198.51.100.11', 'moves its holder');
  assert.equal(pool.allocate('d'), '198.51.100.10', 'the old address is free again');
});
