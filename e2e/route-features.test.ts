import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, waitFor, type EchoResponse, type HttpResult } from './harness';
import { CONTROLLER, GATEWAY, World, condition, type Variant } from './support/world';
import { startWebSocketEchoBackend, websocketAccept, websocketRoundTrip } from './support/websocket';

/**
 * Per-route HTTPRoute features through a real Envoy in file mode, for both ADS variants: retries
 * (docs/gateway-api.md §19), CORS (§20), named rules (§21), backendRef filters (§22), WebSocket backends (§23),
 * destination port matching (§10). Each feature is proven by traffic, and a change to one route's
 * policy is shown to leave the Listener alone.
 */

const API = 'gateway.networking.k8s.io/v1';
const HOST = 'features.example.com';

function route(name: string, rules: object[]): object {
  return {
    apiVersion: API,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'default' },
    spec: { parentRefs: [{ name: GATEWAY.name }], hostnames: [HOST], rules },
  };
}

const prefix = (value: string) => [{ path: { type: 'PathPrefix', value } }];
const flaky = [{ name: 'flaky', port: 80 }];

/** The retry routes; `codesRetry` is the policy of /retry, which one test changes. */
function retryRoutes(codesRetry: object): object[] {
  return [
    route('retries', [
      { matches: prefix('/retry'), retry: codesRetry, backendRefs: flaky },
      {
        matches: prefix('/timeout-retry'),
        timeouts: { backendRequest: '500ms' },
        retry: { attempts: 2, backoff: '10ms' },
        backendRefs: flaky,
      },
      { matches: prefix('/no-retry'), backendRefs: flaky },
    ]),
  ];
}

/** The CORS routes of the conformance test, with `maxAge` of /cors-1 as a parameter. */
function corsRoutes(maxAge: number): object[] {
  const cors = (policy: object, path: string) => ({
    matches: prefix(path),
    filters: [{ type: 'CORS', cors: policy }],
    backendRefs: flaky,
  });
  return [
    route('cors', [
      cors(
        {
          allowOrigins: ['https://www.foo.com', 'https://*.bar.com'],
          allowMethods: ['GET', 'OPTIONS'],
          allowHeaders: ['x-header-1', 'x-header-2'],
          exposeHeaders: ['x-header-3', 'x-header-4'],
          allowCredentials: true,
          maxAge,
        },
        '/cors-1',
      ),
      cors(
        { allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: true },
        '/cors-any',
      ),
    ]),
  ];
}

function echo(r: HttpResult): EchoResponse {
  assert.equal(r.status, 200, `expected 200, got ${r.status}: ${r.body.slice(0, 200)}`);
  return r.json<EchoResponse>();
}

let keySeq = 0;

for (const variant of ['delta', 'sotw'] as Variant[]) {
  describe(`HTTPRoute features through real Envoy (${variant} ADS)`, { concurrency: false }, () => {
    let w: World;
    const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
      request({ port: w.ports.http, host: HOST, path, headers, method });
    /** A request whose first `failFirst` attempts at the backend fail as `failWith` says. */
    const flakyGet = async (path: string, failFirst: number, failWith = '500') => {
      const key = `${variant}-${++keySeq}`;
      const r = await get(`${path}?key=${key}&failFirst=${failFirst}&failWith=${failWith}`);
      return { r, attempts: w.backends.get('flaky')!.attempts(key) };
    };

    before(async () => {
      w = await World.create(variant);
      await w.addBackend('flaky');
      await w.addBackend('other');
      w.backends.set('ws', await startWebSocketEchoBackend('ws'));
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
            listeners: [{ name: 'http', protocol: 'HTTP', port: w.ports.http }],
          },
        },
      ]);
      w.write('01-services.yaml', [
        ...w.serviceDocs('flaky'),
        ...w.serviceDocs('other'),
        ...w.serviceDocs('ws', { appProtocol: 'kubernetes.io/ws' }),
      ]);
      const portRoute = (name: string, port: number, path: string) => ({
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name, namespace: 'default' },
        spec: {
          parentRefs: [{ name: GATEWAY.name, port }],
          hostnames: [HOST],
          rules: [{ matches: prefix(path), backendRefs: flaky }],
        },
      });
      w.write('15-ports.yaml', [
        portRoute('right-port', w.ports.http, '/right-port'),
        portRoute('wrong-port', w.ports.https, '/wrong-port'),
      ]);
      w.write('14-websocket.yaml', [
        route('websocket', [{ matches: prefix('/ws'), backendRefs: [{ name: 'ws', port: 80 }] }]),
      ]);
      w.write('10-retries.yaml', retryRoutes({ codes: [500], attempts: 3 }));
      w.write('11-cors.yaml', corsRoutes(3600));
      const setBackend = (value: string) => [
        { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'Backend', value }] } },
      ];
      w.write('13-backend-filters.yaml', [
        route('backend-filters', [
          {
            matches: prefix('/backend-filters'),
            filters: [
              {
                type: 'RequestHeaderModifier',
                requestHeaderModifier: { set: [{ name: 'x-rule', value: 'rule-applied' }] },
              },
            ],
            backendRefs: [
              { name: 'flaky', port: 80, weight: 10, filters: setBackend('flaky') },
              { name: 'other', port: 80, weight: 10, filters: setBackend('other') },
            ],
          },
        ]),
      ]);
      w.write('12-named.yaml', [
        route('named', [
          { name: 'checkout', matches: [...prefix('/named'), ...prefix('/also-named')], backendRefs: flaky },
          { matches: prefix('/unnamed'), backendRefs: flaky },
          { name: 'checkout', matches: prefix('/duplicate'), backendRefs: flaky },
        ]),
      ]);
      await w.startConvoy();
      await w.startEnvoy();
      await waitFor(async () => (await get('/no-retry')).status === 200, {
        what: 'first request through Envoy',
        timeoutMs: 30_000,
        context: () => `${w.envoy.logContext(20)}\n${w.convoy.logContext(20)}`,
      });
    });

    after(async () => {
      await w?.dispose();
    });

    test('retry: a listed code is retried up to `attempts` times, then the last failure is returned', async () => {
      const ok = await flakyGet('/retry', 2);
      assert.equal(echo(ok.r).attempt, 3, 'two failures, then the third attempt answers');
      const exhausted = await flakyGet('/retry', 4);
      assert.equal(exhausted.r.status, 500);
      assert.equal(exhausted.attempts, 4, 'the first attempt and 3 retries');
    });

    test('retry: a code that is not listed is not retried; no retry policy, no retry', async () => {
      const unlisted = await flakyGet('/retry', 1, '503');
      assert.equal(unlisted.r.status, 503);
      assert.equal(unlisted.attempts, 1);
      const plain = await flakyGet('/no-retry', 1);
      assert.equal(plain.r.status, 500);
      assert.equal(plain.attempts, 1);
    });

    test('retry (HTTPRouteRetryConnectionError): a reset connection is retried', async () => {
      const reset = await flakyGet('/retry', 1, 'reset');
      assert.equal(echo(reset.r).attempt, 2);
      const plain = await flakyGet('/no-retry', 1, 'reset');
      assert.notEqual(plain.r.status, 200, 'without a retry policy the reset reaches the client');
    });

    test('retry (HTTPRouteRetryBackendTimeout): an attempt exceeding backendRequest is retried', async () => {
      const slow = await flakyGet('/timeout-retry', 1, 'hang');
      assert.equal(echo(slow.r).attempt, 2, 'the hanging attempt timed out and the retry answered');
      const tooSlow = await flakyGet('/timeout-retry', 3, 'hang');
      assert.equal(tooSlow.r.status, 504, 'every attempt timed out');
      assert.equal(tooSlow.attempts, 3, 'the first attempt and 2 retries');
    });

    test('changing a route retry policy updates its RouteConfiguration, never the Listener', async () => {
      const modified = await w.envoy.counter('listener_manager.listener_modified');
      const added = await w.envoy.counter('listener_manager.listener_added');
      w.write('10-retries.yaml', retryRoutes({ codes: [500, 503], attempts: 1 }));
      await waitFor(async () => (await flakyGet('/retry', 1, '503')).r.status === 200, {
        what: 'the new retry policy (503 retried) in effect',
        timeoutMs: 30_000,
      });
      await w.waitEnvoySynced('Envoy in sync');
      const once = await flakyGet('/retry', 2);
      assert.equal(once.r.status, 500, 'attempts is now 1');
      assert.equal(once.attempts, 2);
      assert.equal(await w.envoy.counter('listener_manager.listener_modified'), modified);
      assert.equal(await w.envoy.counter('listener_manager.listener_added'), added);
      const s = await w.statusOf('HTTPRoute', 'retries');
      const parents = s?.status.parents as { conditions: unknown }[];
      assert.equal(condition(parents[0].conditions, 'Accepted')?.status, 'True');
    });

    const preflight = (path: string, origin: string, extra: Record<string, string> = {}) =>
      get(path, { origin, 'access-control-request-method': 'GET', ...extra }, 'OPTIONS');

    test('CORS: Envoy answers a preflight from an allowed origin itself, with the policy', async () => {
      const before = w.backends.get('flaky')!.requests;
      for (const origin of ['https://www.foo.com', 'https://www.bar.com', 'https://xpto.www.bar.com']) {
        const r = await preflight('/cors-1', origin, {
          'access-control-request-headers': 'x-header-1, x-header-2',
        });
        assert.equal(r.status, 200);
        assert.equal(r.headers['access-control-allow-origin'], origin);
        assert.equal(r.headers['access-control-allow-methods'], 'GET, OPTIONS');
        assert.equal(r.headers['access-control-allow-headers'], 'x-header-1, x-header-2');
        assert.equal(r.headers['access-control-expose-headers'], 'x-header-3, x-header-4');
        assert.equal(r.headers['access-control-max-age'], '3600');
        assert.equal(r.headers['access-control-allow-credentials'], 'true');
      }
      assert.equal(w.backends.get('flaky')!.requests, before, 'no preflight reached the backend');
    });

    test('CORS: other origins get no CORS headers; simple requests get them from an allowed origin', async () => {
      const before = w.backends.get('flaky')!.requests;
      for (const origin of ['https://foobar.com', 'http://www.foo.com', 'https://bar.com']) {
        const r = await preflight('/cors-1', origin);
        assert.equal(r.headers['access-control-allow-origin'], undefined, origin);
      }
      assert.equal(w.backends.get('flaky')!.requests, before, 'Envoy answers refused preflights itself');
      const simple = await get('/cors-1', { origin: 'https://www.foo.com' });
      assert.equal(echo(simple).backend, 'flaky');
      assert.equal(simple.headers['access-control-allow-origin'], 'https://www.foo.com');
      assert.equal(simple.headers['access-control-expose-headers'], 'x-header-3, x-header-4');
      const other = await get('/cors-1', { origin: 'https://foobar.com' });
      assert.equal(other.status, 200);
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      const none = await get('/no-retry', { origin: 'https://www.foo.com' });
      assert.equal(
        none.headers['access-control-allow-origin'],
        undefined,
        'a route without CORS adds nothing',
      );
    });

    test("CORS: '*' with credentials echoes the origin, method and headers instead of '*'", async () => {
      const r = await get(
        '/cors-any',
        {
          origin: 'https://other.foo.com:12345',
          'access-control-request-method': 'PUT',
          'access-control-request-headers': 'x-header-1, x-header-2',
        },
        'OPTIONS',
      );
      assert.equal(r.status, 200);
      assert.equal(r.headers['access-control-allow-origin'], 'https://other.foo.com:12345');
      assert.equal(r.headers['access-control-allow-methods'], 'PUT');
      assert.equal(r.headers['access-control-allow-headers'], 'x-header-1, x-header-2');
      assert.equal(r.headers['access-control-allow-credentials'], 'true');
    });

    test('changing a CORS policy updates the RouteConfiguration, never the Listener', async () => {
      const modified = await w.envoy.counter('listener_manager.listener_modified');
      w.write('11-cors.yaml', corsRoutes(60));
      await waitFor(
        async () =>
          (await preflight('/cors-1', 'https://www.foo.com')).headers['access-control-max-age'] === '60',
        { what: 'the new maxAge in effect', timeoutMs: 30_000 },
      );
      await w.waitEnvoySynced('Envoy in sync');
      assert.equal(await w.envoy.counter('listener_manager.listener_modified'), modified);
    });

    test('named rules: traffic, per-rule Envoy stats under the name, a duplicate name dropped in status', async () => {
      const stat = `vhost.${HOST}.route.HTTPRoute/default/named/checkout.upstream_rq_completed`;
      const before = await w.envoy.counter(stat);
      for (const path of ['/named', '/also-named', '/named/x'])
        assert.equal(echo(await get(path)).backend, 'flaky');
      assert.equal(echo(await get('/unnamed')).backend, 'flaky');
      let seen = before;
      await waitFor(async () => (seen = await w.envoy.counter(stat)) === before + 3, {
        what: `${stat} counting both matches of the named rule`,
        timeoutMs: 20_000,
        context: () => `counter went from ${before} to ${seen}`,
      });
      assert.equal((await get('/duplicate')).status, 404, 'the rule reusing a name is not served');
      const s = await w.statusOf('HTTPRoute', 'named');
      const parents = s?.status.parents as { conditions: unknown }[];
      const partly = condition(parents[0].conditions, 'PartiallyInvalid');
      assert.equal(partly?.status, 'True');
      assert.match(partly?.message ?? '', /rule 2 "checkout": the name is already used by rule 0/);
    });

    test('backendRef filters: each backend gets its own request headers, the rule filter applies to all', async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 30; i++) {
        const e = echo(await get('/backend-filters'));
        assert.equal(e.headers.backend, e.backend, 'the Backend header names the backend that answered');
        assert.equal(e.headers['x-rule'], 'rule-applied');
        seen.add(e.backend);
      }
      assert.deepEqual([...seen].sort(), ['flaky', 'other'], 'weights 10:10 reach both backends');
    });

    test('WebSocket: an upgrade to a kubernetes.io/ws backend goes through and carries bytes both ways', async () => {
      const payload = Buffer.from([0x81, 0x05, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0xff, 0x7f]);
      const r = await websocketRoundTrip(w.ports.http, HOST, '/ws', payload);
      assert.equal(r.statusLine, 'HTTP/1.1 101 Switching Protocols', r.head);
      assert.match(r.head.toLowerCase(), /\r\nupgrade: websocket/);
      assert.match(r.head, /x-backend: ws/i);
      const accept = r.head
        .split('\r\n')
        .find((l) => l.toLowerCase().startsWith('sec-websocket-accept:'))
        ?.slice('sec-websocket-accept:'.length)
        .trim();
      assert.equal(accept, websocketAccept(r.key), 'the backend answered this very upgrade');
      assert.deepEqual(r.echoed, payload, 'the tunnel carried the bytes to the backend and back');
    });

    test('destination port matching: a parentRef port selects the listener on it, or none', async () => {
      assert.equal(echo(await get('/right-port')).backend, 'flaky');
      assert.equal(
        (await get('/wrong-port')).status,
        404,
        'a route for a port without listener is not served',
      );
      const s = await w.statusOf('HTTPRoute', 'wrong-port');
      const parents = s?.status.parents as { conditions: unknown }[];
      assert.equal(parents.length, 1);
      const accepted = condition(parents[0].conditions, 'Accepted');
      assert.equal(`${accepted?.status}/${accepted?.reason}`, 'False/NoMatchingParent');
      assert.equal(condition(parents[0].conditions, 'ResolvedRefs')?.status, 'True');
    });
  });
}
