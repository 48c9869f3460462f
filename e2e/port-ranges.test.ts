import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { request, waitFor, type EchoResponse } from './harness';
import { CONTROLLER, GATEWAY, World, condition, listenerStatus } from './support/world';

/**
 * Port ranges (docs/gateway-api.md §30) in file mode through a real Envoy: a ListenerPortRange
 * extends one HTTPS listener to 20 ports, served by ONE Envoy Listener with additional addresses;
 * a listener on a port inside the range is Conflicted while the range keeps serving.
 */

const API = 'gateway.networking.k8s.io/v1';
const RANGE_PORTS = 20;
const HOST = 'range.example.com';

/** Binds `n` consecutive loopback ports at once, so none is in use, and returns the first. */
async function freeConsecutivePorts(n: number): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 20000);
    const servers: net.Server[] = [];
    let ok = true;
    for (let port = base; port < base + n && ok; port++) {
      const srv = net.createServer();
      ok = await new Promise<boolean>((resolve) => {
        srv.once('error', () => resolve(false));
        srv.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (ok) servers.push(srv);
    }
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    if (ok) return base;
  }
  throw new Error(`no ${n} consecutive free loopback ports`);
}

describe('ListenerPortRange through real Envoy (file mode)', { concurrency: false }, () => {
  let w: World;
  let base = 0;

  const get = (port: number) => request({ port, host: HOST, path: '/x', tls: { servername: HOST } });

  before(async () => {
    base = await freeConsecutivePorts(RANGE_PORTS);
    w = await World.create('delta');
    await w.addBackend('web');
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
              name: 'range',
              protocol: 'HTTPS',
              port: base,
              hostname: HOST,
              tls: { mode: 'Terminate', certificateRefs: [{ name: 'range-cert' }] },
            },
          ],
        },
      },
    ]);
    w.write('01-services.yaml', [...w.serviceDocs('web'), w.tlsSecretDoc('range-cert', HOST)]);
    w.write('02-route.yaml', [
      {
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          parentRefs: [{ name: GATEWAY.name, sectionName: 'range' }],
          rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
        },
      },
    ]);
    w.write('03-range.yaml', [
      {
        apiVersion: 'gateway.convoy.dev/v1alpha1',
        kind: 'ListenerPortRange',
        metadata: { name: 'wide', namespace: 'default' },
        spec: {
          targetRef: { group: API.split('/')[0], kind: 'Gateway', name: GATEWAY.name, sectionName: 'range' },
          endPort: base + RANGE_PORTS - 1,
        },
      },
    ]);
    await w.startConvoy();
    await w.startEnvoy();
  });

  after(async () => {
    await w?.dispose();
  });

  /** Asserts that every port of the range answers HTTPS with the route's backend. */
  async function assertEveryPortServes(): Promise<void> {
    for (let port = base; port < base + RANGE_PORTS; port++) {
      const r = await waitFor(
        async () => {
          try {
            const res = await get(port);
            return res.status === 200 ? res : undefined;
          } catch {
            return undefined;
          }
        },
        { what: `HTTPS on port ${port}`, timeoutMs: 30_000 },
      );
      assert.equal(r.json<EchoResponse>().backend, 'web', `port ${port}`);
      assert.match(r.peerCertificate?.subjectAltName ?? '', new RegExp(HOST.replace(/\./g, '\\.')));
    }
  }

  test('the policy is Accepted and the 20 ports serve HTTPS from one Envoy Listener', async () => {
    const s = await w.waitStatus(
      'ListenerPortRange',
      'wide',
      (x) =>
        condition((x.status.ancestors as { conditions: unknown }[] | undefined)?.[0]?.conditions, 'Accepted')
          ?.status === 'True',
      'ListenerPortRange Accepted',
    );
    const ancestor = (s.status.ancestors as { ancestorRef: Record<string, string> }[])[0];
    assert.equal(ancestor.ancestorRef.sectionName, 'range');
    await w.waitEnvoySynced('range programmed');
    await assertEveryPortServes();
    const listeners = JSON.parse((await w.envoy.admin('/listeners?format=json')).body) as {
      listener_statuses: { name: string; additional_local_addresses?: unknown[] }[];
    };
    const own = listeners.listener_statuses.filter((l) => l.name === `https-${base}`);
    assert.equal(own.length, 1, JSON.stringify(listeners));
    assert.equal(own[0].additional_local_addresses?.length, RANGE_PORTS - 1);
    assert.equal(
      listeners.listener_statuses.length,
      1,
      'no other Listener: one filter-chain set for the range',
    );
  });

  test('a listener on a port inside the range is Conflicted; the range keeps serving every port', async () => {
    const inside = base + 5;
    w.write('04-inside.yaml', [
      {
        apiVersion: API,
        kind: 'ListenerSet',
        metadata: { name: 'inside', namespace: 'default' },
        spec: {
          parentRef: { name: GATEWAY.name },
          listeners: [{ name: 'plain', protocol: 'HTTP', port: inside }],
        },
      },
    ]);
    const s = await w.waitStatus(
      'ListenerSet',
      'inside',
      (x) => condition(listenerStatus(x, 'plain')?.conditions, 'Conflicted')?.status === 'True',
      'the ListenerSet listener inside the range Conflicted',
    );
    assert.match(
      condition(listenerStatus(s, 'plain')?.conditions, 'Conflicted')?.message ?? '',
      /in the range/,
    );
    const policy = await w.statusOf('ListenerPortRange', 'wide');
    const accepted = condition(
      (policy?.status.ancestors as { conditions: unknown }[])[0].conditions,
      'Accepted',
    );
    assert.equal(accepted?.status, 'True');
    await w.waitEnvoySynced('conflicting listener processed');
    await assertEveryPortServes();
    // The conflicted listener's port still speaks TLS for the range, not plain HTTP.
    const plain = await request({ port: inside, host: HOST, path: '/' }).catch((err: Error) => err);
    assert.ok(plain instanceof Error || plain.status !== 200, 'plain HTTP is not served on a range port');
  });
});
