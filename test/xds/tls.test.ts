import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { TypeUrl } from '../../src/envoy/resources';
import { createCa, issueCert } from '../../e2e/harness/certs';
import type { CaFiles, CertFiles } from '../../e2e/harness/certs';
import { fleetResources } from '../support/xds-fixtures';
import { Harness } from './harness';

describe('ADS over mTLS', () => {
  let dir: string;
  let ca: CaFiles;
  let serverCert: CertFiles;
  let clientCert: CertFiles;
  let foreign: CertFiles;
  let h: Harness;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-xds-tls-'));
    ca = createCa(path.join(dir, 'ca'));
    serverCert = issueCert(ca, { name: 'server', ipAddresses: ['127.0.0.1'], usage: 'server' });
    clientCert = issueCert(ca, { name: 'envoy', usage: 'client' });
    const otherCa = createCa(path.join(dir, 'other'), 'other-ca');
    foreign = issueCert(otherCa, { name: 'intruder', usage: 'client' });
    h = await Harness.start({
      tls: { cert: Buffer.from(serverCert.cert), key: Buffer.from(serverCert.key), ca: Buffer.from(ca.cert) },
    });
    assert.ok(h.cache.setFleet('default/gw', fleetResources()).ok);
  });

  after(async () => {
    await h.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const creds = (cert?: CertFiles) =>
    grpc.credentials.createSsl(
      Buffer.from(ca.cert),
      cert ? Buffer.from(cert.key) : null,
      cert ? Buffer.from(cert.cert) : null,
    );

  test('a client with a certificate from the CA is served', async () => {
    const c = h.client({ credentials: creds(clientCert) });
    c.subscribe(TypeUrl.Cluster, []);
    assert.deepEqual((await c.next(TypeUrl.Cluster)).names, ['default/app/80']);
  });

  test('a client without a certificate, or with one from another CA, is refused', async () => {
    for (const cert of [undefined, foreign]) {
      const c = h.client({ credentials: creds(cert) });
      c.subscribe(TypeUrl.Cluster, []);
      const st = await c.status;
      assert.equal(st.code, grpc.status.UNAVAILABLE, st.details);
      assert.equal(c.responses.length, 0);
    }
  });
});
