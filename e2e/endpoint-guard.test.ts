import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import {
  ConvoyProcess,
  EnvoyProcess,
  freePorts,
  request,
  startEchoBackend,
  tempDir,
  waitFor,
  type Backend,
  type EchoResponse,
} from './harness';

/**
 * Issue 10 row 7 with a real Envoy in file mode: an EndpointSlice pointing at the Envoy's own
 * admin port (127.0.0.1:<admin>) behind a public route. By default Convoy refuses it (the route
 * says ResolvedRefs=False and Envoy never gets the endpoint, so the admin is never reached); with
 * --allow-loopback-endpoints the old behaviour returns for ordinary ports, while Convoy's own
 * admin port stays refused.
 */

const API = 'gateway.networking.k8s.io/v1';
const GATEWAY = { namespace: 'default', name: 'edge' };

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

describe('endpoint guard through a real Envoy (file mode)', { concurrency: false }, () => {
  let dir: { dir: string; cleanup: () => void };
  let objects: string;
  let echo: Backend;
  let envoy: EnvoyProcess;
  let convoy: ConvoyProcess;
  let listenerPort: number;
  let xdsPort: number;
  let adminPort: number;

  const get = (host: string, path = '/') => request({ port: listenerPort, host, path });

  function service(name: string, port: number): object[] {
    return [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: 'default' },
        spec: { ports: [{ name: 'http', port: 80 }] },
      },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${name}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port }],
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      },
    ];
  }

  function route(name: string, hostname: string, backend: string): object {
    return {
      apiVersion: API,
      kind: 'HTTPRoute',
      metadata: { name, namespace: 'default' },
      spec: {
        parentRefs: [{ name: GATEWAY.name }],
        hostnames: [hostname],
        rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
      },
    };
  }

  async function resolvedRefs(
    convoyProcess: ConvoyProcess,
    routeName: string,
  ): Promise<Condition | undefined> {
    const statuses =
      await convoyProcess.getJson<
        { kind: string; metadata: { name: string }; status: { parents?: { conditions: Condition[] }[] } }[]
      >('/status');
    const s = statuses.find((x) => x.kind === 'HTTPRoute' && x.metadata.name === routeName);
    return s?.status.parents?.[0]?.conditions.find((c) => c.type === 'ResolvedRefs');
  }

  async function waitResolvedRefs(routeName: string, status: 'True' | 'False'): Promise<Condition> {
    return waitFor(
      async () => {
        const c = await resolvedRefs(convoy, routeName);
        return c?.status === status ? c : undefined;
      },
      {
        what: `${routeName} ResolvedRefs=${status}`,
        timeoutMs: 30_000,
        context: () => convoy.logContext(20),
      },
    );
  }

  before(async () => {
    dir = tempDir('endpoint-guard');
    objects = path.join(dir.dir, 'objects');
    fs.mkdirSync(objects);
    echo = await startEchoBackend('echo');
    [listenerPort, xdsPort, adminPort] = await freePorts(3);
    convoy = await ConvoyProcess.start({
      name: 'convoy-default',
      xdsPort,
      adminPort,
      allowLoopbackEndpoints: false,
      args: ['--from-dir', objects, '--envoy-bind-address', '127.0.0.1'],
      workDir: path.join(dir.dir, 'convoy-default'),
    });
    const bootstrap = path.join(dir.dir, 'envoy.yaml');
    await convoy.writeEnvoyBootstrap(bootstrap, {
      gateway: `${GATEWAY.namespace}/${GATEWAY.name}`,
      nodeId: 'guard-envoy',
      adminAddress: '127.0.0.1:0',
    });
    envoy = await EnvoyProcess.start({
      configPath: bootstrap,
      name: 'envoy',
      drainTimeS: 2,
      workDir: path.join(dir.dir, 'envoy'),
    });
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
        metadata: GATEWAY,
        spec: {
          gatewayClassName: 'convoy',
          listeners: [{ name: 'http', protocol: 'HTTP', port: listenerPort }],
        },
      },
      ...service('envoy-admin', envoy.adminPort),
      ...service('convoy-admin', adminPort),
      ...service('echo', echo.port),
      route('envoy-admin', 'envoy-admin.example.com', 'envoy-admin'),
      route('convoy-admin', 'convoy-admin.example.com', 'convoy-admin'),
      route('echo', 'echo.example.com', 'echo'),
    ];
    fs.writeFileSync(path.join(objects, 'world.yaml.tmp'), docs.map((d) => stringify(d)).join('---\n'));
    fs.renameSync(path.join(objects, 'world.yaml.tmp'), path.join(objects, 'world.yaml'));
  });

  after(async () => {
    await envoy?.stop();
    await convoy?.dispose();
    await echo?.close();
    dir?.cleanup();
  });

  test('by default no loopback endpoint reaches Envoy: the routes say why and answer 500', async () => {
    for (const name of ['envoy-admin', 'convoy-admin', 'echo']) {
      const c = await waitResolvedRefs(name, 'False');
      assert.equal(c.reason, 'BackendNotFound');
      assert.match(c.message, /127\.0\.0\.1 is a loopback address: .*--allow-loopback-endpoints/);
    }
    // The listener is served, yet every backend is refused: a direct 500, never the admin's "LIVE".
    await waitFor(async () => (await get('echo.example.com')).status === 500, {
      what: 'Envoy serving the listener',
      timeoutMs: 30_000,
      context: () => `${envoy.logContext(20)}\n${convoy.logContext(20)}`,
    });
    const admin = await get('envoy-admin.example.com', '/ready');
    assert.equal(admin.status, 500);
    assert.doesNotMatch(admin.body, /LIVE/);
    const convoyAdmin = await get('convoy-admin.example.com', '/status');
    assert.equal(convoyAdmin.status, 500);
    const dump = JSON.stringify(await envoy.configDump('?include_eds'));
    assert.doesNotMatch(dump, new RegExp(`"port_value":\\s*(${envoy.adminPort}|${adminPort})\\b`));
    assert.doesNotMatch(dump, /default\/(envoy-admin|convoy-admin|echo)\/80/);
  });

  test("with --allow-loopback-endpoints the old behaviour returns, except for Convoy's own ports", async () => {
    // The same xDS CA as before, so the running Envoy's client certificate is still trusted.
    const certsDir = convoy.certsDir!;
    await convoy.stop();
    convoy = await ConvoyProcess.start({
      name: 'convoy-allow',
      xdsPort,
      adminPort,
      args: ['--from-dir', objects, '--envoy-bind-address', '127.0.0.1', '--xds-certs-dir', certsDir],
      workDir: path.join(dir.dir, 'convoy-allow'),
    });
    await waitResolvedRefs('echo', 'True');
    await waitFor(async () => (await get('echo.example.com')).status === 200, {
      what: 'echo through Envoy after the restart',
      timeoutMs: 30_000,
      context: () => `${envoy.logContext(20)}\n${convoy.logContext(20)}`,
    });
    assert.equal((await get('echo.example.com')).json<EchoResponse>().backend, 'echo');
    // The same config dump that showed no loopback endpoint above shows them now.
    const dump = JSON.stringify(await envoy.configDump('?include_eds'));
    assert.match(dump, new RegExp(`"port_value":\\s*${echo.port}\\b`));
    // What the guard prevents by default: a public route into Envoy's admin.
    await waitResolvedRefs('envoy-admin', 'True');
    await waitFor(async () => (await get('envoy-admin.example.com', '/ready')).body.includes('LIVE'), {
      what: "Envoy's admin through the public listener",
      timeoutMs: 30_000,
    });
    const c = await waitResolvedRefs('convoy-admin', 'False');
    assert.match(c.message, new RegExp(`127\\.0\\.0\\.1:${adminPort} is an admin or xDS port`));
    assert.equal((await get('convoy-admin.example.com', '/status')).status, 500);
  });
});
