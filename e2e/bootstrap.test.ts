import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { XdsCache } from '../src/xds/cache';
import { AdsServer } from '../src/xds/server';
import type { XdsDebugState } from '../src/xds/debug';
import { buildBootstrap } from '../src/envoy/bootstrap';
import { ConvoyMetrics } from '../src/observability/metrics';
import { silentLogger } from '../src/observability/logger';
import {
  EnvoyProcess,
  convoyMain,
  createCa,
  freePort,
  issueCert,
  request,
  simpleFleet,
  startEchoBackend,
  tempDir,
  waitFor,
} from './harness';
import type { Backend, CaFiles, CertFiles, EchoResponse } from './harness';

/**
 * mTLS between Envoy and Convoy with bootstraps from `convoy bootstrap --xds-tls-*`: a CA, a
 * server certificate for the ADS server and client certificates for Envoy, made with openssl.
 * An Envoy with the right client certificate gets config; one without a certificate, or with a
 * certificate from another CA, never gets a stream.
 */

const FLEET = 'tls/gw';

describe('mTLS between Envoy and the ADS server', () => {
  let tmp: { dir: string; cleanup: () => void };
  let ca: CaFiles;
  let client: CertFiles;
  let backend: Backend;
  let server: AdsServer;
  let xdsPort: number;
  let listenerPort: number;
  const envoys: EnvoyProcess[] = [];

  const debug = () => server.debugState() as XdsDebugState;

  before(async () => {
    tmp = tempDir('xds-mtls');
    ca = createCa(path.join(tmp.dir, 'pki'), 'convoy-ca');
    const serving = issueCert(ca, {
      name: 'convoy-xds',
      dnsNames: ['localhost', 'convoy.convoy-system.svc'],
      ipAddresses: ['127.0.0.1'],
      usage: 'server',
    });
    client = issueCert(ca, { name: 'envoy-client', usage: 'client' });
    backend = await startEchoBackend('tls-backend');
    xdsPort = await freePort();
    listenerPort = await freePort();

    const logger = silentLogger();
    const metrics = new ConvoyMetrics();
    const cache = new XdsCache({ logger, metrics });
    const set = cache.setFleet(
      FLEET,
      simpleFleet({
        listenerPort,
        routes: [{ prefix: '/', cluster: 'backend' }],
        backends: { backend: backend.port },
      }),
    );
    assert.ok(set.ok);
    server = new AdsServer({
      cache,
      logger,
      metrics,
      tls: { cert: Buffer.from(serving.cert), key: Buffer.from(serving.key), ca: Buffer.from(ca.cert) },
    });
    assert.equal(await server.listen(`127.0.0.1:${xdsPort}`), xdsPort);
  });

  after(async () => {
    for (const e of envoys) await e.stop();
    await server?.stop(0);
    await backend?.close();
    tmp?.cleanup();
  });

  async function startEnvoy(name: string, yamlText: string): Promise<EnvoyProcess> {
    const file = path.join(tmp.dir, `${name}.yaml`);
    fs.writeFileSync(file, yamlText);
    const envoy = await EnvoyProcess.start({ configPath: file, name, workDir: path.join(tmp.dir, name) });
    envoys.push(envoy);
    return envoy;
  }

  /** Waits until the Envoy has tried to reach the control plane a few times. */
  async function assertNeverConnects(envoy: EnvoyProcess, nodeId: string): Promise<void> {
    await waitFor(async () => (await envoy.counter('cluster.convoy_xds.upstream_cx_total')) >= 3, {
      what: `${nodeId} to attempt three connections`,
      timeoutMs: 30_000,
      context: () => envoy.logContext(),
    });
    assert.equal(await envoy.counter('control_plane.connected_state'), 0, 'never connected');
    assert.notEqual(await envoy.serverState(), 'LIVE', 'stays initializing without config');
    assert.equal(
      debug().streams.find((s) => s.nodeId === nodeId),
      undefined,
      'the server never saw an ADS stream from it',
    );
  }

  test('an Envoy with a client certificate from the CA connects and serves traffic', async () => {
    const r = childProcess.spawnSync(
      process.execPath,
      [
        convoyMain(),
        'bootstrap',
        // A host name: STRICT_DNS, SNI "localhost" and a DNS SAN check on Convoy's certificate.
        '--xds-address',
        `localhost:${xdsPort}`,
        '--gateway',
        FLEET,
        '--node-id',
        'tls-good',
        '--admin-address',
        '127.0.0.1:0',
        '--xds-tls-cert',
        client.certFile,
        '--xds-tls-key',
        client.keyFile,
        '--xds-tls-ca',
        ca.certFile,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    const envoy = await startEnvoy('tls-good', r.stdout);
    await envoy.waitLive();
    const echo = await waitFor(
      async () => {
        const res = await request({ port: listenerPort, path: '/over-mtls' });
        return res.status === 200 ? res.json<EchoResponse>() : undefined;
      },
      { what: 'traffic through the mTLS-configured Envoy', context: () => envoy.logContext() },
    );
    assert.equal(echo.backend, 'tls-backend');
    assert.equal(echo.path, '/over-mtls');
    const stream = debug().streams.find((s) => s.nodeId === 'tls-good');
    assert.ok(stream, 'stream reported');
    assert.equal(stream.fleet, FLEET);
    assert.ok((await envoy.counter('cluster.convoy_xds.ssl.handshake')) >= 1, 'the xDS connection used TLS');
  });

  /** A TLS bootstrap with the given client certificate (or none), trusting `trust`. */
  function tlsBootstrap(nodeId: string, clientCert: CertFiles | undefined, trust: CaFiles): string {
    const b = buildBootstrap({
      xdsAddress: `127.0.0.1:${xdsPort}`,
      gateway: FLEET,
      nodeId,
      adminAddress: '127.0.0.1:0',
      sotw: true,
      tls: {
        certFile: clientCert?.certFile ?? client.certFile,
        keyFile: clientCert?.keyFile ?? client.keyFile,
        caFile: trust.certFile,
      },
    });
    if (!clientCert) {
      // Same bootstrap, minus the client certificate.
      const cluster = (b.static_resources as { clusters: Array<Record<string, any>> }).clusters[0]; // eslint-disable-line @typescript-eslint/no-explicit-any
      delete cluster.transport_socket.typed_config.common_tls_context.tls_certificates;
    }
    return stringify(b);
  }

  test('an Envoy without a client certificate cannot connect', async () => {
    const envoy = await startEnvoy('tls-nocert', tlsBootstrap('tls-nocert', undefined, ca));
    await assertNeverConnects(envoy, 'tls-nocert');
  });

  test('an Envoy with a certificate from another CA cannot connect', async () => {
    const other = createCa(path.join(tmp.dir, 'other-pki'), 'other-ca');
    const stranger = issueCert(other, { name: 'stranger', usage: 'client' });
    const envoy = await startEnvoy('tls-stranger', tlsBootstrap('tls-stranger', stranger, ca));
    await assertNeverConnects(envoy, 'tls-stranger');
  });

  test('an Envoy that does not trust the server certificate refuses to connect', async () => {
    const other = createCa(path.join(tmp.dir, 'untrusted-pki'), 'untrusted-ca');
    const envoy = await startEnvoy('tls-distrust', tlsBootstrap('tls-distrust', client, other));
    await assertNeverConnects(envoy, 'tls-distrust');
    assert.ok(
      (await envoy.counter('cluster.convoy_xds.ssl.fail_verify_error')) >= 1,
      'Envoy failed verification',
    );
  });
});
