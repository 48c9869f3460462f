import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { TypeUrl } from '../../src/envoy/resources';
import { CertificateDirectory } from '../../src/pki/certificate-directory';
import type { LeafFiles } from '../../src/pki/certificate-directory';
import { issueLeafCertificate } from '../../src/pki/x509-issuer';
import { fleetResources } from '../support/xds-fixtures';
import type { AdsClient } from '../support/ads-client';
import { Harness, sleep } from './harness';

/**
 * The ADS server over mTLS with certificates from Convoy's own CA (CertificateDirectory):
 * a client certificate names the Gateways whose fleets it may receive (docs/security.md §2).
 */

const A = 'team-a/web';
const B = 'team-b/other';
const CDS = TypeUrl.Cluster;
const SDS = TypeUrl.Secret;

interface Pem {
  cert: Buffer;
  key: Buffer;
}

function read(files: LeafFiles): Pem {
  return { cert: fs.readFileSync(files.certFile), key: fs.readFileSync(files.keyFile) };
}

describe('ADS over mTLS: a certificate receives only the fleets it names', () => {
  let dir: string;
  let certs: CertificateDirectory;
  let caPem: Buffer;
  let h: Harness;
  let certA: Pem;
  let certAB: Pem;
  let rogue: Pem;
  let serverAsClient: Pem;
  let foreign: Pem;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-xds-authz-'));
    certs = new CertificateDirectory(path.join(dir, 'pki'));
    await certs.ensureCa({ create: true });
    await certs.ensureServer([]);
    certA = read((await certs.ensureGateway(A)).files);
    caPem = fs.readFileSync(certs.caCertFile);
    const ca = { certPem: caPem.toString(), keyPem: fs.readFileSync(certs.caKeyFile, 'utf8') };
    const pem = (p: { certPem: string; keyPem: string }) => ({
      cert: Buffer.from(p.certPem),
      key: Buffer.from(p.keyPem),
    });
    certAB = pem(
      await issueLeafCertificate(ca, {
        commonName: 'both',
        usage: 'client',
        uris: [`spiffe://convoy/gateway/${A}`, `spiffe://convoy/gateway/${B}`],
        validityMs: 3_600_000,
      }),
    );
    rogue = pem(
      await issueLeafCertificate(ca, { commonName: 'rogue', usage: 'client', validityMs: 3_600_000 }),
    );
    serverAsClient = read(certs.serverFiles());
    const other = new CertificateDirectory(path.join(dir, 'other'));
    await other.ensureCa({ create: true });
    foreign = read((await other.ensureGateway(A)).files);

    h = await Harness.start({ tlsFiles: certs.serverFiles() });
    assert.ok(h.cache.setFleet(A, fleetResources({ cert: 'A-CERT-BYTES' })).ok);
    assert.ok(h.cache.setFleet(B, fleetResources({ cert: 'B-CERT-BYTES' })).ok);
  });

  after(async () => {
    await h.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const creds = (cert?: Pem, ca: Buffer = caPem) =>
    grpc.credentials.createSsl(ca, cert?.key ?? null, cert?.cert ?? null);

  function connect(cert: Pem | undefined, fleet: string, variant: 'sotw' | 'delta'): AdsClient {
    const c = h.client({ credentials: creds(cert), fleet, variant });
    if (variant === 'sotw') {
      c.subscribe(CDS, []);
      c.subscribe(SDS, ['default/cert']);
    } else {
      c.deltaSubscribe(CDS, []);
      c.deltaSubscribe(SDS, ['default/cert']);
    }
    return c;
  }

  /** The stream's final status; fails the test instead of hanging when the server keeps it open. */
  function ended(c: AdsClient, timeoutMs = 15_000): Promise<grpc.StatusObject> {
    return Promise.race([
      c.status,
      sleep(timeoutMs).then(() => {
        throw new Error(`the stream was still open after ${timeoutMs} ms (${c.responses.length} responses)`);
      }),
    ]);
  }

  /** No response ever carried fleet B's certificate bytes or any private key. */
  function assertNothingOf(c: AdsClient, marker: string): void {
    for (const r of c.responses) {
      assert.ok(!r.raw.includes(marker), `response ${r.typeUrl} carries ${marker}`);
      assert.ok(!r.raw.includes('PRIVATE KEY'), `response ${r.typeUrl} carries a private key`);
    }
  }

  for (const variant of ['sotw', 'delta'] as const) {
    test(`${variant}: Gateway A's certificate receives fleet A, including its Secret`, async () => {
      const c = connect(certA, A, variant);
      assert.deepEqual((await c.next(CDS)).names, ['default/app/80']);
      const sds = await c.next(SDS);
      assert.deepEqual(sds.names, ['default/cert']);
      assert.ok(sds.raw.includes('A-CERT-BYTES'));
      c.close();
    });

    test(`${variant}: Gateway A's certificate asking for fleet B gets PERMISSION_DENIED and no byte of B`, async () => {
      const denied = await h.metric('convoy_xds_streams_refused_total', { reason: 'permission_denied' });
      const c = connect(certA, B, variant);
      const st = await ended(c);
      assert.equal(st.code, grpc.status.PERMISSION_DENIED, st.details);
      assert.match(st.details, /does not allow fleet "team-b\/other"/);
      assert.equal(c.responses.length, 0);
      assertNothingOf(c, 'B-CERT-BYTES');
      assert.equal(
        await h.metric('convoy_xds_streams_refused_total', { reason: 'permission_denied' }),
        denied + 1,
      );
    });
  }

  test('a CA-signed certificate without a Gateway identity (CN=rogue) gets nothing', async () => {
    for (const fleet of [A, B]) {
      const c = connect(rogue, fleet, 'sotw');
      const st = await ended(c);
      assert.equal(st.code, grpc.status.PERMISSION_DENIED, st.details);
      assert.equal(c.responses.length, 0);
    }
  });

  test("Convoy's own serving certificate used as a client certificate gets nothing", async () => {
    const c = connect(serverAsClient, A, 'sotw');
    const st = await ended(c);
    // Refused by the TLS layer (wrong key usage) or by the authorizer (no client identity).
    assert.ok(
      st.code === grpc.status.PERMISSION_DENIED || st.code === grpc.status.UNAVAILABLE,
      `${st.code} ${st.details}`,
    );
    assert.equal(c.responses.length, 0);
  });

  test('a certificate naming two Gateways receives both fleets', async () => {
    for (const fleet of [A, B]) {
      const c = connect(certAB, fleet, 'delta');
      assert.deepEqual((await c.next(CDS)).names, ['default/app/80']);
      c.close();
    }
  });

  test('no client certificate, or one from another CA, fails the handshake', async () => {
    for (const cert of [undefined, foreign]) {
      const c = connect(cert, A, 'sotw');
      const st = await ended(c);
      assert.equal(st.code, grpc.status.UNAVAILABLE, st.details);
      assert.equal(c.responses.length, 0);
    }
  });

  test('a renewed serving certificate is used for new connections without a restart', async () => {
    const served = () =>
      new Promise<string>((resolve, reject) => {
        const socket = tls.connect({
          host: '127.0.0.1',
          port: Number(h.address.split(':')[1]),
          ca: caPem,
          cert: certA.cert,
          key: certA.key,
          ALPNProtocols: ['h2'],
          servername: 'localhost',
        });
        socket.once('secureConnect', () => {
          const serial = socket.getPeerCertificate().serialNumber;
          socket.destroy();
          resolve(serial);
        });
        socket.once('error', reject);
      });
    const before = await served();
    const open = connect(certA, A, 'delta');
    await open.next(CDS);
    const renewed = await certs.ensureServer([], { validityMs: 30 * 86_400_000, forceValidity: true });
    assert.equal(renewed.action, 'renewed');
    const after = renewed.info.serialNumber.toUpperCase();
    assert.notEqual(before.toUpperCase(), after);
    // Polled (new connections until one presents it): the reload follows a file-system event.
    const deadline = Date.now() + 20_000;
    let seen = before;
    while (seen.toUpperCase() !== after) {
      assert.ok(Date.now() < deadline, 'the server presents the renewed certificate within 20 s');
      await sleep(50);
      seen = await served();
    }
    assert.equal(open.isEnded, false, 'the open stream is untouched');
    open.close();
  });
});
