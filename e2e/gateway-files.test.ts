import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as https from 'node:https';
import { request, sleep, waitFor, type EchoResponse, type HttpResult } from './harness';
import {
  CONTROLLER,
  GATEWAY,
  World,
  condition,
  gatewayDocs,
  listenerStatus,
  type Variant,
} from './support/world';

/**
 * Issue 3's end-to-end tests: Gateway API objects in a watched directory, `convoy serve`, and a
 * real Envoy carrying real traffic — for both ADS variants.
 */

const ROUTE_API = 'gateway.networking.k8s.io/v1';

function worldDocs(w: World): object[] {
  return gatewayDocs(
    [
      { name: 'http', protocol: 'HTTP', port: w.ports.http },
      {
        name: 'gw-https',
        protocol: 'HTTPS',
        port: w.ports.https,
        hostname: 'gw.example.com',
        tls: { mode: 'Terminate', certificateRefs: [{ name: 'gw-cert' }] },
      },
      {
        name: 'passthrough',
        protocol: 'TLS',
        port: w.ports.tls,
        hostname: 'secure.example.com',
        tls: { mode: 'Passthrough' },
      },
    ],
    { listenerSets: true },
  );
}

function listenerSetDoc(
  name: string,
  listeners: { name: string; hostname: string; secret: string; port: number; protocol?: string }[],
): object {
  return {
    apiVersion: ROUTE_API,
    kind: 'ListenerSet',
    metadata: { name, namespace: 'default' },
    spec: {
      parentRef: { name: GATEWAY.name },
      listeners: listeners.map((l) => ({
        name: l.name,
        protocol: l.protocol ?? 'HTTPS',
        port: l.port,
        hostname: l.hostname,
        tls: { mode: 'Terminate', certificateRefs: [{ name: l.secret }] },
      })),
    },
  };
}

function httpRoute(name: string, parentRefs: object[], spec: Record<string, unknown>): object {
  return {
    apiVersion: ROUTE_API,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'default' },
    spec: { parentRefs, ...spec },
  };
}

const toListenerSet = (name: string, sectionName: string) => [{ kind: 'ListenerSet', name, sectionName }];
const toGateway = (sectionName: string) => [{ name: GATEWAY.name, sectionName }];
const backend = (name: string, weight?: number) => ({
  name,
  port: 80,
  ...(weight !== undefined ? { weight } : {}),
});

function echo(r: HttpResult): EchoResponse {
  assert.equal(r.status, 200, `expected 200, got ${r.status}: ${r.body.slice(0, 200)}`);
  return r.json<EchoResponse>();
}

for (const variant of ['delta', 'sotw'] as Variant[]) {
  describe(`Gateway API through real Envoy (${variant} ADS)`, { concurrency: false }, () => {
    let w: World;

    const http = (host: string, path = '/', headers: Record<string, string> = {}, method = 'GET') =>
      request({ port: w.ports.http, host, path, headers, method });
    const tlsGet = (sni: string, path = '/', host = sni, port = w.ports.https) =>
      request({ port, host, path, tls: { servername: sni } });

    before(async () => {
      w = await World.create(variant);
      for (const name of ['web', 'api', 'v1', 'v2']) await w.addBackend(name);
      await w.addTlsBackend('secure', 'secure.example.com');
      w.write('00-gateway.yaml', worldDocs(w));
      w.write(
        '01-services.yaml',
        ['web', 'api', 'v1', 'v2', 'secure'].flatMap((n) => w.serviceDocs(n)),
      );
      w.write('02-secrets.yaml', [
        w.tlsSecretDoc('gw-cert', 'gw.example.com'),
        w.tlsSecretDoc('a-cert', 'a.example.com'),
        w.tlsSecretDoc('b-cert', 'b.example.com'),
        w.tlsSecretDoc('wild-cert', '*.wild.example.com'),
        w.tlsSecretDoc('exact-cert', 'exact.wild.example.com'),
        w.tlsSecretDoc('c-cert', 'c.example.com'),
        w.tlsSecretDoc('conflict-cert', 'conflict.example.com'),
      ]);
      w.write('10-listenerset-a.yaml', [
        listenerSetDoc('tenant-a', [
          { name: 'https', hostname: 'a.example.com', secret: 'a-cert', port: w.ports.https },
        ]),
      ]);
      w.write('11-listenerset-b.yaml', [
        listenerSetDoc('tenant-b', [
          { name: 'https', hostname: 'b.example.com', secret: 'b-cert', port: w.ports.https },
        ]),
      ]);
      w.write('12-listenerset-wild.yaml', [
        listenerSetDoc('wild', [
          { name: 'any', hostname: '*.wild.example.com', secret: 'wild-cert', port: w.ports.https },
          { name: 'exact', hostname: 'exact.wild.example.com', secret: 'exact-cert', port: w.ports.https },
        ]),
      ]);
      w.write('20-routes.yaml', [
        httpRoute('paths', toGateway('http'), {
          hostnames: ['www.example.com'],
          rules: [
            { matches: [{ path: { type: 'PathPrefix', value: '/api' } }], backendRefs: [backend('api')] },
            { matches: [{ path: { type: 'Exact', value: '/exact' } }], backendRefs: [backend('v1')] },
            { backendRefs: [backend('web')] },
          ],
        }),
        httpRoute('matches', toGateway('http'), {
          hostnames: ['match.example.com'],
          rules: [
            { matches: [{ headers: [{ name: 'x-env', value: 'canary' }] }], backendRefs: [backend('v2')] },
            { matches: [{ queryParams: [{ name: 'version', value: '2' }] }], backendRefs: [backend('api')] },
            { matches: [{ method: 'POST' }], backendRefs: [backend('web')] },
            { backendRefs: [backend('v1')] },
          ],
        }),
        httpRoute('redirect', toGateway('http'), {
          hostnames: ['redirect.example.com'],
          rules: [
            {
              filters: [
                {
                  type: 'RequestRedirect',
                  requestRedirect: { scheme: 'https', hostname: 'secure.example.com', statusCode: 301 },
                },
              ],
            },
          ],
        }),
        httpRoute('rewrite', toGateway('http'), {
          hostnames: ['rewrite.example.com'],
          rules: [
            {
              matches: [{ path: { type: 'PathPrefix', value: '/old' } }],
              filters: [
                {
                  type: 'URLRewrite',
                  urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/new' } },
                },
                {
                  type: 'RequestHeaderModifier',
                  requestHeaderModifier: { set: [{ name: 'x-rewritten', value: 'rewritten' }] },
                },
              ],
              backendRefs: [backend('web')],
            },
          ],
        }),
        httpRoute('weights', toGateway('http'), {
          hostnames: ['weights.example.com'],
          rules: [{ backendRefs: [backend('v1', 3), backend('v2', 1)] }],
        }),
        httpRoute('gw-https', toGateway('gw-https'), { rules: [{ backendRefs: [backend('v1')] }] }),
        httpRoute('tenant-a', toListenerSet('tenant-a', 'https'), {
          rules: [{ backendRefs: [backend('web')] }],
        }),
        httpRoute('tenant-b', toListenerSet('tenant-b', 'https'), {
          rules: [{ backendRefs: [backend('api')] }],
        }),
        httpRoute('wild-any', toListenerSet('wild', 'any'), { rules: [{ backendRefs: [backend('v1')] }] }),
        httpRoute('wild-exact', toListenerSet('wild', 'exact'), {
          rules: [{ backendRefs: [backend('v2')] }],
        }),
        {
          apiVersion: ROUTE_API,
          kind: 'TLSRoute',
          metadata: { name: 'secure', namespace: 'default' },
          spec: {
            parentRefs: toGateway('passthrough'),
            hostnames: ['secure.example.com'],
            rules: [{ backendRefs: [backend('secure')] }],
          },
        },
      ]);
      await w.startConvoy();
      await w.startEnvoy();
      await waitFor(async () => (await http('www.example.com')).status === 200, {
        what: 'first request through Envoy',
        timeoutMs: 30_000,
        context: () => `${w.envoy.logContext(20)}\n${w.convoy.logContext(20)}`,
      });
    });

    after(async () => {
      await w?.dispose();
    });

    test('HTTP: host and path routing', async () => {
      assert.equal(echo(await http('www.example.com', '/')).backend, 'web');
      assert.equal(echo(await http('www.example.com', '/api/users')).backend, 'api');
      assert.equal(echo(await http('www.example.com', '/exact')).backend, 'v1');
      // PathPrefix matches whole segments only: /apix is not under /api.
      assert.equal(echo(await http('www.example.com', '/apix')).backend, 'web');
      assert.equal((await http('unknown.example.com', '/')).status, 404);
    });

    test('HTTP: header, query and method matches', async () => {
      assert.equal(echo(await http('match.example.com', '/', { 'x-env': 'canary' })).backend, 'v2');
      assert.equal(echo(await http('match.example.com', '/?version=2')).backend, 'api');
      assert.equal(echo(await http('match.example.com', '/', {}, 'POST')).backend, 'web');
      assert.equal(echo(await http('match.example.com', '/')).backend, 'v1');
    });

    test('HTTP: redirect and rewrite', async () => {
      const r = await http('redirect.example.com', '/some/path');
      assert.equal(r.status, 301);
      assert.equal(r.headers.location, 'https://secure.example.com/some/path');
      const e = echo(await http('rewrite.example.com', '/old/thing'));
      assert.equal(e.backend, 'web');
      assert.equal(e.path, '/new/thing');
      assert.equal(e.headers['x-rewritten'], 'rewritten');
    });

    test('HTTP: backend weights are roughly honoured', async () => {
      const counts: Record<string, number> = { v1: 0, v2: 0 };
      for (let i = 0; i < 200; i++) counts[echo(await http('weights.example.com')).backend]! += 1;
      // Expected 150:50; the bounds are wide enough to be stable and narrow enough to catch 1:1.
      assert.ok(counts.v1! > 115 && counts.v1! < 185, `weights 3:1 gave ${JSON.stringify(counts)}`);
    });

    test('HTTPS: one port, a Gateway listener and ListenerSets, each SNI with its own certificate and backend', async () => {
      for (const [sni, cn, backendName] of [
        ['gw.example.com', 'gw.example.com', 'v1'],
        ['a.example.com', 'a.example.com', 'web'],
        ['b.example.com', 'b.example.com', 'api'],
      ] as const) {
        const r = await tlsGet(sni);
        assert.equal(r.peerCertificate?.subjectCN, cn, `certificate for SNI ${sni}`);
        assert.equal(echo(r).backend, backendName, `backend for SNI ${sni}`);
      }
      // A Host header that belongs to another SNI's hostname does not reach that hostname's routes:
      // 421 Misdirected Request (docs/gateway-api.md §26).
      assert.equal((await tlsGet('a.example.com', '/', 'b.example.com')).status, 421);
    });

    test('HTTPS: the exact hostname beats the wildcard; the wildcard serves the rest', async () => {
      const exact = await tlsGet('exact.wild.example.com');
      assert.equal(exact.peerCertificate?.subjectCN, 'exact.wild.example.com');
      assert.equal(echo(exact).backend, 'v2');
      const other = await tlsGet('other.wild.example.com');
      assert.equal(other.peerCertificate?.subjectCN, 'wildcard.wild.example.com');
      assert.equal(echo(other).backend, 'v1');
    });

    test('TLS passthrough by SNI reaches the TLS backend, which terminates itself', async () => {
      const r = await request({
        port: w.ports.tls,
        host: 'secure.example.com',
        tls: { servername: 'secure.example.com' },
      });
      assert.equal(r.peerCertificate?.subjectCN, 'secure.example.com');
      const e = echo(r);
      assert.equal(e.backend, 'secure');
      assert.equal(e.sni, 'secure.example.com');
    });

    test('status: Gateway, ListenerSets and routes carry the expected conditions', async () => {
      const gw = await w.waitStatus(
        'Gateway',
        GATEWAY.name,
        (s) => s.status.attachedListenerSets === 3,
        'Gateway attachedListenerSets = 3',
      );
      assert.equal(condition(gw.status.conditions, 'Accepted')?.status, 'True');
      assert.equal(condition(gw.status.conditions, 'Programmed')?.status, 'True');
      const names = (gw.status.listeners as { name: string }[]).map((l) => l.name).sort();
      assert.deepEqual(
        names,
        ['gw-https', 'http', 'passthrough'],
        'Gateway status lists only its own listeners',
      );
      assert.equal(listenerStatus(gw, 'http')?.attachedRoutes, 5);
      const ls = await w.statusOf('ListenerSet', 'wild');
      assert.ok(ls);
      assert.equal(condition(ls.status.conditions, 'Accepted')?.status, 'True');
      assert.deepEqual(((ls.status.listeners as { name: string }[]) ?? []).map((l) => l.name).sort(), [
        'any',
        'exact',
      ]);
      const route = await w.statusOf('HTTPRoute', 'tenant-a');
      const parents = route?.status.parents as { controllerName: string; conditions: unknown }[];
      assert.equal(parents?.length, 1);
      assert.equal(parents[0]!.controllerName, CONTROLLER);
      assert.equal(condition(parents[0]!.conditions, 'Accepted')?.status, 'True');
      assert.equal(condition(parents[0]!.conditions, 'ResolvedRefs')?.status, 'True');
    });

    test('a ListenerSet added at runtime serves; removed, it stops; other hostnames keep their connections', async () => {
      // A keep-alive connection to a.example.com, plus a slow request in flight across both changes.
      const agent = new https.Agent({
        keepAlive: true,
        maxSockets: 1,
        servername: 'a.example.com',
        rejectUnauthorized: false,
      } as https.AgentOptions);
      const viaAgent = (path: string) =>
        new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
          const req = https.request(
            { host: '127.0.0.1', port: w.ports.https, path, agent, headers: { host: 'a.example.com' } },
            (res) => {
              res.resume();
              res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
            },
          );
          req.on('error', reject);
          req.end();
        });
      try {
        assert.equal((await viaAgent('/')).status, 200);
        const inFlight = viaAgent('/?sleep=3000');
        w.write('13-listenerset-c.yaml', [
          listenerSetDoc('tenant-c', [
            { name: 'https', hostname: 'c.example.com', secret: 'c-cert', port: w.ports.https },
          ]),
          httpRoute('tenant-c', toListenerSet('tenant-c', 'https'), {
            rules: [{ backendRefs: [backend('v2')] }],
          }),
        ]);
        const c = await waitFor(
          async () => {
            const r = await tlsGet('c.example.com');
            return r.status === 200 && r.peerCertificate?.subjectCN === 'c.example.com' ? r : undefined;
          },
          { what: 'c.example.com served after adding its ListenerSet', timeoutMs: 30_000 },
        );
        assert.equal(echo(c).backend, 'v2');
        assert.equal((await inFlight).status, 200, 'in-flight request to another hostname completed');
        const again = await viaAgent('/');
        assert.equal(again.status, 200);
        assert.ok(again.reused, 'the keep-alive connection to a.example.com survived the listener change');

        w.remove('13-listenerset-c.yaml');
        await waitFor(
          async () => {
            try {
              const r = await tlsGet('c.example.com');
              return r.peerCertificate?.subjectCN !== 'c.example.com';
            } catch {
              return true; // no filter chain matches: Envoy closes the connection
            }
          },
          { what: 'c.example.com no longer served after removing its ListenerSet', timeoutMs: 30_000 },
        );
        const afterRemoval = await viaAgent('/');
        assert.equal(afterRemoval.status, 200);
        assert.ok(afterRemoval.reused, 'the keep-alive connection to a.example.com survived the removal');
        assert.equal(echo(await tlsGet('b.example.com')).backend, 'api');
      } finally {
        agent.destroy();
      }
    });

    test('a conflicting ListenerSet listener is not programmed and carries the conformance conditions', async () => {
      w.write('14-listenerset-conflict.yaml', [
        listenerSetDoc('conflict', [
          { name: 'same-host', hostname: 'gw.example.com', secret: 'conflict-cert', port: w.ports.https },
          {
            name: 'wrong-protocol',
            hostname: 'other.example.com',
            secret: 'conflict-cert',
            port: w.ports.http,
          },
        ]),
      ]);
      const s = await w.waitStatus(
        'ListenerSet',
        'conflict',
        (st) => Array.isArray(st.status.listeners) && (st.status.listeners as unknown[]).length === 2,
        'conflict ListenerSet status',
      );
      const hostConflict = listenerStatus(s, 'same-host')!;
      assert.equal(condition(hostConflict.conditions, 'Conflicted')?.status, 'True');
      assert.equal(condition(hostConflict.conditions, 'Conflicted')?.reason, 'HostnameConflict');
      assert.equal(condition(hostConflict.conditions, 'Accepted')?.status, 'False');
      assert.equal(condition(hostConflict.conditions, 'Programmed')?.status, 'False');
      const protoConflict = listenerStatus(s, 'wrong-protocol')!;
      assert.equal(condition(protoConflict.conditions, 'Conflicted')?.reason, 'ProtocolConflict');
      assert.equal(condition(s.status.conditions, 'Accepted')?.status, 'False');
      assert.equal(condition(s.status.conditions, 'Accepted')?.reason, 'ListenersNotValid');
      // The Gateway's own listener keeps its hostname, certificate and routes, once Envoy runs
      // the configuration built with the conflicting ListenerSet.
      await w.waitEnvoySynced('Envoy synced with the conflicting ListenerSet');
      const r = await tlsGet('gw.example.com');
      assert.equal(r.peerCertificate?.subjectCN, 'gw.example.com');
      assert.equal(echo(r).backend, 'v1');
      assert.equal(echo(await http('www.example.com')).backend, 'web');
      w.remove('14-listenerset-conflict.yaml');
    });

    test('a malformed certificate or a broken YAML file changes nothing that was serving', async () => {
      const rejectedBefore = await w.envoy.counter('listener_manager.lds.update_rejected').catch(() => 0);
      // A new ListenerSet whose Secret is not a certificate at all.
      w.write('15-bad-cert.yaml', [
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'bad-cert', namespace: 'default' },
          type: 'kubernetes.io/tls',
          data: {
            'tls.crt': Buffer.from('not a certificate').toString('base64'),
            'tls.key': Buffer.from('nope').toString('base64'),
          },
        },
        listenerSetDoc('bad', [
          { name: 'https', hostname: 'bad.example.com', secret: 'bad-cert', port: w.ports.https },
        ]),
      ]);
      const bad = await w.waitStatus(
        'ListenerSet',
        'bad',
        (s) => Array.isArray(s.status.listeners),
        'bad ListenerSet status',
      );
      const resolved = condition(listenerStatus(bad, 'https')!.conditions, 'ResolvedRefs');
      assert.equal(resolved?.status, 'False');
      assert.equal(resolved?.reason, 'InvalidCertificateRef');
      // A broken YAML file: reported with its name, while everything keeps serving.
      w.writeRaw('16-broken.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: [unclosed\n');
      await waitFor(
        async () => {
          const problems = await w.convoy.getJson<{ file: string; message: string }[]>('/status/problems');
          return problems.some((p) => p.file.endsWith('16-broken.yaml'));
        },
        { what: 'the broken file reported in /status/problems', timeoutMs: 30_000 },
      );
      // Break the routes file too: its last good content stays in service.
      const routesText = (await import('node:fs')).readFileSync(`${w.objectsDir}/20-routes.yaml`, 'utf8');
      w.writeRaw('20-routes.yaml', routesText + '\n---\nkind: HTTPRoute\n  bad: : indentation\n');
      await waitFor(
        async () => {
          const problems = await w.convoy.getJson<{ file: string }[]>('/status/problems');
          return problems.some((p) => p.file.endsWith('20-routes.yaml'));
        },
        { what: 'the broken routes file reported in /status/problems', timeoutMs: 30_000 },
      );
      // Had the broken file changed anything, a build would follow within the controller's
      // debounce (at most 500 ms): give it that long, then check Envoy runs the latest build.
      await sleep(1000);
      await w.waitEnvoySynced('Envoy synced after the broken routes file');
      assert.equal(echo(await http('www.example.com', '/api/x')).backend, 'api');
      for (const [sni, cn] of [
        ['a.example.com', 'a.example.com'],
        ['gw.example.com', 'gw.example.com'],
      ] as const) {
        assert.equal((await tlsGet(sni)).peerCertificate?.subjectCN, cn);
      }
      const rejectedAfter = await w.envoy.counter('listener_manager.lds.update_rejected').catch(() => 0);
      assert.equal(rejectedAfter, rejectedBefore, 'Envoy rejected nothing');
      w.writeRaw('20-routes.yaml', routesText);
      w.remove('16-broken.yaml');
      w.remove('15-bad-cert.yaml');
    });
  });
}
