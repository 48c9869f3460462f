import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { TypeUrl } from '../src/envoy/resources';
import { CertificateDirectory } from '../src/pki/certificate-directory';
import {
  ConvoyProcess,
  connectAdsClient,
  convoyMain,
  createCa,
  issueCert,
  repoRoot,
  request,
  tempDir,
  waitFor,
  type EchoResponse,
} from './harness';
import { GATEWAY, World, condition, listenerStatus } from './support/world';

/**
 * Issue 16, the operator's side: a resource Envoy rejects shows as NACKED in Convoy's Client
 * Status Discovery Service and as `rejected` in `convoy proxy-status` and `convoy config-dump`,
 * and clears once the cause is fixed (real Envoy, real traffic); CSDS refuses a Gateway's client
 * certificate; `convoy translate` on examples/ gives exactly the resources `convoy serve
 * --from-dir` publishes (the same versions, i.e. the same bytes, read back over delta ADS).
 */

const execFile = promisify(childProcess.execFile);
const DEADLINE_MS = 60_000;

/** Runs the compiled CLI; resolves with its exit status and output (never rejects on a status). */
async function cli(
  args: string[],
  stdin?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = execFile(process.execPath, [convoyMain(), ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (stdin !== undefined) {
    run.child.stdin?.end(stdin);
  }
  try {
    const r = await run;
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function occupy(port: number): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return server;
}

interface ProxyStatusJson {
  gateway: string;
  envoys: {
    node: string;
    types: Record<string, { state: string; resources: number }>;
    rejected: { type: string; name: string; version: string; message: string }[];
  }[];
}

describe(
  'a rejected listener in CSDS, convoy proxy-status and convoy config-dump',
  { concurrency: false },
  () => {
    let w: World;
    let squatter: net.Server | undefined;
    const node = 'e2e-delta';
    const fleet = `${GATEWAY.namespace}/${GATEWAY.name}`;
    const xds = () => ['--xds-address', w.convoy.xdsAddress, '--certs-dir', w.convoy.certsDir!];

    const gatewayDocs = (labels: Record<string, string> = {}) => [
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'GatewayClass',
        metadata: { name: 'convoy' },
        spec: { controllerName: 'convoy.dev/gateway-controller' },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { ...GATEWAY, labels },
        spec: {
          gatewayClassName: 'convoy',
          listeners: [
            { name: 'http', protocol: 'HTTP', port: w.ports.http },
            { name: 'blocked', protocol: 'HTTP', port: w.ports.https },
          ],
        },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          parentRefs: [{ name: GATEWAY.name }],
          hostnames: ['www.example.com'],
          rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
        },
      },
    ];
    const proxyStatus = async (): Promise<ProxyStatusJson[]> => {
      const r = await cli(['proxy-status', ...xds(), '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as ProxyStatusJson[];
    };
    const envoyOf = (report: ProxyStatusJson[]) =>
      report.find((g) => g.gateway === fleet)?.envoys.find((e) => e.node === node);
    const web = async (port: number) => {
      const r = await request({ port, host: 'www.example.com', path: '/' });
      return r.status === 200 ? r.json<EchoResponse>().backend : `status ${r.status}`;
    };

    before(async () => {
      w = await World.create('delta');
      await w.addBackend('web');
      squatter = await occupy(w.ports.https);
      w.write('00-gateway.yaml', gatewayDocs());
      w.write('01-services.yaml', w.serviceDocs('web'));
      await w.startConvoy();
      await w.startEnvoy();
    });

    after(async () => {
      await new Promise((r) => (squatter ? squatter.close(r) : r(undefined)));
      await w?.dispose();
    });

    test('the NACK is NACKED in CSDS and rejected in proxy-status and config-dump; the rest serves', async () => {
      let last: unknown;
      const envoy = await waitFor(
        async () => {
          const e = envoyOf(await proxyStatus());
          last = e;
          return e?.types.LDS?.state === 'rejected' ? e : undefined;
        },
        {
          what: 'proxy-status to show the rejected listener',
          timeoutMs: DEADLINE_MS,
          context: () => JSON.stringify(last),
        },
      );
      assert.deepEqual(
        envoy.rejected.map((r) => [r.type, r.name]),
        [['LDS', `http-${w.ports.https}`]],
      );
      assert.match(envoy.rejected[0].message, /Address already in use/);
      assert.equal(envoy.types.CDS.state, 'synced');

      const table = await cli(['proxy-status', ...xds()]);
      assert.equal(table.code, 0, table.stderr);
      assert.match(table.stdout, new RegExp(`Gateway ${fleet}: 1 Envoy`));
      assert.match(table.stdout, /rejected \(1 of 2\)/);
      assert.match(
        table.stdout,
        new RegExp(`${node} LDS http-${w.ports.https} \\(version [^)]+\\): .*Address already in use`),
      );

      const dump = await cli(['config-dump', ...xds(), '--node', node, '--type', 'LDS', '-o', 'json']);
      assert.equal(dump.code, 0, dump.stderr);
      const resources = (
        JSON.parse(dump.stdout) as {
          resources: {
            name: string;
            clientStatus: string;
            configStatus: string;
            error?: { message: string };
            resource?: { name?: string };
          }[];
        }
      ).resources;
      const byName = new Map(resources.map((r) => [r.name, r]));
      assert.equal(byName.get(`http-${w.ports.https}`)?.clientStatus, 'NACKED');
      assert.equal(byName.get(`http-${w.ports.https}`)?.configStatus, 'ERROR');
      assert.match(byName.get(`http-${w.ports.https}`)?.error?.message ?? '', /Address already in use/);
      assert.equal(byName.get(`http-${w.ports.http}`)?.clientStatus, 'ACKED');
      assert.equal(byName.get(`http-${w.ports.http}`)?.resource?.name, `http-${w.ports.http}`);

      assert.equal(
        await waitFor(async () => ((await web(w.ports.http)) === 'web' ? 'web' : undefined), {
          what: 'traffic on the listener Envoy accepted',
          timeoutMs: DEADLINE_MS,
        }),
        'web',
      );
      const gw = await w.statusOf('Gateway', GATEWAY.name);
      assert.equal(
        condition(listenerStatus(gw!, 'blocked')?.conditions, 'convoy.dev/EnvoyRejected')?.status,
        'True',
      );
    });

    test("CSDS refuses a Gateway's client certificate and an unknown CA", async () => {
      const certs = new CertificateDirectory(w.convoy.certsDir!);
      const gateway = certs.gatewayFiles(fleet);
      const r = await cli([
        'proxy-status',
        '--xds-address',
        w.convoy.xdsAddress,
        '--xds-tls-cert',
        gateway.certFile,
        '--xds-tls-key',
        gateway.keyFile,
        '--xds-tls-ca',
        gateway.caFile,
      ]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /PERMISSION_DENIED: client status is only for the operator identity/);
      const plaintext = await cli([
        'proxy-status',
        '--xds-address',
        w.convoy.xdsAddress,
        '--insecure-plaintext-xds',
      ]);
      assert.equal(plaintext.code, 1);
      assert.match(plaintext.stderr, /UNAVAILABLE/);
    });

    test('fixing the cause clears the NACK in CSDS, proxy-status and config-dump', async () => {
      await new Promise((r) => squatter!.close(r));
      squatter = undefined;
      w.write('00-gateway.yaml', gatewayDocs({ 'example.com/retry': '1' }));
      let last: unknown;
      const envoy = await waitFor(
        async () => {
          const e = envoyOf(await proxyStatus());
          last = e;
          return e && e.rejected.length === 0 && Object.values(e.types).every((t) => t.state === 'synced')
            ? e
            : undefined;
        },
        {
          what: 'proxy-status to show every type synced',
          timeoutMs: DEADLINE_MS,
          context: () => JSON.stringify(last),
        },
      );
      assert.equal(envoy.types.LDS.resources, 2);
      const dump = await cli(['config-dump', ...xds(), '--node', node, '--type', 'listeners', '-o', 'table']);
      assert.equal(dump.code, 0, dump.stderr);
      assert.doesNotMatch(dump.stdout, /NACKED/);
      assert.match(dump.stdout, new RegExp(`LDS +http-${w.ports.https} +\\S+ +ACKED +SYNCED`));
      assert.equal(
        await waitFor(async () => ((await web(w.ports.https)) === 'web' ? 'web' : undefined), {
          what: 'traffic on the recovered listener',
          timeoutMs: DEADLINE_MS,
        }),
        'web',
      );
    });
  },
);

describe('convoy translate equals what convoy serve publishes', () => {
  let tmp: { dir: string; cleanup: () => void };
  let convoy: ConvoyProcess;
  let objects: string;

  before(async () => {
    tmp = tempDir('translate');
    objects = path.join(tmp.dir, 'examples');
    fs.cpSync(path.join(repoRoot(), 'examples'), objects, {
      recursive: true,
      filter: (src) => !src.includes(`${path.sep}certs`),
    });
    // The ListenerSet's certificates, as scripts/make-example-certs.sh makes them.
    const ca = createCa(path.join(tmp.dir, 'pki'));
    const secrets = ['blue', 'green'].map((team) => {
      const c = issueCert(ca, { name: team, dnsNames: [`${team}.example.com`] });
      return stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `${team}-example-com`, namespace: 'default' },
        type: 'kubernetes.io/tls',
        data: {
          'tls.crt': Buffer.from(c.cert).toString('base64'),
          'tls.key': Buffer.from(c.key).toString('base64'),
        },
      });
    });
    fs.mkdirSync(path.join(objects, 'certs'));
    fs.writeFileSync(path.join(objects, 'certs', 'secrets.yaml'), secrets.join('---\n'));
    convoy = await ConvoyProcess.start({ name: 'translate', args: ['--from-dir', objects] });
  });

  after(async () => {
    await convoy?.dispose();
    tmp?.cleanup();
  });

  test('every resource of every type has the version (the bytes) serve publishes over delta ADS', async () => {
    const r = await cli([
      'translate',
      objects,
      '--allow-loopback-endpoints',
      '--xds-address',
      convoy.xdsAddress,
      '--admin-address',
      convoy.adminAddress,
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stdout.slice(-2000) + r.stderr);
    type Listed = { name: string; version: string; resource: Record<string, unknown> };
    const out = JSON.parse(r.stdout) as { fleets: ({ gateway: string } & Record<string, Listed[]>)[] };
    assert.deepEqual(
      out.fleets.map((f) => f.gateway),
      ['default/demo'],
    );
    const fleet = out.fleets[0];
    assert.ok(
      fleet.secrets.length === 2 && fleet.listeners.length === 2,
      JSON.stringify(fleet.listeners.map((l) => l.name)),
    );
    assert.equal(
      JSON.stringify(fleet.secrets).includes('BEGIN EC PRIVATE KEY'),
      false,
      'private keys are redacted',
    );

    const client = await connectAdsClient(convoy, {
      fleet: 'default/demo',
      nodeId: 'translate-check',
      variant: 'delta',
    });
    try {
      const lists: [string, string][] = [
        [TypeUrl.Cluster, 'clusters'],
        [TypeUrl.Listener, 'listeners'],
        [TypeUrl.Endpoint, 'endpoints'],
        [TypeUrl.Route, 'routes'],
        [TypeUrl.Secret, 'secrets'],
      ];
      for (const [typeUrl, key] of lists) {
        const wildcard = typeUrl === TypeUrl.Cluster || typeUrl === TypeUrl.Listener;
        const since = client.received;
        client.subscribe(typeUrl, wildcard ? [] : fleet[key].map((x) => x.name));
        const got = await client.waitFor((x) => x.typeUrl === typeUrl, { since, timeoutMs: DEADLINE_MS });
        const served = Object.entries(got.versions).sort(([a], [b]) => (a < b ? -1 : 1));
        assert.deepEqual(
          served,
          fleet[key].map((x) => [x.name, x.version]),
          `${key}: serve published other bytes`,
        );
      }
    } finally {
      client.close();
    }
  });

  test('translate - reads stdin; --validate has Envoy accept the fleet; describe explains a host', async () => {
    const stdin = fs
      .readdirSync(objects)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => fs.readFileSync(path.join(objects, f), 'utf8'))
      .join('\n---\n');
    const piped = await cli(['translate', '-', '--allow-loopback-endpoints', '-o', 'yaml'], stdin);
    assert.equal(piped.code, 3, 'without the certificates the ListenerSet is refused: exit 3');
    assert.match(piped.stdout, /InvalidCertificateRef/);

    const validated = await cli([
      'translate',
      objects,
      '--allow-loopback-endpoints',
      '--validate',
      '--envoy',
      path.join(repoRoot(), '.venv', 'bin', 'envoy'),
      '-o',
      'json',
    ]);
    assert.equal(validated.code, 0, validated.stdout.slice(-3000) + validated.stderr);
    assert.deepEqual((JSON.parse(validated.stdout) as { validation: unknown }).validation, [
      { gateway: 'default/demo', accepted: true },
    ]);

    const described = await cli([
      'describe',
      'host',
      'blue.example.com',
      objects,
      '--allow-loopback-endpoints',
      '-o',
      'json',
    ]);
    assert.equal(described.code, 0, described.stderr);
    const ports = (
      JSON.parse(described.stdout) as {
        ports: {
          port: number;
          serving?: {
            listener: string;
            certificates: { dnsNames?: string[] }[];
            routes: { route: string }[];
          };
        }[];
      }
    ).ports;
    const https = ports.find((p) => p.port === 8443)!;
    assert.equal(https.serving?.listener, 'ListenerSet/default/tenants/blue');
    assert.deepEqual(
      https.serving?.certificates.map((c) => c.dnsNames),
      [['blue.example.com']],
    );
    assert.deepEqual(
      https.serving?.routes.map((x) => x.route),
      ['HTTPRoute/default/blue'],
    );
  });
});
