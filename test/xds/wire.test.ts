import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as protobuf from 'protobufjs';
import { messageType } from '../../src/envoy/protos';
import { encodeDeltaBody, encodeSotwBody } from '../../src/xds/encode';
import { TypeUrl } from '../../src/envoy/resources';
import { contentHash } from '../../src/xds/snapshot';
import type { CacheEntry } from '../../src/xds/snapshot';
import {
  ChunkedBody,
  SplicedMessage,
  lenField,
  lenFieldSize,
  lenHeader,
  nonceTrailer,
  varintSize,
  writeLenHeader,
  writeVarint,
} from '../../src/xds/wire';
import { XdsCache } from '../../src/xds/cache';
import { SendBudget } from '../../src/xds/budget';
import { silentLogger } from '../../src/observability/logger';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { fleetResources } from '../support/xds-fixtures';
import { scanResponse } from '../support/ads-client';

const RESP = messageType('envoy.service.discovery.v3.DiscoveryResponse');
const DELTA_RESP = messageType('envoy.service.discovery.v3.DeltaDiscoveryResponse');

function entries(count: number): CacheEntry[] {
  const cache = new XdsCache({ logger: silentLogger(), metrics: new ConvoyMetrics() });
  const names = Array.from({ length: count }, (_, i) => `ns/svc-${i}/80`);
  const res = count
    ? fleetResources({ clusters: names, https: false })
    : { listeners: [], routes: [], clusters: [], endpoints: [], secrets: [] };
  assert.ok(cache.setFleet('f', res).ok);
  return [...cache.snapshot('f')!.types[TypeUrl.Cluster].sorted];
}

describe('wire encoding', () => {
  test('varints round-trip at the 7-bit boundaries', () => {
    for (const n of [0, 1, 127, 128, 16383, 16384, 2 ** 21, 2 ** 28 - 1, 2 ** 31, 2 ** 35]) {
      const buf = Buffer.alloc(10);
      const end = writeVarint(buf, 0, n);
      assert.equal(end, varintSize(n));
      const r = protobuf.Reader.create(buf.subarray(0, end));
      assert.equal(Number(r.uint64()), n);
    }
  });

  test('length-delimited headers match protobufjs at the varint boundaries, in place or as a Buffer', () => {
    for (const field of [1, 15, 16, 2047, 2048])
      for (const length of [0, 1, 127, 128, 16383, 16384, 2 ** 21]) {
        const w = protobuf.Writer.create();
        w.uint32((field << 3) | 2).uint32(length);
        const want = Buffer.from(w.finish());
        assert.deepEqual(lenHeader(field, length), want, `field ${field} length ${length}`);
        const buf = Buffer.alloc(want.length + 3, 0xee);
        assert.equal(writeLenHeader(buf, 3, field, length), 3 + want.length);
        assert.deepEqual(buf.subarray(3), want);
        assert.equal(lenFieldSize(field, length), want.length + length);
      }
    assert.equal(lenField(4, 'abc').length, lenFieldSize(4, 3));
  });

  test('SotW body + spliced nonce is byte-identical to protobufjs encoding the response with the nonce', () => {
    for (const count of [0, 1, 3, 200]) {
      const list = entries(count);
      assert.equal(list.length, count);
      const body = encodeSotwBody(TypeUrl.Cluster, 'v-' + count, list);
      for (const nonce of ['1', 'zz', 'x'.repeat(200)]) {
        const spliced = new SplicedMessage(body, nonceTrailer(nonce));
        const expected = Buffer.from(
          RESP.encode(
            RESP.fromObject({
              version_info: 'v-' + count,
              resources: list.map((e) => ({ type_url: TypeUrl.Cluster, value: e.bytes })),
              type_url: TypeUrl.Cluster,
              nonce,
            }),
          ).finish(),
        );
        assert.deepEqual(spliced.toBuffer(), expected);
        // What grpc-js does with the serializer's result: byteLength, then copy() into its frame.
        const frame = Buffer.alloc(spliced.byteLength + 5);
        spliced.copy(frame, 5);
        assert.deepEqual(frame.subarray(5), expected);
      }
    }
  });

  test('delta body decodes to the same message (nonce written last)', () => {
    const list = entries(3);
    const body = encodeDeltaBody(TypeUrl.Cluster, 'sys', list, ['gone/a', 'gone/b']);
    const raw = new SplicedMessage(body, nonceTrailer('7')).toBuffer();
    const msg = DELTA_RESP.toObject(DELTA_RESP.decode(raw), { defaults: false }) as Record<string, unknown>;
    assert.equal(msg.system_version_info, 'sys');
    assert.equal(msg.type_url, TypeUrl.Cluster);
    assert.equal(msg.nonce, '7');
    assert.deepEqual(msg.removed_resources, ['gone/a', 'gone/b']);
    const resources = msg.resources as {
      name: string;
      version: string;
      resource: { type_url: string; value: Buffer };
    }[];
    assert.deepEqual(
      resources.map((r) => [
        r.name,
        r.version,
        r.resource.type_url,
        Buffer.from(r.resource.value).equals(list.find((e) => e.name === r.name)!.bytes),
      ]),
      list.map((e) => [e.name, e.version, TypeUrl.Cluster, true]),
    );
    // Without removed resources the field order matches protobufjs exactly.
    const plain = new SplicedMessage(
      encodeDeltaBody(TypeUrl.Cluster, 'sys', list, []),
      nonceTrailer('8'),
    ).toBuffer();
    const expected = Buffer.from(
      DELTA_RESP.encode(
        DELTA_RESP.fromObject({
          system_version_info: 'sys',
          resources: list.map((e) => ({
            name: e.name,
            version: e.version,
            resource: { type_url: TypeUrl.Cluster, value: e.bytes },
          })),
          type_url: TypeUrl.Cluster,
          nonce: '8',
        }),
      ).finish(),
    );
    assert.deepEqual(plain, expected);
  });

  test('a large body references its large entries and is byte-identical to protobufjs (SotW and delta)', () => {
    // Entries of arbitrary bytes: a 2 MiB one (a Listener of thousands of chains), some above the
    // shared-part size, many small ones, in an order that mixes them.
    let seed = 5;
    const r = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const sizes = [2 * 1024 * 1024, 70_000, 10, 65_536, 65_535, 300_000, 1, 0, 5_000];
    for (let i = 0; i < 40; i++) sizes.push(Math.floor(r() * 3000));
    const list: CacheEntry[] = sizes.map((size, i) => {
      const bytes = Buffer.alloc(size);
      for (let b = 0; b < size; b += 97) bytes[b] = (b + i) & 0xff;
      return { name: `l-${String(i).padStart(3, '0')}`, version: contentHash(bytes), bytes };
    });
    const sotw = encodeSotwBody(TypeUrl.Listener, 'v-big', list);
    const delta = encodeDeltaBody(TypeUrl.Listener, 'sys-big', list, []);
    assert.ok(sotw instanceof ChunkedBody && delta instanceof ChunkedBody, 'the chunked path is taken');
    // The large entries are referenced, not copied.
    assert.ok(sotw.parts.includes(list[0].bytes) && delta.parts.includes(list[5].bytes));
    const expectedSotw = Buffer.from(
      RESP.encode(
        RESP.fromObject({
          version_info: 'v-big',
          resources: list.map((e) => ({ type_url: TypeUrl.Listener, value: e.bytes })),
          type_url: TypeUrl.Listener,
          nonce: 'n1',
        }),
      ).finish(),
    );
    const expectedDelta = Buffer.from(
      DELTA_RESP.encode(
        DELTA_RESP.fromObject({
          system_version_info: 'sys-big',
          resources: list.map((e) => ({
            name: e.name,
            version: e.version,
            resource: { type_url: TypeUrl.Listener, value: e.bytes },
          })),
          type_url: TypeUrl.Listener,
          nonce: 'n2',
        }),
      ).finish(),
    );
    for (const [body, nonce, expected] of [
      [sotw, 'n1', expectedSotw],
      [delta, 'n2', expectedDelta],
    ] as const) {
      const spliced = new SplicedMessage(body, nonceTrailer(nonce));
      assert.equal(spliced.byteLength, expected.length);
      assert.ok(spliced.toBuffer().equals(expected));
      // What grpc-js does: copy() into its frame after the 5-byte header.
      const frame = Buffer.alloc(spliced.byteLength + 5, 0xee);
      assert.equal(spliced.copy(frame, 5), expected.length);
      assert.ok(frame.subarray(5).equals(expected));
      assert.equal(frame[4], 0xee);
    }
  });

  test('the test client scans envelopes without decoding', () => {
    const list = entries(2);
    const sotwRaw = new SplicedMessage(
      encodeSotwBody(TypeUrl.Cluster, 'v1', list),
      nonceTrailer('n'),
    ).toBuffer();
    assert.deepEqual(scanResponse(sotwRaw, 'sotw'), {
      typeUrl: TypeUrl.Cluster,
      version: 'v1',
      nonce: 'n',
      names: list.map((e) => e.name),
      versions: {},
      removed: [],
    });
    const deltaRaw = new SplicedMessage(
      encodeDeltaBody(TypeUrl.Cluster, 'v2', list, ['x']),
      nonceTrailer('m'),
    ).toBuffer();
    assert.deepEqual(scanResponse(deltaRaw, 'delta'), {
      typeUrl: TypeUrl.Cluster,
      version: 'v2',
      nonce: 'm',
      names: list.map((e) => e.name),
      versions: Object.fromEntries(list.map((e) => [e.name, e.version])),
      removed: ['x'],
    });
  });

  test('content hashes are stable strings', () => {
    assert.equal(contentHash(Buffer.from('abc')), contentHash('abc'));
    assert.equal(contentHash('abc'), 'ungWv48Bz-pBQUDeXa4iIw');
    assert.notEqual(contentHash('abc'), contentHash('abd'));
  });
});

/**
 * Returns a maker of budget waiters: each asks `budget` for its bytes when pumped and, once
 * granted, records its name in `resumed`, so a test reads the order streams were let through.
 */
function waiterOf(
  budget: SendBudget,
  resumed: string[],
): (name: string, bytes: number) => { pump: () => void } {
  return (name, bytes) => {
    const w = {
      pump: () => {
        if (budget.tryAcquire(bytes, w)) resumed.push(name);
      },
    };
    return w;
  };
}

describe('SendBudget', () => {
  test('queues waiters beyond the limit and resumes them in order as bytes are released', () => {
    const budget = new SendBudget(100);
    const resumed: string[] = [];
    const waiter = waiterOf(budget, resumed);
    const a = waiter('a', 60);
    const b = waiter('b', 60);
    const c = waiter('c', 30);
    a.pump();
    b.pump();
    c.pump();
    assert.deepEqual(resumed, ['a', 'c']);
    assert.equal(budget.waiting, 1);
    budget.release(60);
    assert.deepEqual(resumed, ['a', 'c', 'b']);
    assert.equal(budget.inflightBytes, 90);
    // A message larger than the whole budget still goes when nothing else is in flight.
    const big = waiter('big', 500);
    big.pump();
    assert.equal(budget.waiting, 1);
    budget.release(90);
    assert.deepEqual(resumed, ['a', 'c', 'b', 'big']);
    assert.equal(budget.waiting, 0);
  });

  test('hands over at most one turn of bytes per event-loop turn, and resumes the rest in order the next turn', async () => {
    const budget = new SendBudget(1000, 100);
    const resumed: string[] = [];
    const waiter = waiterOf(budget, resumed);
    const waiters = [waiter('a', 60), waiter('b', 60), waiter('c', 60), waiter('d', 300)];
    for (const w of waiters) w.pump();
    assert.deepEqual(resumed, ['a'], 'b would take this turn past 100 bytes');
    assert.equal(budget.waiting, 3);
    // Releasing bytes within the same turn does not let more through: the turn is the limit.
    budget.release(60);
    assert.deepEqual(resumed, ['a']);
    await new Promise((r) => setImmediate(r));
    // Next turn: b (60) fits, c would pass 100; a response larger than a turn goes alone.
    assert.deepEqual(resumed, ['a', 'b']);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(resumed, ['a', 'b', 'c']);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(resumed, ['a', 'b', 'c', 'd']);
    assert.equal(budget.waiting, 0);
  });

  test('a small response passes a full turn, ahead of the large ones waiting for the next', async () => {
    // Turn 1,600 bytes: responses up to 100 bytes are small.
    const budget = new SendBudget(100_000, 1600);
    const resumed: string[] = [];
    const waiter = waiterOf(budget, resumed);
    const large = ['a', 'b', 'c'].map((n) => waiter(n, 1590));
    for (const w of large) w.pump();
    assert.deepEqual(resumed, ['a']);
    // A stream whose Envoy read its Listener now asks for its route configuration: not behind b, c.
    waiter('small', 100).pump();
    assert.deepEqual(resumed, ['a', 'small']);
    // One byte more is not small: it waits for its turn after the others.
    waiter('medium', 101).pump();
    assert.deepEqual(resumed, ['a', 'small']);
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(resumed, ['a', 'small', 'b', 'c', 'medium']);
    assert.equal(budget.waiting, 0);
  });

  test('small responses may exceed a full byte limit by the overdraft, no further', () => {
    // The server's sizes: a 32 MiB limit (overdraft 1 MiB), held whole by one response.
    const MiB = 1024 * 1024;
    const budget = new SendBudget(32 * MiB, 4 * MiB);
    const resumed: string[] = [];
    const waiter = waiterOf(budget, resumed);
    waiter('large', 32 * MiB).pump();
    waiter('next-large', 70 * 1024).pump();
    assert.deepEqual(resumed, ['large'], 'a large response waits for the limit');
    const smalls = Array.from({ length: 17 }, (_, i) => waiter(`s${i}`, 64 * 1024));
    for (const w of smalls) w.pump();
    // 16 × 64 KiB fill the 1 MiB overdraft; the 17th waits.
    assert.equal(resumed.length, 1 + 16);
    assert.equal(budget.waiting, 2);
  });

  test('a resumed waiter that has nothing to send leaves the queue without stopping the others', async () => {
    const budget = new SendBudget(100, 1000);
    const resumed: string[] = [];
    let bSends = true;
    const waiter = (name: string, bytes: number, wants: () => boolean) => {
      const w = {
        pump: () => {
          if (wants() && budget.tryAcquire(bytes, w)) resumed.push(name);
        },
      };
      return w;
    };
    const a = waiter('a', 100, () => true);
    const b = waiter('b', 50, () => bSends);
    const c = waiter('c', 50, () => true);
    a.pump();
    b.pump();
    c.pump();
    assert.equal(budget.waiting, 2);
    bSends = false; // b's stream closed meanwhile
    budget.release(100);
    assert.deepEqual(resumed, ['a', 'c']);
    assert.equal(budget.waiting, 0);
  });
});
