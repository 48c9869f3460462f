import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import { freePorts, request, waitFor, type EchoResponse, type HttpResult } from './harness';
import { CONTROLLER, GATEWAY, World, type Variant } from './support/world';

/**
 * The SNI-dispatch listener layout (`convoy serve --listener-layout sni-dispatch`, docs/xds.md §16)
 * through a real Envoy in file mode, for both ADS variants: SNI matching equal to the chains
 * layout (exact, wildcard, an exact name the wildcard covers, unknown SNI, no SNI), the 421 rule
 * (docs/gateway-api.md §26), a port with a hostname-less listener (which keeps the chains layout), and a ListenerSet added and removed while
 * a kept-alive connection to another hostname stays open and is never drained.
 */

const API = 'gateway.networking.k8s.io/v1';

for (const variant of ['delta', 'sotw'] as Variant[]) {
  describe(`SNI-dispatch listener layout through real Envoy (${variant} ADS)`, { concurrency: false }, () => {
    let w: World;
    /** The port with a hostname-less listener. */
    let fallbackPort: number;
    let lastError = '';

    /**
     * One request on a new connection, kept alive when `agent` is given.
     */
    const get = async (
      port: number,
      sni: string | undefined,
      host: string,
      agent?: https.Agent,
    ): Promise<HttpResult> => {
      const own = agent ?? new https.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        return await request({ port, host, path: '/', tls: { servername: sni ?? '' }, agent: own });
      } finally {
        if (!agent) own.destroy();
      }
    };
    const answer = async (p: Promise<HttpResult>): Promise<string | number> => {
      const r = await p.then(
        (x) => x,
        (e: Error) => ((lastError = e.message), undefined),
      );
      if (!r) return 'refused';
      return r.status === 200 ? r.json<EchoResponse>().backend : r.status;
    };
    const listenerSetDocs = (name: string, hostname: string, backend: string) => [
      {
        apiVersion: API,
        kind: 'ListenerSet',
        metadata: { name, namespace: 'default' },
        spec: {
          parentRef: { name: GATEWAY.name },
          listeners: [
            {
              name: 'https',
              protocol: 'HTTPS',
              port: w.ports.https,
              hostname,
              tls: { mode: 'Terminate', certificateRefs: [{ name: 'server-cert' }] },
              allowedRoutes: { namespaces: { from: 'Same' } },
            },
          ],
        },
      },
      {
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name, namespace: 'default' },
        spec: {
          parentRefs: [{ name, kind: 'ListenerSet', sectionName: 'https' }],
          rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
        },
      },
    ];

    before(async () => {
      w = await World.create(variant);
      [fallbackPort] = await freePorts(1);
      for (const b of ['app', 'tenant', 'v2', 'v3', 'late']) await w.addBackend(b);
      const listener = (name: string, port: number, hostname?: string) => ({
        name,
        protocol: 'HTTPS',
        port,
        ...(hostname ? { hostname } : {}),
        tls: { mode: 'Terminate', certificateRefs: [{ name: 'server-cert' }] },
        allowedRoutes: { namespaces: { from: 'Same' } },
      });
      const route = (name: string, parent: object, backend: string) => ({
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name, namespace: 'default' },
        spec: { parentRefs: [parent], rules: [{ backendRefs: [{ name: backend, port: 80 }] }] },
      });
      const section = (sectionName: string) => ({ name: GATEWAY.name, sectionName });
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
              listener('second', w.ports.https, 'second.example.org'),
              listener('wild', w.ports.https, '*.wild.example.org'),
              listener('fourth', w.ports.https, 'fourth.wild.example.org'),
              listener('fallback', fallbackPort),
              listener('other', fallbackPort, 'other.example.org'),
            ],
          },
        },
      ]);
      w.write('01-secrets.yaml', [w.tlsSecretDoc('server-cert', '*.example.org')]);
      w.write(
        '02-services.yaml',
        ['app', 'tenant', 'v2', 'v3', 'late'].flatMap((b) => w.serviceDocs(b)),
      );
      w.write('03-routes.yaml', [
        route('second', section('second'), 'v2'),
        route('wild', section('wild'), 'v3'),
        route('fourth', section('fourth'), 'app'),
        route('fallback', section('fallback'), 'app'),
        route('other', section('other'), 'v2'),
      ]);
      w.write('04-tenants.yaml', listenerSetDocs('tenants', 'tenant.example.org', 'tenant'));
      await w.startConvoy(['--listener-layout', 'sni-dispatch']);
      await w.startEnvoy();
      let last: unknown;
      await waitFor(
        async () =>
          (last = await answer(get(w.ports.https, 'tenant.example.org', 'tenant.example.org'))) === 'tenant',
        {
          what: 'first request through the internal listener',
          timeoutMs: 30_000,
          context: () =>
            `last answer: ${String(last)} ${lastError}\n${w.envoy.logContext(5)}\n${w.convoy.logContext(20)}`,
        },
      );
    });

    after(async () => {
      await w?.dispose();
    });

    test('each hostname of the port is an internal listener of its own', async () => {
      const listeners = (await w.envoy.admin('/listeners')).body;
      for (const name of [
        'ListenerSet/default/tenants/https',
        `Gateway/${GATEWAY.namespace}/${GATEWAY.name}/second`,
      ])
        assert.ok(
          listeners.includes(`https-${w.ports.https}/${name}`),
          `internal listener for ${name}:\n${listeners}`,
        );
      assert.ok(!listeners.includes('/fallback'), 'the port with a hostname-less listener keeps its chains');
    });

    test('SNI matching and the 421 rule are those of the chains layout', async () => {
      const cases: [sni: string | undefined, host: string, expected: string | number][] = [
        ['second.example.org', 'second.example.org', 'v2'],
        ['tenant.example.org', 'tenant.example.org', 'tenant'],
        ['a.wild.example.org', 'a.wild.example.org', 'v3'],
        ['a.b.wild.example.org', 'a.b.wild.example.org', 'v3'],
        ['fourth.wild.example.org', 'fourth.wild.example.org', 'app'],
        ['second.example.org', 'tenant.example.org', 421],
        ['a.wild.example.org', 'fourth.wild.example.org', 421],
        ['tenant.example.org', 'unknown.example.org', 421],
        ['unknown.example.org', 'unknown.example.org', 'refused'],
        [undefined, 'second.example.org', 'refused'],
      ];
      for (const [sni, host, expected] of cases)
        assert.equal(await answer(get(w.ports.https, sni, host)), expected, `SNI ${sni}, Host ${host}`);
    });

    test('the internal listener sees the client address, and a Connection: close request gets its response', async () => {
      /** The headers Envoy derives from the client's address (use_remote_address). */
      const clientHeaders = async (port: number, sni: string, close: boolean) => {
        const r = await request({
          port,
          host: sni,
          path: '/',
          headers: { connection: close ? 'close' : 'keep-alive' },
          tls: { servername: sni },
        });
        assert.equal(r.status, 200, `port ${port}, SNI ${sni}: ${r.body}`);
        const { headers, backend } = r.json<EchoResponse>();
        return { backend, xff: headers['x-forwarded-for'], external: headers['x-envoy-external-address'] };
      };
      // The chains layout (the port with a hostname-less listener) is the reference.
      const reference = await clientHeaders(fallbackPort, 'other.example.org', false);
      assert.equal(reference.external, '127.0.0.1', 'the chains layout sees the loopback client');
      for (const [sni, backend] of [
        ['tenant.example.org', 'tenant'],
        ['fourth.wild.example.org', 'app'],
      ])
        for (const close of [false, true])
          assert.deepEqual(
            await clientHeaders(w.ports.https, sni, close),
            { ...reference, backend },
            `SNI ${sni}, Connection: ${close ? 'close' : 'keep-alive'}`,
          );
    });

    test('a port with a hostname-less listener still falls back to it for unknown SNI and no SNI', async () => {
      assert.equal(await answer(get(fallbackPort, 'other.example.org', 'other.example.org')), 'v2');
      assert.equal(await answer(get(fallbackPort, 'unknown.example.org', 'unknown.example.org')), 'app');
      assert.equal(await answer(get(fallbackPort, undefined, 'unknown.example.org')), 'app');
    });

    test('a ListenerSet added and removed: served, then refused, while a connection to another hostname stays up', async () => {
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
      const sockets = new Set<Socket>();
      agent.on('free', (socket: Socket) => sockets.add(socket));
      try {
        assert.equal(
          await answer(get(w.ports.https, 'second.example.org', 'second.example.org', agent)),
          'v2',
        );
        const stats = async () => {
          const s = await w.envoy.stats('listener_manager');
          return {
            draining: Number(s.get('listener_manager.total_filter_chains_draining') ?? 0),
            inPlace: Number(s.get('listener_manager.listener_in_place_updated') ?? 0),
            modified: Number(s.get('listener_manager.listener_modified') ?? 0),
          };
        };
        const before = await stats();

        w.write('05-late.yaml', listenerSetDocs('late', 'late.example.org', 'late'));
        await waitFor(
          async () => (await answer(get(w.ports.https, 'late.example.org', 'late.example.org'))) === 'late',
          {
            what: 'the new hostname served',
            timeoutMs: 30_000,
          },
        );
        w.remove('05-late.yaml');
        await waitFor(
          async () =>
            (await answer(get(w.ports.https, 'late.example.org', 'late.example.org'))) === 'refused',
          {
            what: 'the removed hostname refused',
            timeoutMs: 30_000,
          },
        );
        await w.waitEnvoySynced('the removal applied');

        assert.equal(
          await answer(get(w.ports.https, 'second.example.org', 'second.example.org', agent)),
          'v2',
        );
        assert.equal(sockets.size, 1, 'both requests went over the one kept-alive connection');
        const after = await stats();
        assert.deepEqual(
          after,
          { ...before, draining: 0 },
          'the port listener was neither modified nor drained',
        );
      } finally {
        agent.destroy();
      }
    });
  });
}
