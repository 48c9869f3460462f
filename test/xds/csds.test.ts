import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { decodeMessage, encodeMessage } from '../../src/envoy/protos';
import { TypeUrl } from '../../src/envoy/resources';
import { CertificateDirectory } from '../../src/pki/certificate-directory';
import { fetchClientStatus } from '../../src/cli/xds-client';
import type { XdsClientFlags } from '../../src/cli/xds-client';
import { configDump, proxyStatusReport } from '../../src/xds/csds-view';
import { REDACTED } from '../../src/xds/redact';
import { fleetResources } from '../support/xds-fixtures';
import { Harness, until } from './harness';

/**
 * The Client Status Discovery Service of a real ADS server with real ADS clients, read with the
 * CLI's own client (src/cli/xds-client.ts): per Envoy and resource the status, NACKs with Envoy's
 * message, secrets redacted, node matchers; and who may ask (docs/security.md §2.6).
 */

const LDS = TypeUrl.Listener;
const SDS = TypeUrl.Secret;
const FLEET = 'default/gw';
const NACK =
  "Error adding/updating listener(s) https-8443: cannot bind '0.0.0.0:8443': Address already in use";

for (const variant of ['sotw', 'delta'] as const) {
  describe(`CSDS over plaintext (${variant})`, () => {
    let h: Harness;
    const flags = (): XdsClientFlags => ({ 'xds-address': h.address, 'insecure-plaintext-xds': true });

    beforeEach(async () => {
      h = await Harness.start();
      assert.ok(h.cache.setFleet(FLEET, fleetResources()).ok);
    });
    afterEach(() => h.stop());

    test('an Envoy that NACKs one listener: NACKED with the message; the rest ACKED and SYNCED', async () => {
      const bad = h.client({ id: 'bad', variant, nack: (r) => (r.typeUrl === LDS ? NACK : undefined) });
      const good = h.client({ id: 'good', variant });
      for (const c of [bad, good]) {
        c.subscribe(LDS, []);
        c.subscribe(SDS, ['default/cert']);
      }
      await until(() => h.server.rejections().length > 0, 10_000, 'the NACK');
      await good.waitFor((r) => r.typeUrl === SDS);
      const configs = await fetchClientStatus(flags(), { excludeContents: false }, 'test');
      assert.deepEqual(
        configs.map((c) => [c.node?.cluster, c.node?.id]),
        [
          [FLEET, 'bad'],
          [FLEET, 'good'],
        ],
      );
      const badDump = configDump(configs[0], LDS);
      const byName = new Map(badDump.map((r) => [r.name, r]));
      assert.equal(byName.get('https-8443')?.clientStatus, 'NACKED');
      assert.equal(byName.get('https-8443')?.configStatus, 'ERROR');
      assert.match(byName.get('https-8443')?.error?.message ?? '', /Address already in use/);
      assert.equal(
        byName.get('https-8443')?.resource,
        undefined,
        'a rejected version is not what the Envoy runs',
      );
      assert.equal(
        byName.get('http-8080')?.clientStatus,
        'ACKED',
        'Envoy applied the listener its message does not name',
      );
      assert.equal(byName.get('http-8080')?.resource?.name, 'http-8080');

      const goodAll = configDump(configs[1]);
      assert.ok(
        goodAll.every((r) => r.clientStatus === 'ACKED' && r.configStatus === 'SYNCED'),
        JSON.stringify(goodAll),
      );
      const secret = goodAll.find((r) => r.type === 'SDS')!;
      const text = JSON.stringify(secret.resource);
      assert.ok(!text.includes('KEY-default/cert'), 'the private key never leaves Convoy');
      assert.ok(text.includes(REDACTED) && text.includes('CERT-default/cert'));

      const report = proxyStatusReport(configs);
      assert.deepEqual(
        report.map((g) => [g.gateway, g.envoys.map((e) => [e.node, e.types.LDS.state])]),
        [
          [
            FLEET,
            [
              ['bad', 'rejected'],
              ['good', 'synced'],
            ],
          ],
        ],
      );
      assert.deepEqual(
        report[0].envoys[0].rejected.map((r) => [r.type, r.name]),
        [['LDS', 'https-8443']],
      );
    });

    test('StreamClientStatus answers every request on the stream, in order', async () => {
      h.client({ id: 'one', variant }).subscribe(LDS, []);
      await until(() => h.server.debugState().streams.length === 1, 10_000, 'the stream');
      const client = new grpc.Client(h.address, grpc.credentials.createInsecure());
      const call = client.makeBidiStreamRequest(
        '/envoy.service.status.v3.ClientStatusDiscoveryService/StreamClientStatus',
        (b: Buffer) => b,
        (b: Buffer) => b,
      );
      const answers: string[][] = [];
      const done = new Promise<void>((resolve, reject) => {
        call.on('data', (b: Buffer) => {
          const res = decodeMessage<{ config?: { node?: { id?: string } }[] }>(
            'envoy.service.status.v3.ClientStatusResponse',
            b,
          );
          answers.push((res.config ?? []).map((c) => c.node?.id ?? ''));
          if (answers.length === 2) call.end();
        });
        call.on('end', () => resolve());
        call.on('error', reject);
      });
      const req = (id: string) =>
        encodeMessage('envoy.service.status.v3.ClientStatusRequest', {
          node_matchers: [{ node_id: { exact: id } }],
          exclude_resource_contents: true,
        });
      call.write(req('one'));
      call.write(req('nobody'));
      await done;
      client.close();
      assert.deepEqual(answers, [['one'], []]);
    });

    test('a node matcher selects one Envoy; contents can be left out', async () => {
      for (const id of ['one', 'two']) h.client({ id, variant }).subscribe(LDS, []);
      await until(() => h.server.debugState().streams.length === 2, 10_000, 'two streams');
      const configs = await fetchClientStatus(flags(), { nodeId: 'two', excludeContents: true }, 'test');
      assert.deepEqual(
        configs.map((c) => c.node?.id),
        ['two'],
      );
      assert.ok((configs[0].generic_xds_configs ?? []).every((g) => g.xds_config === undefined));
      assert.deepEqual(
        await fetchClientStatus(flags(), { nodeId: 'three', excludeContents: true }, 'test'),
        [],
      );
    });
  });
}

describe('CSDS over mTLS: only the operator identity may ask', () => {
  let dir: string;
  let certs: CertificateDirectory;
  let h: Harness;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-csds-'));
    certs = new CertificateDirectory(path.join(dir, 'pki'));
    await certs.ensureCa({ create: true });
    await certs.ensureServer([]);
    await certs.ensureGateway(FLEET);
    h = await Harness.start({ tlsFiles: certs.serverFiles() });
    assert.ok(h.cache.setFleet(FLEET, fleetResources()).ok);
  });
  after(async () => {
    await h.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const withFiles = (files: { certFile: string; keyFile: string; caFile: string }): XdsClientFlags => ({
    'xds-address': h.address,
    'insecure-plaintext-xds': false,
    'xds-tls-cert': files.certFile,
    'xds-tls-key': files.keyFile,
    'xds-tls-ca': files.caFile,
  });

  test("a Gateway's client certificate is refused with PERMISSION_DENIED", async () => {
    await assert.rejects(
      fetchClientStatus(withFiles(certs.gatewayFiles(FLEET)), { excludeContents: true }, 'test'),
      /PERMISSION_DENIED: client status is only for the operator identity/,
    );
    assert.equal(await h.metric('convoy_xds_streams_refused_total', { reason: 'permission_denied' }), 1);
  });

  test('the operator certificate from the certificate folder is issued on first use and answered', async () => {
    assert.ok(!fs.existsSync(certs.operatorFiles().certFile));
    const configs = await fetchClientStatus(
      { 'xds-address': h.address, 'insecure-plaintext-xds': false, 'certs-dir': certs.root },
      { excludeContents: true },
      'test',
    );
    assert.deepEqual(configs, []);
    assert.ok(fs.existsSync(certs.operatorFiles().certFile));
  });

  test('the operator certificate is the operator and names no fleet; a Gateway certificate is no operator', async () => {
    const { identityOfCertificate } = await import('../../src/xds/authorization');
    const { X509Certificate } = await import('node:crypto');
    const der = new X509Certificate(fs.readFileSync(certs.operatorFiles().certFile)).raw;
    const id = identityOfCertificate(der);
    assert.equal(id.operator, true);
    assert.deepEqual([...id.fleets!], []);
    const gw = identityOfCertificate(
      new X509Certificate(fs.readFileSync(certs.gatewayFiles(FLEET).certFile)).raw,
    );
    assert.equal(gw.operator, false);
  });
});
