import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  freePort,
  startTcpEcho,
  startUdpEcho,
  tcpExchange,
  udpExchange,
  waitFor,
  type L4Backend,
} from './harness';
import { CONTROLLER, GATEWAY, World, condition, listenerStatus, type Variant } from './support/world';

/**
 * TCPRoute and UDPRoute through a real Envoy (docs/gateway-api.md §28), file mode, both ADS variants:
 * one Gateway with a TCP and a UDP listener on the same port number; bytes echo through tcp_proxy,
 * weighted TCPRoutes and UDPRoutes split connections and sessions across two backends, datagrams
 * echo through udp_proxy, and a TCPRoute with no valid backend gets its connections closed.
 */

const API = 'gateway.networking.k8s.io/v1';

/** Service + EndpointSlice of a loopback backend, on Service port 9000 of the given transport. */
function serviceDocs(b: L4Backend, protocol: 'TCP' | 'UDP'): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: b.name, namespace: GATEWAY.namespace },
      spec: { ports: [{ name: 'main', port: 9000, protocol, targetPort: b.port }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `${b.name}-1`,
        namespace: GATEWAY.namespace,
        labels: { 'kubernetes.io/service-name': b.name },
      },
      addressType: 'IPv4',
      ports: [{ name: 'main', port: b.port, protocol }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    },
  ];
}

/** A TCPRoute or UDPRoute on listener `section` of the Gateway with the given (name, weight) backends. */
function route(
  kind: 'TCPRoute' | 'UDPRoute',
  name: string,
  section: string,
  backends: [string, number][],
): object {
  return {
    apiVersion: API,
    kind,
    metadata: { name, namespace: GATEWAY.namespace },
    spec: {
      parentRefs: [{ name: GATEWAY.name, sectionName: section }],
      rules: [{ backendRefs: backends.map(([n, weight]) => ({ name: n, port: 9000, weight })) }],
    },
  };
}

for (const variant of ['delta', 'sotw'] as Variant[]) {
  describe(`TCPRoute and UDPRoute through real Envoy (${variant} ADS)`, { concurrency: false }, () => {
    let w: World;
    let port: number;
    const backends: L4Backend[] = [];

    before(async () => {
      w = await World.create(variant);
      port = await freePort();
      backends.push(
        await startTcpEcho('tcp-a'),
        await startTcpEcho('tcp-b'),
        await startUdpEcho('udp-a'),
        await startUdpEcho('udp-b'),
      );
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
            listeners: [
              { name: 'tcp', protocol: 'TCP', port },
              { name: 'udp', protocol: 'UDP', port },
            ],
          },
        },
      ]);
      w.write('01-services.yaml', [
        ...serviceDocs(backends[0], 'TCP'),
        ...serviceDocs(backends[1], 'TCP'),
        ...serviceDocs(backends[2], 'UDP'),
        ...serviceDocs(backends[3], 'UDP'),
      ]);
      w.write('10-tcp.yaml', [route('TCPRoute', 'echo', 'tcp', [['tcp-a', 1]])]);
      w.write('11-udp.yaml', [route('UDPRoute', 'dns', 'udp', [['udp-a', 1]])]);
      await w.startConvoy();
      await w.startEnvoy();
    });

    after(async () => {
      await w?.dispose();
      for (const b of backends) await b.close();
    });

    test('TCP: bytes echo through tcp_proxy to the backend', async () => {
      const reply = await waitFor(async () => (await tcpExchange(port, 'hello')) === 'tcp-a:hello' && 'ok', {
        what: 'a TCP echo through Envoy',
        timeoutMs: 30_000,
        context: () => `${w.envoy.logContext(20)}\n${w.convoy.logContext(20)}`,
      });
      assert.equal(reply, 'ok');
    });

    test('UDP: datagrams echo through udp_proxy on the same port number', async () => {
      const reply = await waitFor(async () => await udpExchange(port, 'ping'), {
        what: 'a UDP echo through Envoy',
        timeoutMs: 30_000,
        context: () => `${w.envoy.logContext(20)}\n${w.convoy.logContext(20)}`,
      });
      assert.equal(reply, 'udp-a:ping');
    });

    test('status: both routes Accepted with resolved refs; each listener counts its route', async () => {
      for (const [kind, name] of [
        ['TCPRoute', 'echo'],
        ['UDPRoute', 'dns'],
      ] as const) {
        const s = await w.waitStatus(kind, name, (x) => Array.isArray(x.status.parents), `${kind} status`);
        const parent = (s.status.parents as { conditions: unknown }[])[0];
        assert.equal(condition(parent.conditions, 'Accepted')?.status, 'True', `${kind} Accepted`);
        assert.equal(condition(parent.conditions, 'ResolvedRefs')?.status, 'True', `${kind} ResolvedRefs`);
      }
      const gw = await w.waitStatus(
        'Gateway',
        GATEWAY.name,
        (x) => Array.isArray(x.status.listeners),
        'Gateway',
      );
      for (const name of ['tcp', 'udp']) {
        const l = listenerStatus(gw, name);
        assert.equal(l?.attachedRoutes, 1, `${name} attachedRoutes`);
        assert.equal(condition(l?.conditions, 'Programmed')?.status, 'True', `${name} Programmed`);
      }
    });

    test('TCP: a 3:1 weighted TCPRoute splits connections across both backends', async () => {
      w.write('10-tcp.yaml', [
        route('TCPRoute', 'echo', 'tcp', [
          ['tcp-a', 3],
          ['tcp-b', 1],
        ]),
      ]);
      await waitFor(async () => (await tcpExchange(port, 'x')) === 'tcp-b:x', {
        what: 'the second backend to serve a connection',
        timeoutMs: 30_000,
        context: () => w.convoy.logContext(20),
      });
      const counts = new Map<string, number>();
      for (let i = 0; i < 80; i++) {
        const reply = await tcpExchange(port, 'x');
        counts.set(reply, (counts.get(reply) ?? 0) + 1);
      }
      const a = counts.get('tcp-a:x') ?? 0;
      const b = counts.get('tcp-b:x') ?? 0;
      assert.equal(a + b, 80, `every connection answered: ${JSON.stringify([...counts])}`);
      assert.ok(b > 0 && a > b, `3:1 split: tcp-a ${a}, tcp-b ${b}`);
    });

    test('UDP: a 3:1 weighted UDPRoute splits sessions across both backends', async () => {
      w.write('11-udp.yaml', [
        route('UDPRoute', 'dns', 'udp', [
          ['udp-a', 3],
          ['udp-b', 1],
        ]),
      ]);
      // Each exchange uses a new socket, hence a new udp_proxy session and a new pick.
      await waitFor(async () => (await udpExchange(port, 'y')) === 'udp-b:y', {
        what: 'the second UDP backend to answer',
        timeoutMs: 30_000,
        context: () => w.convoy.logContext(20),
      });
      const counts = new Map<string, number>();
      for (let i = 0; i < 80; i++) {
        const reply = (await udpExchange(port, 'y')) ?? 'no reply';
        counts.set(reply, (counts.get(reply) ?? 0) + 1);
      }
      const a = counts.get('udp-a:y') ?? 0;
      const b = counts.get('udp-b:y') ?? 0;
      assert.equal(a + b, 80, `every datagram answered: ${JSON.stringify([...counts])}`);
      assert.ok(b > 0 && a > b, `3:1 split: udp-a ${a}, udp-b ${b}`);
    });

    test('TCP: a route without a valid backend closes connections; the UDP listener keeps serving', async () => {
      w.write('10-tcp.yaml', [route('TCPRoute', 'echo', 'tcp', [['missing', 1]])]);
      await w.waitStatus(
        'TCPRoute',
        'echo',
        (s) =>
          condition((s.status.parents as { conditions: unknown }[])[0]?.conditions, 'ResolvedRefs')
            ?.reason === 'BackendNotFound',
        'TCPRoute ResolvedRefs=False/BackendNotFound',
      );
      // Envoy applies a listener update once its workers take the new filter chain: wait for that.
      await waitFor(async () => (await tcpExchange(port, 'x')) === 'closed', {
        what: 'connections to be closed',
        timeoutMs: 30_000,
        context: () => `${w.envoy.logContext(20)}\n${w.convoy.logContext(20)}`,
      });
      assert.match((await udpExchange(port, 'still')) ?? 'no reply', /^udp-[ab]:still$/);
    });
  });
}
