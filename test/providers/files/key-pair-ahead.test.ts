import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { secretToModel } from '../../../src/gateway/certificates';
import { decodeBase64 } from '../../../src/gateway/secret-key-pair';
import { checkKeyPair } from '../../../src/pki/keypair';
import { rememberWorkAhead, scanFile } from '../../../src/providers/files/scan';
import type { FileScan } from '../../../src/providers/files/scan';
import type { KubeObject } from '../../../src/store/objects';
import { tlsSecret } from '../../support/objects';
import { LEAF_CERT, LEAF_KEY, SELF_KEY } from '../../support/certs';

const limits = { maxFileBytes: 1024 * 1024, maxObjectBytes: 1024 * 1024 };

/** Scans one file holding `objects` as a YAML stream; returns its scan. */
async function scanObjects(dir: string, name: string, objects: KubeObject[]): Promise<FileScan> {
  const path = join(dir, name);
  await writeFile(path, objects.map((o) => stringify(o)).join('---\n'));
  const result = await scanFile({ path, file: name, limits });
  assert.equal(result.status, 'scanned');
  if (result.status !== 'scanned') throw new Error('not scanned');
  return result.scan;
}

describe('key-pair checks made while scanning (docs/architecture.md §10.4)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convoy-keypair-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('each TLS Secret carries the check the build would make; other objects carry none', async () => {
    const scan = await scanObjects(dir, 'secrets.yaml', [
      tlsSecret('good', { namespace: 'certs' }),
      tlsSecret('mismatched', { namespace: 'certs', cert: LEAF_CERT, key: SELF_KEY }),
      tlsSecret('opaque', { namespace: 'certs', cert: LEAF_CERT, key: LEAF_KEY, type: 'Opaque' }),
    ]);
    assert.equal(scan.entries.length, 3);
    const [good, mismatched, opaque] = scan.entries;
    for (const entry of [good, mismatched]) {
      assert.equal(entry.admission.kind, 'ok');
      if (entry.admission.kind !== 'ok') continue;
      const data = entry.admission.object.data as Record<string, string>;
      const expected = checkKeyPair(decodeBase64(data['tls.crt'])!, decodeBase64(data['tls.key'])!);
      assert.deepEqual(entry.keyPair, expected);
    }
    assert.equal(good.keyPair?.ok, true);
    assert.equal(mismatched.keyPair?.ok, false);
    assert.equal(opaque.keyPair, undefined);
  });

  test('the build uses a remembered check instead of checking again', async () => {
    const scan = await scanObjects(dir, 'one.yaml', [tlsSecret('web', { namespace: 'certs' })]);
    const [entry] = scan.entries;
    assert.equal(entry.admission.kind, 'ok');
    if (entry.admission.kind !== 'ok') return;
    const secret = entry.admission.object;
    assert.equal(secretToModel(secret, 'certs').ok, true, 'the pair itself is valid');
    // A check that differs from the real one shows which of the two the build used.
    entry.keyPair = { ok: false, error: 'remembered refusal' };
    rememberWorkAhead(scan);
    const res = secretToModel(secret, 'certs');
    assert.equal(res.ok, false);
    if (!res.ok) assert.match(res.message, /remembered refusal/);
    // Another object with the same content is checked on its own.
    assert.equal(secretToModel(structuredClone(secret), 'certs').ok, true);
  });
});
