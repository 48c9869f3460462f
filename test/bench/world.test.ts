import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { World, SIZES, documentationAddress } from '../../bench/world';

/** Whether `address` lies in one of the three IPv4 documentation ranges. */
function isDocumentationAddress(address: string): boolean {
  return net.isIPv4(address) && /^(192\.0\.2|198\.51\.100|203\.0\.113)\.\d+$/.test(address);
}

describe('bench world addresses', () => {
  test('documentationAddress covers 762 distinct hosts, none a network or broadcast address', () => {
    const seen = new Set<string>();
    for (let n = 0; n < 762; n++) {
      const a = documentationAddress(n);
      assert.ok(isDocumentationAddress(a), a);
      assert.ok(!a.endsWith('.0') && !a.endsWith('.255'), a);
      seen.add(a);
    }
    assert.equal(seen.size, 762);
    assert.equal(documentationAddress(762), documentationAddress(0));
  });

  test('every Service and endpoint of the small world uses documentation addresses, distinct per Service', () => {
    const world = new World({ size: SIZES.small });
    for (let s = 0; s < SIZES.small.services; s++) {
      const svc = world.service(s) as unknown as { spec: { clusterIP: string } };
      assert.ok(isDocumentationAddress(svc.spec.clusterIP));
      const slice = world.endpointSlice(s) as unknown as { endpoints: { addresses: string[] }[] };
      const addresses = slice.endpoints.map((e) => e.addresses[0]!);
      assert.ok(addresses.every(isDocumentationAddress), addresses.join());
      assert.equal(new Set(addresses).size, addresses.length);
    }
  });
});
