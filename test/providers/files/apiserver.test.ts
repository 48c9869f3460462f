import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_OBJECT_BYTES, admitEntry, storedSize } from '../../../src/providers/files/apiserver';
import { parseFile } from '../../../src/providers/files/parse';

const secret = (dataBytes: number, name = 'big') => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'team' },
  type: 'Opaque',
  data: { blob: Buffer.alloc(dataBytes, 7).toString('base64') },
});

describe('admitEntry: the per-object size limit', () => {
  test('a 10 MB Secret is "Too long" as Kubernetes says, keyed so its last good version stays', () => {
    const a = admitEntry({ document: 3, value: secret(10 * 1024 * 1024) });
    assert.equal(a.kind, 'refused');
    if (a.kind !== 'refused') return;
    assert.match(a.message, /^Too long: may not be more than 1048576 bytes \(the object is \d+ bytes\)$/);
    assert.equal(a.key, 'Secret/team/big');
    assert.equal(a.objectKind, 'Secret');
    assert.equal(a.name, 'big');
    assert.equal(MAX_OBJECT_BYTES, 1024 * 1024);
  });

  test('Secret data counts as the bytes it decodes to, so 900 KiB of data is accepted', () => {
    const s = secret(900 * 1024);
    assert.ok(JSON.stringify(s).length > MAX_OBJECT_BYTES, 'the base64 text alone is over 1 MiB');
    assert.equal(admitEntry({ value: s }).kind, 'ok');
  });

  test('kinds Convoy does not read are ignored whatever their size', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: { a: 'x'.repeat(5e6) } };
    assert.equal(admitEntry({ value: pod }).kind, 'ignored');
  });

  test('values shared through YAML aliases count every time they appear', () => {
    const big = JSON.stringify('x'.repeat(20_000));
    const text =
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations:\n    a: &big ${big}\n` +
      Array.from({ length: 60 }, (_, i) => `    b${i}: *big\n`).join('');
    const parsed = parseFile('s.yaml', text);
    assert.deepEqual(parsed.errors, []);
    const a = admitEntry(parsed.entries[0]);
    assert.equal(a.kind, 'refused');
    assert.match(a.kind === 'refused' ? a.message : '', /^Too long/);
  });

  test('in a List, the message names the item', () => {
    const a = admitEntry({ document: 0, item: 2, value: secret(2 * 1024 * 1024) });
    assert.match(a.kind === 'refused' ? a.message : '', /^items\[2\]: Too long/);
  });
});

describe('storedSize', () => {
  test('counts like JSON text and stops past the cap', () => {
    const o = {
      kind: 'Service',
      metadata: { name: 'a', labels: { x: 'y' } },
      spec: { ports: [{ port: 80 }] },
    };
    const json = JSON.stringify(o).length;
    const size = storedSize(o, 1e9);
    assert.ok(Math.abs(size - json) <= json * 0.2, `${size} vs ${json}`);
    const shared = Array(1000).fill('x'.repeat(1000));
    assert.ok(storedSize({ kind: 'Service', shared }, 10_000) <= 10_000 + 1100);
  });
});
