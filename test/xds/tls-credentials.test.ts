import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { CertificateDirectory } from '../../src/pki/certificate-directory';
import { TlsFileWatcher, loadTlsMaterial } from '../../src/xds/tls-credentials';
import type { TlsMaterial } from '../../src/xds/tls-credentials';

/** TLS material is reloaded only as a consistent set; a bad set keeps the one in use. */
describe('TlsFileWatcher', () => {
  let dir: string;
  let certs: CertificateDirectory;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-tlsfiles-'));
    certs = new CertificateDirectory(dir);
    await certs.ensureCa({ create: true });
    await certs.ensureServer([]);
    await certs.ensureGateway('a/b');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('applies a renewed pair, skips a mismatched one, and never logs file contents', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const seen: TlsMaterial[] = [];
    const files = certs.serverFiles();
    const w = new TlsFileWatcher(files, { logger, onChange: (m) => seen.push(m) });
    const first = w.material;
    assert.equal(w.reload(), false, 'unchanged files: nothing to do');

    // A key that belongs to another certificate: refused, the material in use stays.
    const key = fs.readFileSync(files.keyFile);
    fs.copyFileSync(certs.gatewayFiles('a/b').keyFile, files.keyFile);
    assert.equal(w.reload(), false);
    assert.equal(w.material, first);
    assert.equal(seen.length, 0);
    const warning = lines.find((l) => l.includes('TLS files not reloaded'));
    assert.ok(warning);
    assert.match(warning, /is not the key of/);
    assert.ok(!lines.join('').includes('PRIVATE KEY'), 'no key material in the log');
    fs.writeFileSync(files.keyFile, key);

    await certs.ensureServer([], { validityMs: 10 * 86_400_000, forceValidity: true });
    assert.equal(w.reload(), true);
    assert.equal(seen.length, 1);
    assert.notDeepEqual(seen[0]!.cert, first.cert);
  });

  test('loadTlsMaterial names the bad file', () => {
    const files = certs.serverFiles();
    const broken = path.join(dir, 'broken.crt');
    fs.writeFileSync(broken, 'not a certificate');
    assert.throws(
      () => loadTlsMaterial({ ...files, certFile: broken }),
      /broken\.crt: not a PEM certificate/,
    );
    assert.throws(
      () => loadTlsMaterial({ ...files, caFile: broken }),
      /broken\.crt: no certificate in the CA bundle/,
    );
    assert.throws(() => loadTlsMaterial({ ...files, keyFile: path.join(dir, 'missing.key') }), /ENOENT/);
  });
});
