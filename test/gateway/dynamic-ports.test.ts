import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { assignDynamicPorts, parsePortPool, preferredSlot } from '../../src/gateway/dynamic-ports';

const POOL = { first: 30000, last: 30009 };
const id = (n: number) => `XListenerSet/default/set-${n}/l`;

describe('assignDynamicPorts', () => {
  test('a listener gets the port its identity hashes to when it is free', () => {
    const [port] = assignDynamicPorts([{ identity: id(1) }], new Set(), POOL);
    assert.equal(port, POOL.first + preferredSlot(id(1), 10));
  });

  test('the same requests give the same ports, whatever else is computed in between', () => {
    const requests = Array.from({ length: 7 }, (_, i) => ({ identity: id(i) }));
    const a = assignDynamicPorts(requests, new Set([30003]), POOL);
    assignDynamicPorts([{ identity: 'other' }], new Set(), POOL);
    const b = assignDynamicPorts(requests, new Set([30003]), POOL);
    assert.deepEqual(a, b);
  });

  test('collisions probe upwards: every listener gets a distinct free port, never a taken one', () => {
    const requests = Array.from({ length: 8 }, (_, i) => ({ identity: id(i) }));
    const taken = new Set([30000, 30005]);
    const ports = assignDynamicPorts(requests, taken, POOL);
    assert.equal(new Set(ports).size, 8);
    for (const p of ports) {
      assert.ok(p !== undefined && p >= POOL.first && p <= POOL.last);
      assert.ok(!taken.has(p));
    }
    // Find two identities hashing to the same slot: the later one gets the next free port.
    const slots = new Map<number, number>();
    let pair: [number, number] | undefined;
    for (let i = 0; i < 100 && !pair; i++) {
      const s = preferredSlot(id(i), 10);
      const j = slots.get(s);
      if (j !== undefined) pair = [j, i];
      else slots.set(s, i);
    }
    assert.ok(pair);
    const [first, second] = assignDynamicPorts(
      [{ identity: id(pair[0]) }, { identity: id(pair[1]) }],
      new Set(),
      POOL,
    );
    const slot = preferredSlot(id(pair[0]), 10);
    assert.equal(first, POOL.first + slot);
    assert.equal(second, POOL.first + ((slot + 1) % 10));
  });

  test('a recorded port is kept even when an earlier listener hashes to it', () => {
    const slot = preferredSlot(id(1), 10);
    const recordedByOther = POOL.first + slot;
    const [p1, p2] = assignDynamicPorts(
      [{ identity: id(1) }, { identity: id(2), recorded: recordedByOther }],
      new Set(),
      POOL,
    );
    assert.equal(p2, recordedByOther);
    assert.notEqual(p1, recordedByOther);
  });

  test('a recorded port outside the pool or taken by a declared port is not kept', () => {
    const [a] = assignDynamicPorts([{ identity: id(1), recorded: 8443 }], new Set(), POOL);
    assert.ok(a !== undefined && a >= POOL.first);
    const [b] = assignDynamicPorts([{ identity: id(1), recorded: 30004 }], new Set([30004]), POOL);
    assert.notEqual(b, 30004);
  });

  test('an exhausted pool, or no pool, gives no port', () => {
    const small = { first: 30000, last: 30002 };
    const ports = assignDynamicPorts(
      Array.from({ length: 4 }, (_, i) => ({ identity: id(i) })),
      new Set([30001]),
      small,
    );
    assert.equal(ports.filter((p) => p !== undefined).length, 2);
    assert.equal(ports[3], undefined);
    assert.deepEqual(assignDynamicPorts([{ identity: id(1) }], new Set(), undefined), [undefined]);
  });
});

describe('parsePortPool', () => {
  test('parses FIRST-LAST and refuses everything else', () => {
    assert.deepEqual(parsePortPool('30000-30999'), { first: 30000, last: 30999 });
    assert.deepEqual(parsePortPool('8080-8080'), { first: 8080, last: 8080 });
    for (const bad of ['', '30000', '0-10', '10-70000', '300-200', 'a-b', '1-2-3'])
      assert.throws(() => parsePortPool(bad), /FIRST-LAST|within|exceed/, bad);
  });
});
