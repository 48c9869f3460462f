import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  ConvoyProcess,
  createCa,
  freePorts,
  issueCert,
  isListening,
  loopbackRequest,
  repoRoot,
  request,
  tempDir,
  waitFor,
} from './harness';

/**
 * Issue 11, local processes: `convoy serve --from-dir` with the repository's examples/ starts
 * and supervises one real Envoy per Gateway (docs/operations.md §14). The README's curls go
 * through the Envoy Convoy started to the sample backends this test starts; a killed Envoy comes
 * back; a second Gateway gets its own Envoy with only its own listeners and loses it when its
 * file goes; SIGTERM drains every Envoy and Convoy exits 0 with no Envoy left. The examples'
 * ports are moved to free ones so the test can run beside anything else on the machine.
 */

const EXAMPLES = path.join(repoRoot(), 'examples');

interface Ports {
  http: number;
  https: number;
  web: number;
  api: number;
  second: number;
}

/** examples/*.yaml with their ports replaced, plus the two HTTPS Secrets scripts/make-example-certs.sh makes. */
function writeExamples(dir: string, ports: Ports, certsDir: string): void {
  const moved: Record<string, number> = {
    '8080': ports.http,
    '8443': ports.https,
    '8081': ports.web,
    '8082': ports.api,
  };
  for (const f of fs.readdirSync(EXAMPLES).filter((n) => n.endsWith('.yaml'))) {
    const text = fs
      .readFileSync(path.join(EXAMPLES, f), 'utf8')
      .replace(/\b(8080|8443|8081|8082)\b/g, (p) => String(moved[p]));
    fs.writeFileSync(path.join(dir, f), text);
  }
  const ca = createCa(certsDir, 'examples-ca');
  for (const host of ['blue.example.com', 'green.example.com']) {
    const cert = issueCert(ca, { name: host, dnsNames: [host] });
    const b64 = (file: string) => fs.readFileSync(file).toString('base64');
    fs.writeFileSync(
      path.join(dir, `${host.replace(/\./g, '-')}.yaml`),
      [
        'apiVersion: v1',
        'kind: Secret',
        'metadata:',
        `  name: ${host.replace(/\./g, '-')}`,
        '  namespace: default',
        'type: kubernetes.io/tls',
        'data:',
        `  tls.crt: ${b64(cert.certFile)}`,
        `  tls.key: ${b64(cert.keyFile)}`,
        '',
      ].join('\n'),
    );
  }
}

/** A second Gateway with one HTTP listener on `port` and a route to the web backend. */
function secondGatewayYaml(port: number): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: second
  namespace: default
spec:
  gatewayClassName: convoy
  listeners:
    - name: http
      protocol: HTTP
      port: ${port}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: second
  namespace: default
spec:
  parentRefs:
    - name: second
  rules:
    - backendRefs:
        - name: web
          port: 80
`;
}

/** A Service whose only endpoint is 127.0.0.1:`port`, and a route to it for admin.example.com. */
function adminProbeYaml(port: number): string {
  return `apiVersion: v1
kind: Service
metadata:
  name: admin-probe
  namespace: default
spec:
  ports:
    - name: http
      port: 80
      targetPort: ${port}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: admin-probe-1
  namespace: default
  labels:
    kubernetes.io/service-name: admin-probe
addressType: IPv4
ports:
  - name: http
    port: ${port}
endpoints:
  - addresses: ['127.0.0.1']
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: admin-probe
  namespace: default
spec:
  parentRefs:
    - name: demo
      sectionName: http
  hostnames: ['admin.example.com']
  rules:
    - backendRefs:
        - name: admin-probe
          port: 80
`;
}

function startBackend(name: string, port: number): childProcess.ChildProcess {
  return childProcess.spawn(
    process.execPath,
    [
      path.join(EXAMPLES, 'backend', 'server.js'),
      '--name',
      name,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('convoy serve --from-dir runs its own Envoys', { timeout: 600_000 }, () => {
  const tmp = tempDir('local-fleet');
  const objects = path.join(tmp.dir, 'objects');
  let ports: Ports;
  let convoy: ConvoyProcess;
  const backends: childProcess.ChildProcess[] = [];
  const seenPids = new Set<number>();

  /** The state folder of Gateway default/NAME's Envoy (XDG_STATE_HOME is the harness's). */
  const envoyDir = (name: string) => path.join(convoy.workDir, 'state', 'convoy', 'envoys', 'default', name);
  const envoyPid = (name: string): number | undefined => {
    try {
      const pid = Number(fs.readFileSync(path.join(envoyDir(name), 'envoy.pid'), 'utf8'));
      if (pid > 0) seenPids.add(pid);
      return pid > 0 && alive(pid) ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  const envoyAdminPort = (name: string): number =>
    Number(/:(\d+)$/.exec(fs.readFileSync(path.join(envoyDir(name), 'admin-address'), 'utf8').trim())![1]);

  const web = () => request({ port: ports.http, host: 'www.example.com', path: '/' });
  const waitBackend = (what: string, send: () => ReturnType<typeof request>, backend: string) =>
    waitFor(
      async () => {
        try {
          const r = await send();
          return r.status === 200 && r.json<{ backend: string }>().backend === backend ? r : undefined;
        } catch {
          return undefined;
        }
      },
      { what, timeoutMs: 90_000, context: () => convoy.logContext() },
    );

  before(async () => {
    const [http, https, webPort, api, second] = await freePorts(5);
    ports = { http: http!, https: https!, web: webPort!, api: api!, second: second! };
    fs.mkdirSync(objects);
    writeExamples(objects, ports, path.join(tmp.dir, 'example-certs'));
    backends.push(startBackend('web', ports.web), startBackend('api', ports.api));
    convoy = await ConvoyProcess.start({
      args: ['--from-dir', objects, '--envoy-bind-address', '127.0.0.1', '--envoy-drain-time', '6s'],
      managedEnvoys: true,
      ...(process.env.CONVOY_ENVOY_BIN ? { env: { ENVOY_BIN: process.env.CONVOY_ENVOY_BIN } } : {}),
    });
  });

  after(async () => {
    await convoy?.stop('SIGKILL');
    for (const pid of seenPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    for (const b of backends) b.kill();
    tmp.cleanup();
  });

  test("the README's curls answer through the Envoy Convoy started", async () => {
    await waitBackend('www.example.com / → web', web, 'web');
    const api = await waitBackend(
      'www.example.com /api/hello → api',
      () => request({ port: ports.http, host: 'www.example.com', path: '/api/hello' }),
      'api',
    );
    assert.equal(api.json<{ path: string }>().path, '/api/hello');
    for (const [host, backend] of [
      ['blue.example.com', 'web'],
      ['green.example.com', 'api'],
    ] as const) {
      const r = await waitBackend(
        `${host} over TLS → ${backend}`,
        () => request({ port: ports.https, host, tls: { servername: host } }),
        backend,
      );
      assert.equal(r.peerCertificate?.subjectCN, host);
    }
    const status =
      await convoy.getJson<{ kind: string; metadata: { name: string }; status?: { addresses?: unknown } }[]>(
        '/status',
      );
    const gw = status.find((o) => o.kind === 'Gateway' && o.metadata.name === 'demo');
    assert.deepEqual(gw?.status?.addresses, [{ type: 'IPAddress', value: '127.0.0.1' }]);
    const pid = envoyPid('demo');
    assert.ok(pid, 'the Envoy of default/demo runs');
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    assert.ok(cmdline.includes('--use-dynamic-base-id'), cmdline.join(' '));
  });

  test("a route to the managed Envoy's own admin port is refused", async () => {
    const adminPort = envoyAdminPort('demo');
    const staging = path.join(objects, '.admin-probe.yaml.tmp');
    fs.writeFileSync(staging, adminProbeYaml(adminPort));
    fs.renameSync(staging, path.join(objects, 'admin-probe.yaml'));
    type Condition = { type: string; status: string; message?: string };
    type Obj = {
      kind: string;
      metadata: { name: string };
      status?: { parents?: { conditions: Condition[] }[] };
    };
    const resolved = await waitFor(
      async () => {
        const route = (await convoy.getJson<Obj[]>('/status')).find(
          (o) => o.kind === 'HTTPRoute' && o.metadata.name === 'admin-probe',
        );
        return route?.status?.parents?.[0]?.conditions.find((c) => c.type === 'ResolvedRefs');
      },
      { what: 'the admin-probe route status', timeoutMs: 60_000, context: () => convoy.logContext() },
    );
    assert.equal(resolved.status, 'False');
    assert.match(resolved.message ?? '', new RegExp(`127\\.0\\.0\\.1:${adminPort} is an admin or xDS port`));
    const r = await request({ port: ports.http, host: 'admin.example.com', path: '/config_dump' });
    assert.equal(r.status, 500, 'Envoy never dials its own admin listener');
    fs.rmSync(path.join(objects, 'admin-probe.yaml'));
  });

  test('an Envoy killed by PID is restarted and traffic comes back', async () => {
    const before = envoyPid('demo')!;
    process.kill(before, 'SIGKILL');
    const after = await waitFor(
      () => {
        const p = envoyPid('demo');
        return p !== undefined && p !== before ? p : undefined;
      },
      { what: 'a new Envoy for default/demo', timeoutMs: 60_000, context: () => convoy.logContext() },
    );
    assert.notEqual(after, before);
    await waitBackend('traffic after the restart', web, 'web');
    const metrics = (await convoy.get('/metrics')).body;
    assert.match(metrics, /convoy_local_envoy_restarts_total\{gateway="default\/demo"\} [1-9]/);
    assert.match(convoy.log(), /envoy: exited; restarting/);
  });

  test('two Gateways → two Envoys, each with only its own listeners; a Gateway deleted → its Envoy stops', async () => {
    const file = path.join(objects, 'second.yaml');
    const staging = path.join(objects, '.second.yaml.tmp');
    fs.writeFileSync(staging, secondGatewayYaml(ports.second));
    fs.renameSync(staging, file);
    await waitBackend(
      'the second Gateway serves',
      () => request({ port: ports.second, host: 'any.example.com' }),
      'web',
    );
    const secondPid = envoyPid('second');
    assert.ok(secondPid && secondPid !== envoyPid('demo'), 'a second Envoy process');
    const listenerPorts = async (name: string): Promise<number[]> => {
      const r = await loopbackRequest(envoyAdminPort(name), '/listeners?format=json');
      const parsed = JSON.parse(r.body) as {
        listener_statuses?: { local_address?: { socket_address?: { port_value?: number } } }[];
      };
      return (parsed.listener_statuses ?? [])
        .map((l) => l.local_address?.socket_address?.port_value ?? 0)
        .sort();
    };
    assert.deepEqual(await listenerPorts('demo'), [ports.http, ports.https].sort());
    assert.deepEqual(await listenerPorts('second'), [ports.second]);

    fs.rmSync(file);
    await waitFor(() => !alive(secondPid), {
      what: 'the Envoy of the deleted Gateway to stop',
      timeoutMs: 60_000,
      context: () => convoy.logContext(),
    });
    assert.equal(await isListening(ports.second), false);
    assert.equal((await web()).status, 200, 'the other Gateway keeps serving');
  });

  test('SIGTERM: every Envoy drains, Convoy exits 0, no Envoy left', async () => {
    const pid = envoyPid('demo')!;
    const admin = envoyAdminPort('demo');
    const stopping = convoy.stop('SIGTERM', 60_000);
    // Draining: the health check fails (server state DRAINING) while requests are still served.
    await waitFor(async () => (await loopbackRequest(admin, '/ready')).body.trim() === 'DRAINING', {
      what: 'Envoy to report DRAINING',
      timeoutMs: 30_000,
      context: () => convoy.logContext(),
    });
    assert.equal((await web()).status, 200, 'served while draining');
    const exit = await stopping;
    assert.equal(exit, 'convoy exited (code 0, signal null)', convoy.logContext());
    assert.match(convoy.log(), /"drained":true[^\n]*envoy: draining/);
    assert.equal(alive(pid), false);
    for (const p of seenPids) assert.equal(alive(p), false, `Envoy ${p} is gone`);
    assert.equal(await isListening(ports.http), false);
  });
});
