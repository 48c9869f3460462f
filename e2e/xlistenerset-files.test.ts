import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { request, type EchoResponse } from './harness';
import { CONTROLLER, GATEWAY, World, condition } from './support/world';

/**
 * Legacy XListenerSet with a dynamic port through a real Envoy, file mode (docs/gateway-api.md
 * §29): a listener without a port gets one from `--dynamic-port-range`, reported in the
 * XListenerSet's status, and serves HTTPS with its own certificate on it; Convoy restarted gives
 * it the same port, and it keeps serving.
 */

const API = 'gateway.networking.k8s.io/v1';
const RANGE_SIZE = 20;

/** Returns whether a loopback port can be bound now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** Finds RANGE_SIZE consecutive free loopback ports below the ephemeral range. */
async function freeRange(): Promise<{ first: number; last: number }> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = 20000 + Math.floor(Math.random() * 10000);
    let ok = true;
    for (let p = first; p < first + RANGE_SIZE && ok; p++) ok = await bindable(p);
    if (ok) return { first, last: first + RANGE_SIZE - 1 };
  }
  throw new Error('no free port range');
}

interface LegacyListener {
  name: string;
  port: number;
  attachedRoutes: number;
  conditions: { type: string; status: string; reason: string }[];
}

describe('XListenerSet with a dynamic port through real Envoy (file mode)', { timeout: 120_000 }, () => {
  let w: World;
  let range: { first: number; last: number };

  const assignedPort = async (): Promise<number> => {
    const s = await w.waitStatus(
      'XListenerSet',
      'tenant',
      (x) =>
        condition(x.status.conditions, 'Accepted')?.status === 'True' &&
        ((x.status.listeners as LegacyListener[] | undefined) ?? []).some((l) => l.name === 'dyn'),
      'XListenerSet tenant accepted with listener dyn',
    );
    const l = (s.status.listeners as LegacyListener[]).find((x) => x.name === 'dyn')!;
    assert.equal(condition(l.conditions, 'Programmed')?.status, 'True');
    assert.equal(l.attachedRoutes, 1);
    return l.port;
  };

  before(async () => {
    range = await freeRange();
    w = await World.create('delta');
    await w.addBackend('tenant');
    await w.addBackend('main');
    w.write('00-gateway.yaml', [
      {
        apiVersion: API,
        kind: 'GatewayClass',
        metadata: { name: 'convoy' },
        spec: { controllerName: CONTROLLER },
      },
      {
        apiVersion: API,
        kind: 'Gateway',
        metadata: { name: GATEWAY.name, namespace: GATEWAY.namespace },
        spec: {
          gatewayClassName: 'convoy',
          allowedListeners: { namespaces: { from: 'Same' } },
          listeners: [
            {
              name: 'https',
              protocol: 'HTTPS',
              port: w.ports.https,
              hostname: 'main.example.com',
              tls: { mode: 'Terminate', certificateRefs: [{ name: 'main-cert' }] },
            },
          ],
        },
      },
    ]);
    w.write('01-services.yaml', [...w.serviceDocs('tenant'), ...w.serviceDocs('main')]);
    w.write('02-secrets.yaml', [
      w.tlsSecretDoc('main-cert', 'main.example.com'),
      w.tlsSecretDoc('dyn-cert', 'dyn.example.com'),
    ]);
    w.write('10-xlistenerset.yaml', [
      {
        apiVersion: 'gateway.networking.x-k8s.io/v1alpha1',
        kind: 'XListenerSet',
        metadata: { name: 'tenant', namespace: 'default' },
        spec: {
          parentRef: { name: GATEWAY.name },
          listeners: [
            {
              name: 'dyn',
              protocol: 'HTTPS',
              hostname: 'dyn.example.com',
              tls: { mode: 'Terminate', certificateRefs: [{ name: 'dyn-cert' }] },
            },
          ],
        },
      },
      {
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name: 'tenant', namespace: 'default' },
        spec: {
          parentRefs: [{ group: 'gateway.networking.x-k8s.io', kind: 'XListenerSet', name: 'tenant' }],
          rules: [{ backendRefs: [{ name: 'tenant', port: 80 }] }],
        },
      },
      {
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name: 'main', namespace: 'default' },
        spec: {
          parentRefs: [{ name: GATEWAY.name }],
          rules: [{ backendRefs: [{ name: 'main', port: 80 }] }],
        },
      },
    ]);
    await w.startConvoy([
      '--allow-loopback-endpoints',
      '--enable-xlistenerset',
      '--dynamic-port-range',
      `${range.first}-${range.last}`,
    ]);
    await w.startEnvoy();
  });
  after(async () => {
    await w?.dispose();
  });

  const get = (port: number, sni: string) =>
    request({ port, host: sni, path: '/', tls: { servername: sni } });

  let port = 0;

  test('the listener gets a port from the pool, reported in status, and serves HTTPS with its own certificate', async () => {
    port = await assignedPort();
    assert.ok(port >= range.first && port <= range.last, `port ${port} in ${range.first}-${range.last}`);
    await w.waitEnvoySynced('Envoy applied the XListenerSet');
    const r = await get(port, 'dyn.example.com');
    assert.equal(r.status, 200, r.body.slice(0, 200));
    assert.equal(r.peerCertificate?.subjectCN, 'dyn.example.com');
    assert.equal(r.json<EchoResponse>().backend, 'tenant');
    const main = await get(w.ports.https, 'main.example.com');
    assert.equal(main.peerCertificate?.subjectCN, 'main.example.com');
    assert.equal(main.json<EchoResponse>().backend, 'main');
  });

  test('Convoy restarted: the same port, still serving', async () => {
    assert.ok(port > 0, 'the first test assigned a port');
    await w.convoy.restart();
    assert.equal(await assignedPort(), port);
    await w.waitEnvoySynced('Envoy reconnected to the restarted Convoy');
    const r = await get(port, 'dyn.example.com');
    assert.equal(r.peerCertificate?.subjectCN, 'dyn.example.com');
    assert.equal(r.json<EchoResponse>().backend, 'tenant');
  });
});
