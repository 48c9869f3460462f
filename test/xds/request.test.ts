import { test } from 'node:test';
import assert from 'node:assert/strict';
import { messageType } from '../../src/envoy/protos';
import { decodeNames, decodeSotwRequest } from '../../src/xds/request';
import { lenField } from '../../src/xds/wire';

const REQ = messageType('envoy.service.discovery.v3.DiscoveryRequest');

function encode(obj: object): Buffer {
  return Buffer.from(REQ.encode(REQ.fromObject(obj)).finish());
}

test('the SotW request decoder agrees with protobufjs', () => {
  const cases: Record<string, unknown>[] = [
    {},
    { type_url: 't', version_info: 'v1', response_nonce: 'n' },
    { type_url: 't', resource_names: ['a', 'b/c', 'ünïcode', '*', ''] },
    {
      node: { id: 'envoy-1', cluster: 'ns/gw', user_agent_name: 'envoy', user_agent_version: '1.36' },
      type_url: 't',
      resource_names: Array.from({ length: 300 }, (_, i) => `ns/svc-${i}/80`),
      error_detail: { code: 3, message: 'bad route' },
      resource_locators: [{ name: 'x' }],
    },
  ];
  for (const c of cases) {
    const raw = encode(c);
    const mine = decodeSotwRequest(raw);
    const ref = REQ.toObject(REQ.decode(raw), { defaults: true }) as Record<string, unknown>;
    assert.equal(mine.type_url, ref.type_url);
    assert.equal(mine.version_info, ref.version_info);
    assert.equal(mine.response_nonce, ref.response_nonce);
    assert.deepEqual(decodeNames(mine.namesRaw), ref.resource_names);
    assert.equal(mine.nameCount, (ref.resource_names as string[]).length);
    const node = ref.node as Record<string, unknown> | null;
    assert.equal(mine.node?.id, node?.id);
    assert.equal(mine.node?.cluster, node?.cluster);
    const err = ref.error_detail as { code: number; message: string } | null;
    assert.equal(mine.error_detail?.message, err?.message);
    assert.equal(mine.error_detail?.code, err?.code);
  }
});

test('names interleaved with other fields are all kept, in order', () => {
  const raw = Buffer.concat([
    lenField(3, 'a'),
    lenField(4, 'type'),
    lenField(3, 'b'),
    Buffer.from([0x40, 0x01]), // an unknown varint field 8
    lenField(3, 'c'),
  ]);
  const req = decodeSotwRequest(raw);
  assert.deepEqual(decodeNames(req.namesRaw), ['a', 'b', 'c']);
  assert.equal(req.type_url, 'type');
});

test('equal subscriptions have equal raw names; a truncated message is refused', () => {
  const a = decodeSotwRequest(encode({ type_url: 't', resource_names: ['x', 'y'], response_nonce: '1' }));
  const b = decodeSotwRequest(encode({ type_url: 't', resource_names: ['x', 'y'], response_nonce: '2' }));
  const c = decodeSotwRequest(encode({ type_url: 't', resource_names: ['x', 'z'], response_nonce: '2' }));
  assert.ok(a.namesRaw.equals(b.namesRaw));
  assert.ok(!a.namesRaw.equals(c.namesRaw));
  const full = encode({ type_url: 'type', resource_names: ['x'] });
  assert.throws(() => decodeSotwRequest(full.subarray(0, full.length - 1)));
});
