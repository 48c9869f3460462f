import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { X509Certificate } from 'node:crypto';
import pino from 'pino';
import { setUpXdsSecurity } from '../../src/cli/xds-security';

/** How `convoy serve`'s xDS security flags resolve (docs/security.md §2). */
describe('convoy serve xDS security flags', () => {
  let dir: string;
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
  const ctx = { logger, xdsAddress: '127.0.0.1:18000' };
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-xdssec-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('default: mTLS from a CA folder created on first use, with the listen host in the certificate', async () => {
    const certsDir = path.join(dir, 'pki');
    const s = await setUpXdsSecurity(
      { 'xds-certs-dir': certsDir, 'xds-server-name': ['convoy.example'] },
      {
        logger,
        xdsAddress: '10.1.2.3:18000',
      },
    );
    try {
      const { certFile, keyFile, caFile } = s.tlsFiles!;
      assert.deepEqual(
        { certFile, keyFile, caFile },
        {
          certFile: path.join(certsDir, 'server', 'tls.crt'),
          keyFile: path.join(certsDir, 'server', 'tls.key'),
          caFile: path.join(certsDir, 'server', 'ca.crt'),
        },
      );
      const san = new X509Certificate(fs.readFileSync(s.tlsFiles!.certFile)).subjectAltName ?? '';
      for (const name of [
        'DNS:localhost',
        'DNS:convoy.example',
        'IP Address:127.0.0.1',
        'IP Address:10.1.2.3',
      ])
        assert.ok(san.includes(name), `${name} in ${san}`);
      assert.deepEqual(s.limits, { maxStreams: 20_000, maxStreamsPerPeer: 1_000 });
      assert.equal(s.unknownFleetTimeoutMs, 60_000);
      assert.ok(lines.some((l) => l.includes('created a new CA')));
    } finally {
      s.stop();
    }
  });

  test('plaintext only by name, with a warning; it excludes the TLS flags', async () => {
    lines.length = 0;
    const s = await setUpXdsSecurity({ 'insecure-plaintext-xds': true }, ctx);
    assert.equal(s.tlsFiles, undefined);
    const warning = JSON.parse(lines.find((l) => l.includes('INSECURE'))!) as { level: number; flag: string };
    assert.equal(warning.level, 40);
    assert.equal(warning.flag, '--insecure-plaintext-xds');
    await assert.rejects(
      setUpXdsSecurity({ 'insecure-plaintext-xds': true, 'xds-tls-cert': 'c' }, ctx),
      /excludes --xds-tls-\*/,
    );
  });

  test('files managed elsewhere: all three or none', async () => {
    const s = await setUpXdsSecurity({ 'xds-tls-cert': '/c', 'xds-tls-key': '/k', 'xds-tls-ca': '/a' }, ctx);
    assert.deepEqual(s.tlsFiles, { certFile: '/c', keyFile: '/k', caFile: '/a' });
    await assert.rejects(setUpXdsSecurity({ 'xds-tls-cert': '/c' }, ctx), /must be given together/);
  });

  test('limits and the timeout are checked', async () => {
    const base = { 'insecure-plaintext-xds': true };
    const s = await setUpXdsSecurity(
      {
        ...base,
        'xds-max-streams': '5',
        'xds-max-streams-per-peer': '2',
        'xds-unknown-fleet-timeout': '1500ms',
      },
      ctx,
    );
    assert.deepEqual(s.limits, { maxStreams: 5, maxStreamsPerPeer: 2 });
    assert.equal(s.unknownFleetTimeoutMs, 1500);
    await assert.rejects(setUpXdsSecurity({ ...base, 'xds-max-streams': '0' }, ctx), /positive integer/);
    await assert.rejects(
      setUpXdsSecurity({ ...base, 'xds-unknown-fleet-timeout': '60' }, ctx),
      /expected a duration/,
    );
  });
});
