import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { XdsCache } from '../src/xds/cache';
import { AdsServer } from '../src/xds/server';
import type { XdsDebugState } from '../src/xds/debug-state';
import { buildBootstrap, renderXdsSdsFiles } from '../src/envoy/bootstrap';
import type { BootstrapOptions, BootstrapTlsOptions } from '../src/envoy/bootstrap';
import { ConvoyMetrics } from '../src/observability/metrics';
import { silentLogger } from '../src/observability/logger';
import {
  ConvoyProcess,
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
 * server certificate for the ADS server and client certificates for Envoy, made with openssl
 * (the client certificate names the Gateway: spiffe://convoy/gateway/NS/NAME). An Envoy with
 * the right client certificate gets config; one without a certificate, or with a certificate
 * from another CA, never gets a stream.
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
    client = issueCert(ca, {
      name: 'envoy-client',
      usage: 'client',
      uris: [`spiffe://convoy/gateway/${FLEET}`],
    });
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
    const file = path.join(tmp.dir, 'tls-good.yaml');
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
        '--out',
        file,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    const envoy = await startEnvoy('tls-good', fs.readFileSync(file, 'utf8'));
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
    const b: BootstrapOptions & { tls: BootstrapTlsOptions } = {
      xdsAddress: `127.0.0.1:${xdsPort}`,
      gateway: FLEET,
      nodeId,
      adminAddress: '127.0.0.1:0',
      sotw: true,
      tls: {
        certFile: clientCert?.certFile ?? client.certFile,
        keyFile: clientCert?.keyFile ?? client.keyFile,
        caFile: trust.certFile,
        sdsDir: tmp.dir,
        sdsPrefix: `${nodeId}.`,
      },
    };
    for (const [name, text] of Object.entries(renderXdsSdsFiles(b.tls)))
      fs.writeFileSync(path.join(tmp.dir, name), text);
    const bootstrap = buildBootstrap(b);
    if (!clientCert) {
      // Same bootstrap, minus the client certificate.
      const cluster = (bootstrap.static_resources as { clusters: Array<Record<string, any>> }).clusters[0]; // eslint-disable-line @typescript-eslint/no-explicit-any
      delete cluster.transport_socket.typed_config.common_tls_context.tls_certificate_sds_secret_configs;
    }
    return stringify(bootstrap);
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

/**
 * The operator path end to end: `convoy serve --from-dir`, `convoy bootstrap` for an Envoy of the
 * Gateway, then the read-only CLI views (`convoy status`, `convoy proxy-status`) and the admin
 * endpoints against the real running process.
 */
describe('operator CLI against a running convoy serve and Envoy', () => {
  let tmp: { dir: string; cleanup: () => void };
  let objectsDir: string;
  let backend: Backend;
  let convoy: ConvoyProcess;
  let envoy: EnvoyProcess;
  let listenerPort: number;

  const cli = (args: string[]) => {
    const r = childProcess.spawnSync(process.execPath, [convoyMain(), ...args], { encoding: 'utf8' });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  function writeObjects(backendService: string): void {
    const docs = [
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'GatewayClass',
        metadata: { name: 'convoy' },
        spec: { controllerName: 'convoy.dev/gateway-controller' },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'ops', namespace: 'default' },
        spec: {
          gatewayClassName: 'convoy',
          listeners: [{ name: 'http', protocol: 'HTTP', port: listenerPort }],
        },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          parentRefs: [{ name: 'ops', sectionName: 'http' }],
          rules: [{ backendRefs: [{ name: backendService, port: 80 }] }],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'default' },
        spec: { ports: [{ name: 'http', port: 80, targetPort: backend.port }] },
      },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: backend.port }],
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      },
    ];
    const file = path.join(objectsDir, 'objects.yaml');
    fs.writeFileSync(`${file}.tmp`, docs.map((d) => stringify(d)).join('---\n'));
    fs.renameSync(`${file}.tmp`, file);
  }

  before(async () => {
    tmp = tempDir('ops-cli');
    objectsDir = path.join(tmp.dir, 'objects');
    fs.mkdirSync(objectsDir);
    backend = await startEchoBackend('web');
    listenerPort = await freePort();
    writeObjects('web');
    convoy = await ConvoyProcess.start({
      args: ['--from-dir', objectsDir, '--envoy-bind-address', '127.0.0.1'],
      workDir: path.join(tmp.dir, 'convoy'),
    });
    const bootstrap = path.join(tmp.dir, 'bootstrap.yaml');
    const r = cli([
      'bootstrap',
      '--xds-address',
      convoy.xdsAddress,
      '--gateway',
      'default/ops',
      '--node-id',
      'ops-envoy',
      '--admin-address',
      '127.0.0.1:0',
      '--certs-dir',
      convoy.certsDir!,
      '--out',
      bootstrap,
    ]);
    assert.equal(r.code, 0, r.stderr);
    envoy = await EnvoyProcess.start({
      configPath: bootstrap,
      name: 'ops-envoy',
      workDir: path.join(tmp.dir, 'envoy'),
    });
  });

  after(async () => {
    await envoy?.stop();
    await convoy?.dispose();
    await backend?.close();
    tmp?.cleanup();
  });

  test('traffic flows and the admin endpoints answer', async () => {
    await envoy.waitLive();
    const echo = await waitFor(
      async () => {
        const res = await request({ port: listenerPort, path: '/ops' });
        return res.status === 200 ? res.json<EchoResponse>() : undefined;
      },
      { what: 'traffic through Envoy', context: () => `${envoy.logContext()}\n${convoy.logContext()}` },
    );
    assert.equal(echo.backend, 'web');
    assert.equal((await convoy.get('/healthz')).status, 200);
    assert.equal((await convoy.get('/readyz')).status, 200);
    const metrics = await convoy.get('/metrics');
    assert.match(metrics.body, /convoy_xds_streams\{[^}]*fleet="default\/ops"[^}]*\} 1/);
    assert.match(metrics.body, /convoy_process_resident_memory_bytes/);
    const text = await convoy.get('/debug/xds?format=text');
    assert.match(text.body, /^NODE\s+FLEET\s+VARIANT/);
    assert.match(text.body, /ops-envoy\s+default\/ops\s+delta\s/);
  });

  test('convoy proxy-status shows the Envoy synced on every type', async () => {
    const out = await waitFor(
      () => {
        const r = cli(['proxy-status', '--admin-address', convoy.adminAddress]);
        assert.equal(r.code, 0, r.stderr);
        return /ops-envoy\s+default\/ops\s+delta\s+SYNCED[^\n]*SYNCED[^\n]*SYNCED[^\n]*SYNCED/.test(r.stdout)
          ? r.stdout
          : undefined;
      },
      { what: 'proxy-status SYNCED for CDS, EDS, LDS and RDS' },
    );
    assert.match(out.split('\n')[0], /^NODE\s+FLEET\s+VARIANT\s+CDS\s+EDS\s+LDS\s+RDS$/);
    assert.doesNotMatch(out, /Rejected/);
    const json = cli(['proxy-status', '--admin-address', convoy.adminAddress, '-o', 'json']);
    assert.ok(JSON.parse(json.stdout).streams.some((s: { nodeId: string }) => s.nodeId === 'ops-envoy'));
  });

  test('convoy status shows conditions, then the problem when a backend goes missing', async () => {
    const ok = cli(['status', '--admin-address', convoy.adminAddress]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(
      ok.stdout,
      /^KIND\s+NAMESPACE\s+NAME\s+LISTENER\/PARENT\s+ACCEPTED\s+PROGRAMMED\s+RESOLVEDREFS/,
    );
    assert.match(ok.stdout, /\nGatewayClass\s+-\s+convoy\s+-\s+True\s/);
    assert.match(ok.stdout, /\nGateway\s+default\s+ops\s+-\s+True\s+True\s/);
    assert.match(ok.stdout, /\nGateway\s+default\s+ops\s+listener http\s+True\s+True\s+True\s.*routes: 1/);
    assert.match(ok.stdout, /\nHTTPRoute\s+default\s+web\s+Gateway\/default\/ops\/http\s+True\s+-\s+True/);
    assert.doesNotMatch(ok.stdout, /Problems:/);

    writeObjects('missing');
    const broken = await waitFor(
      () => {
        const r = cli(['status', '--admin-address', convoy.adminAddress]);
        return /ResolvedRefs=False BackendNotFound/.test(r.stdout) ? r.stdout : undefined;
      },
      { what: 'status to report the missing backend', context: () => convoy.logContext() },
    );
    assert.match(
      broken,
      /\nHTTPRoute\s+default\s+web\s+Gateway\/default\/ops\/http\s+True\s+-\s+False \(BackendNotFound\)/,
    );
    assert.match(
      broken,
      /Problems:\n\s+HTTPRoute default\/web Gateway\/default\/ops\/http: ResolvedRefs=False BackendNotFound/,
    );
    const json = cli(['status', '--admin-address', convoy.adminAddress, '--kind', 'HTTPRoute', '-o', 'json']);
    const routes = JSON.parse(json.stdout) as Array<{ metadata: { name: string } }>;
    assert.deepEqual(
      routes.map((r) => r.metadata.name),
      ['web'],
    );
  });
});
