import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { stringify } from 'yaml';
import { TypeUrl } from '../src/envoy/resources';
import { CertificateDirectory } from '../src/pki/certificate-directory';
import { AdsClient } from '../test/support/ads-client';
import {
  ConvoyProcess,
  EnvoyProcess,
  convoyMain,
  createCa,
  freePorts,
  issueCert,
  request,
  sleep,
  startEchoBackend,
  tempDir,
  waitFor,
} from './harness';
import type { Backend, EchoResponse } from './harness';

/**
 * Issue 10 rows 1, 2 and 10 with real processes: `convoy serve` with its default mTLS, a real
 * Envoy holding Gateway A's client certificate, and ADS clients trying to read Gateway B's keys
 * (docs/security.md §2).
 */

const A = 'team-a/web';
const B = 'team-b/other';
const API = 'gateway.networking.k8s.io/v1';

interface Client {
  cert?: { cert: Buffer; key: Buffer };
  plaintext?: boolean;
}

describe('xDS authentication and authorization against convoy serve and Envoy', () => {
  let tmp: { dir: string; cleanup: () => void };
  let backend: Backend;
  let convoy: ConvoyProcess;
  let plaintext: ConvoyProcess | undefined;
  let envoy: EnvoyProcess;
  let httpPort: number;
  let bHttpsPort: number;
  let bKeyBody: string;
  let caPem: Buffer;
  let certA: { cert: Buffer; key: Buffer };
  const clients: AdsClient[] = [];

  function writeObjects(dir: string): void {
    const pki = createCa(path.join(tmp.dir, 'gateway-pki'));
    const bCert = issueCert(pki, { name: 'b.example.com', dnsNames: ['b.example.com'] });
    // The key's base64 body: it must never appear in anything a client of A receives.
    bKeyBody = bCert.key.split('\n')[1]!;
    const docs = [
      {
        apiVersion: API,
        kind: 'GatewayClass',
        metadata: { name: 'convoy' },
        spec: { controllerName: 'convoy.dev/gateway-controller' },
      },
      {
        apiVersion: API,
        kind: 'Gateway',
        metadata: { name: 'web', namespace: 'team-a' },
        spec: { gatewayClassName: 'convoy', listeners: [{ name: 'http', protocol: 'HTTP', port: httpPort }] },
      },
      {
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name: 'web', namespace: 'team-a' },
        spec: { parentRefs: [{ name: 'web' }], rules: [{ backendRefs: [{ name: 'echo', port: 80 }] }] },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'echo', namespace: 'team-a' },
        spec: { ports: [{ name: 'http', port: 80, targetPort: backend.port }] },
      },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'echo-1', namespace: 'team-a', labels: { 'kubernetes.io/service-name': 'echo' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: backend.port }],
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      },
      {
        apiVersion: API,
        kind: 'Gateway',
        metadata: { name: 'other', namespace: 'team-b' },
        spec: {
          gatewayClassName: 'convoy',
          listeners: [
            {
              name: 'https',
              protocol: 'HTTPS',
              port: bHttpsPort,
              hostname: 'b.example.com',
              tls: { mode: 'Terminate', certificateRefs: [{ name: 'b-cert' }] },
            },
          ],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'b-cert', namespace: 'team-b' },
        type: 'kubernetes.io/tls',
        data: {
          'tls.crt': Buffer.from(bCert.cert).toString('base64'),
          'tls.key': Buffer.from(bCert.key).toString('base64'),
        },
      },
    ];
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'objects.yaml'), docs.map((d) => stringify(d)).join('---\n'));
  }

  before(async () => {
    tmp = tempDir('xds-auth');
    backend = await startEchoBackend('team-a-echo');
    [httpPort, bHttpsPort] = (await freePorts(2)) as [number, number];
    writeObjects(path.join(tmp.dir, 'objects'));
    convoy = await ConvoyProcess.start({
      name: 'convoy',
      args: [
        '--from-dir',
        path.join(tmp.dir, 'objects'),
        '--envoy-bind-address',
        '127.0.0.1',
        '--xds-unknown-fleet-timeout',
        '2s',
      ],
      workDir: path.join(tmp.dir, 'convoy'),
    });
    const certs = new CertificateDirectory(convoy.certsDir!);
    await certs.ensureCa({ create: false });
    const files = (await certs.ensureGateway(A)).files;
    certA = { cert: fs.readFileSync(files.certFile), key: fs.readFileSync(files.keyFile) };
    caPem = fs.readFileSync(certs.caCertFile);
    const bootstrap = path.join(tmp.dir, 'envoy-a.yaml');
    await convoy.writeEnvoyBootstrap(bootstrap, {
      gateway: A,
      nodeId: 'envoy-a',
      adminAddress: '127.0.0.1:0',
    });
    envoy = await EnvoyProcess.start({
      configPath: bootstrap,
      name: 'envoy-a',
      workDir: path.join(tmp.dir, 'envoy'),
    });
  });

  after(async () => {
    for (const c of clients) c.close();
    await envoy?.stop();
    await convoy?.dispose();
    await plaintext?.dispose();
    await backend?.close();
    tmp?.cleanup();
  });

  function ads(target: ConvoyProcess, fleet: string, variant: 'sotw' | 'delta', who: Client): AdsClient {
    const credentials = who.plaintext
      ? grpc.credentials.createInsecure()
      : grpc.credentials.createSsl(caPem, who.cert?.key ?? null, who.cert?.cert ?? null);
    const c = new AdsClient({
      address: target.xdsAddress,
      variant,
      node: { id: `probe-${clients.length}`, cluster: fleet },
      credentials,
    });
    clients.push(c);
    if (variant === 'sotw') {
      c.subscribe(TypeUrl.Cluster, []);
      c.subscribe(TypeUrl.Listener, []);
    } else {
      c.deltaSubscribe(TypeUrl.Cluster, []);
      c.deltaSubscribe(TypeUrl.Listener, []);
    }
    return c;
  }

  function ended(c: AdsClient, timeoutMs = 30_000): Promise<grpc.StatusObject> {
    return Promise.race([
      c.status,
      sleep(timeoutMs).then(() => {
        throw new Error(`stream still open after ${timeoutMs} ms with ${c.responses.length} responses`);
      }),
    ]);
  }

  async function metrics(target: ConvoyProcess): Promise<string> {
    return (await target.get('/metrics')).body;
  }

  test("an Envoy with Gateway A's certificate serves A's traffic", async () => {
    await envoy.waitLive();
    const echo = await waitFor(
      async () => {
        const r = await request({ port: httpPort, path: '/hello' });
        return r.status === 200 ? r.json<EchoResponse>() : undefined;
      },
      { what: 'traffic through Envoy A', context: () => `${envoy.logContext()}\n${convoy.logContext()}` },
    );
    assert.equal(echo.backend, 'team-a-echo');
    assert.ok((await envoy.counter('cluster.convoy_xds.ssl.handshake')) >= 1, 'xDS over TLS');
  });

  for (const variant of ['sotw', 'delta'] as const) {
    test(`${variant}: A's certificate asking for B's fleet gets PERMISSION_DENIED and no Secret bytes`, async () => {
      const c = ads(convoy, B, variant, { cert: certA });
      const st = await ended(c);
      assert.equal(st.code, grpc.status.PERMISSION_DENIED, st.details);
      assert.equal(c.responses.length, 0);
      for (const r of c.responses) assert.ok(!r.raw.toString('latin1').includes(bKeyBody));
    });
  }

  test('the refusals are logged without secrets and counted', async () => {
    const log = await waitFor(
      () => {
        const lines = convoy
          .log()
          .split('\n')
          .filter((l) => l.includes('permission denied'));
        return lines.length >= 2 ? lines : undefined;
      },
      { what: 'two permission-denied log lines', context: () => convoy.logContext() },
    );
    const entry = JSON.parse(log[0]!) as Record<string, unknown>;
    assert.equal(entry.fleet, B);
    assert.equal(entry.allowedFleets, A);
    assert.equal(entry.level, 40);
    assert.ok(!convoy.log().includes(bKeyBody), 'the log never holds key material');
    assert.ok(!convoy.log().includes('PRIVATE KEY'));
    assert.match(
      await metrics(convoy),
      /convoy_xds_streams_refused_total\{reason="permission_denied"\} ([2-9]|\d\d)/,
    );
  });

  test("A's own fleet is served to A's certificate (the same client, the right fleet)", async () => {
    const c = ads(convoy, A, 'delta', { cert: certA });
    const r = await c.next(TypeUrl.Cluster, 30_000);
    assert.ok(r.names.length >= 1);
    c.close();
  });

  test('a client without a certificate is refused at the handshake', async () => {
    const c = ads(convoy, A, 'sotw', {});
    const st = await ended(c);
    assert.equal(st.code, grpc.status.UNAVAILABLE, st.details);
    assert.equal(c.responses.length, 0);
  });

  test('a client speaking plaintext to the default server gets nothing', async () => {
    const c = ads(convoy, A, 'sotw', { plaintext: true });
    const st = await ended(c);
    assert.notEqual(st.code, grpc.status.OK);
    assert.equal(c.responses.length, 0);
  });

  test('a stream for a Gateway that does not exist is closed after --xds-unknown-fleet-timeout', async () => {
    const invented = 'nobody/invented-gateway';
    const certs = new CertificateDirectory(convoy.certsDir!);
    await certs.ensureCa({ create: false });
    const files = (await certs.ensureGateway(invented)).files;
    const c = ads(convoy, invented, 'delta', {
      cert: { cert: fs.readFileSync(files.certFile), key: fs.readFileSync(files.keyFile) },
    });
    const st = await ended(c);
    assert.equal(st.code, grpc.status.NOT_FOUND, st.details);
    assert.match(st.details, /within 2s/);
    const text = await metrics(convoy);
    assert.doesNotMatch(text, /invented-gateway/, 'no metric series for an invented name');
    assert.match(text, /convoy_xds_streams\{fleet="team-a\/web",variant="delta"\} 1/);
  });

  test('the Envoy reloads its renewed client certificate without a restart and reconnects with it', async () => {
    const serial = async () => {
      const certs = JSON.parse((await envoy.admin('/certs')).body) as {
        certificates: { cert_chain: { serial_number: string; subject_alt_names: { uri?: string }[] }[] }[];
      };
      const chain = certs.certificates.flatMap((c) => c.cert_chain);
      return chain.find((c) => c.subject_alt_names.some((s) => s.uri === `spiffe://convoy/gateway/${A}`))
        ?.serial_number;
    };
    const before = await serial();
    assert.ok(before, 'Envoy reports its xDS client certificate');
    // certgen with another lifetime reissues the certificate in the folder Envoy reads.
    const r = childProcess.spawnSync(
      process.execPath,
      [convoyMain(), 'certgen', '--certs-dir', convoy.certsDir!, '--gateway', A, '--client-validity', '3d'],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /gateway team-a\/web: renewed/);
    const after = await waitFor(
      async () => {
        const now = await serial();
        return now !== before ? now : undefined;
      },
      {
        what: 'Envoy to load the renewed certificate',
        context: () => envoy.logContext(),
      },
    );
    assert.notEqual(after, before);
    // A new connection (Convoy restarted) authenticates with the renewed certificate.
    await convoy.restart();
    await waitFor(
      async () => {
        const dbg = await convoy.getJson<{ streams: { nodeId: string }[] }>('/debug/xds');
        return dbg.streams.some((s) => s.nodeId === 'envoy-a') ? true : undefined;
      },
      { what: 'Envoy A to reconnect', context: () => `${envoy.logContext()}\n${convoy.logContext()}` },
    );
    const res = await request({ port: httpPort, path: '/after-rotation' });
    assert.equal(res.status, 200);
  });

  test('--insecure-plaintext-xds serves without TLS, warns at startup, and the stream limit holds', async () => {
    plaintext = await ConvoyProcess.start({
      name: 'plaintext',
      args: [
        '--from-dir',
        path.join(tmp.dir, 'objects'),
        '--insecure-plaintext-xds',
        '--xds-max-streams',
        '2',
      ],
      workDir: path.join(tmp.dir, 'plaintext'),
    });
    const warning = plaintext
      .log()
      .split('\n')
      .find((l) => l.includes('INSECURE'));
    assert.ok(warning, 'a startup warning');
    assert.equal((JSON.parse(warning) as { level: number }).level, 40);
    assert.match(warning, /PLAINTEXT/);
    const first = ads(plaintext, A, 'sotw', { plaintext: true });
    const second = ads(plaintext, B, 'delta', { plaintext: true });
    await first.next(TypeUrl.Cluster, 30_000);
    await second.next(TypeUrl.Cluster, 30_000);
    const third = ads(plaintext, A, 'sotw', { plaintext: true });
    const st = await ended(third);
    assert.equal(st.code, grpc.status.RESOURCE_EXHAUSTED, st.details);
    assert.match(await metrics(plaintext), /convoy_xds_streams_refused_total\{reason="stream_limit"\} 1/);
  });
});
