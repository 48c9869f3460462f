import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import * as path from 'node:path';
import {
  createCa,
  freePorts,
  issueCert,
  request,
  waitFor,
  type CertFiles,
  type EchoResponse,
  type HttpResult,
} from './harness';
import { CONTROLLER, GATEWAY, World, condition, listenerStatus, type Variant } from './support/world';

/**
 * Listener-level TLS features through a real Envoy in file mode, for both ADS variants: client
 * certificate validation (docs/gateway-api.md §25) on a Gateway listener and a ListenerSet
 * listener of the same port, with AllowValidOnly and AllowInsecureFallback; misdirected requests
 * (§26), including an HTTP/2 request coalesced onto a connection made for another SNI; TLS
 * Passthrough and Terminate listeners on one port (§27).
 */

const API = 'gateway.networking.k8s.io/v1';

for (const variant of ['delta', 'sotw'] as Variant[]) {
  describe(`listener TLS features through real Envoy (${variant} ADS)`, { concurrency: false }, () => {
    let w: World;
    /** Port with client validation AllowValidOnly (the default); port with AllowInsecureFallback. */
    let strictPort: number;
    let fallbackPort: number;
    let trusted: CertFiles;
    let untrusted: CertFiles;
    /** The server certificate and the client CA bundle. */
    let secretDocs: () => object[];

    const get = (port: number, host: string, client?: CertFiles): Promise<HttpResult> =>
      request({
        port,
        host,
        path: '/',
        tls: { servername: host, ...(client ? { cert: client.cert, key: client.key } : {}) },
      });
    const backendOf = (r: HttpResult) => {
      assert.equal(r.status, 200, `expected 200, got ${r.status}: ${r.body.slice(0, 200)}`);
      return r.json<EchoResponse>().backend;
    };
    const refused = async (p: Promise<HttpResult>) => {
      const outcome = await p.then(
        (r) => `answered ${r.status}`,
        (e: Error) => `refused: ${e.message}`,
      );
      assert.match(outcome, /^refused/, 'the handshake must fail');
    };

    before(async () => {
      w = await World.create(variant);
      strictPort = w.ports.https;
      [fallbackPort] = await freePorts(1);
      const clientCa = createCa(path.join(w.dir, 'client-pki'), 'client-ca');
      trusted = issueCert(clientCa, { name: 'trusted-client', usage: 'client' });
      const rogueCa = createCa(path.join(w.dir, 'rogue-pki'), 'rogue-ca');
      untrusted = issueCert(rogueCa, { name: 'untrusted-client', usage: 'client' });
      await w.addBackend('app');
      await w.addBackend('tenant');
      await w.addBackend('v2');
      await w.addBackend('v3');
      await w.addTlsBackend('secure', 'pass.example.net');
      const https = (name: string, port: number, hostname?: string) => ({
        name,
        protocol: 'HTTPS',
        port,
        ...(hostname ? { hostname } : {}),
        tls: { mode: 'Terminate', certificateRefs: [{ name: 'server-cert' }] },
        allowedRoutes: { namespaces: { from: 'Same' } },
      });
      const caRefs = [{ group: '', kind: 'ConfigMap', name: 'client-ca' }];
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
            tls: {
              frontend: {
                default: { validation: { caCertificateRefs: caRefs } },
                perPort: [
                  {
                    port: fallbackPort,
                    tls: { validation: { mode: 'AllowInsecureFallback', caCertificateRefs: caRefs } },
                  },
                ],
              },
            },
            listeners: [
              https('strict', strictPort, 'strict.example.com'),
              // The listeners of the conformance test of misdirected requests, on one port.
              https('fallback', fallbackPort),
              https('second', fallbackPort, 'second.example.org'),
              https('wild', fallbackPort, '*.wild.example.org'),
              https('fourth', fallbackPort, 'fourth.wild.example.org'),
              // TLSRouteModeMixed: Passthrough and Terminate on one port.
              {
                name: 'pass',
                protocol: 'TLS',
                port: w.ports.tls,
                hostname: 'pass.example.net',
                tls: { mode: 'Passthrough' },
              },
              {
                name: 'term',
                protocol: 'TLS',
                port: w.ports.tls,
                hostname: 'term.example.net',
                tls: { mode: 'Terminate', certificateRefs: [{ name: 'term-cert' }] },
              },
            ],
          },
        },
        {
          apiVersion: API,
          kind: 'ListenerSet',
          metadata: { name: 'tenants', namespace: GATEWAY.namespace },
          spec: {
            parentRef: { name: GATEWAY.name },
            listeners: [https('tenant', strictPort, 'tenant.example.com')],
          },
        },
      ]);
      secretDocs = () => [
        w.tlsSecretDoc('server-cert', '*.example.com'),
        w.tlsSecretDoc('term-cert', 'term.example.net'),
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'client-ca', namespace: 'default' },
          data: { 'ca.crt': clientCa.cert },
        },
      ];
      w.write('01-secrets.yaml', secretDocs());
      w.write(
        '02-services.yaml',
        ['app', 'tenant', 'v2', 'v3', 'secure'].flatMap((b) => w.serviceDocs(b)),
      );
      const route = (name: string, parent: object, backend: string, hostnames?: string[]) => ({
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name, namespace: 'default' },
        spec: {
          parentRefs: [parent],
          ...(hostnames ? { hostnames } : {}),
          rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
        },
      });
      const tlsRoute = (name: string, parent: object, backend: string, hostname: string) => ({
        apiVersion: API,
        kind: 'TLSRoute',
        metadata: { name, namespace: 'default' },
        spec: {
          parentRefs: [parent],
          hostnames: [hostname],
          rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
        },
      });
      const section = (sectionName: string) => ({ name: GATEWAY.name, sectionName });
      w.write('03-routes.yaml', [
        route('app', section('strict'), 'app'),
        route('tenant', { name: 'tenants', kind: 'ListenerSet', sectionName: 'tenant' }, 'tenant'),
        route('fallback', section('fallback'), 'app', ['fallback.example.com']),
        route('second', section('second'), 'v2'),
        route('wild', section('wild'), 'v3'),
        route('fourth', section('fourth'), 'app'),
        tlsRoute('pass', section('pass'), 'secure', 'pass.example.net'),
        tlsRoute('term', section('term'), 'v2', 'term.example.net'),
      ]);
      await w.startConvoy();
      await w.startEnvoy();
      await waitFor(
        async () =>
          (await get(strictPort, 'strict.example.com', trusted).catch(() => undefined))?.status === 200,
        {
          what: 'first mTLS request through Envoy',
          timeoutMs: 30_000,
          context: () => `${w.envoy.logContext(20)}\n${w.convoy.logContext(20)}`,
        },
      );
    });

    after(async () => {
      await w?.dispose();
    });

    test('AllowValidOnly: a client certificate from the CA is accepted; none, or another CA’s, is refused', async () => {
      assert.equal(backendOf(await get(strictPort, 'strict.example.com', trusted)), 'app');
      await refused(get(strictPort, 'strict.example.com'));
      await refused(get(strictPort, 'strict.example.com', untrusted));
    });

    test('a ListenerSet listener on that port validates client certificates the same way', async () => {
      assert.equal(backendOf(await get(strictPort, 'tenant.example.com', trusted)), 'tenant');
      await refused(get(strictPort, 'tenant.example.com'));
      await refused(get(strictPort, 'tenant.example.com', untrusted));
    });

    test('AllowInsecureFallback: valid, untrusted and missing client certificates are all accepted', async () => {
      for (const client of [trusted, untrusted, undefined])
        assert.equal(backendOf(await get(fallbackPort, 'fallback.example.com', client)), 'app');
      const gw = await w.statusOf('Gateway', GATEWAY.name);
      assert.equal(
        condition(gw?.status.conditions, 'InsecureFrontendValidationMode')?.reason,
        'ConfigurationChanged',
      );
    });

    test('misdirected: a Host another listener of the port wins by SNI gets 421, on every chain', async () => {
      const cases: [sni: string, host: string, expected: string | number][] = [
        ['fallback.example.com', 'fallback.example.com', 'app'],
        ['fallback.example.com', 'second.example.org', 421],
        ['fallback.example.com', 'unknown.example.org', 404],
        ['second.example.org', 'second.example.org', 'v2'],
        ['second.example.org', 'fallback.example.com', 421],
        ['second.example.org', 'unknown.example.org', 421],
        ['a.wild.example.org', 'a.wild.example.org', 'v3'],
        ['a.wild.example.org', 'b.wild.example.org', 'v3'],
        ['a.wild.example.org', 'fourth.wild.example.org', 421],
        ['a.wild.example.org', 'second.example.org', 421],
        ['a.wild.example.org', 'unknown.example.org', 421],
        ['fourth.wild.example.org', 'fourth.wild.example.org', 'app'],
        ['fourth.wild.example.org', 'b.wild.example.org', 421],
        ['unknown.example.org', 'fallback.example.com', 'app'],
        ['unknown.example.org', 'unknown.example.org', 404],
      ];
      for (const [sni, host, expected] of cases) {
        const r = await request({ port: fallbackPort, host, path: '/', tls: { servername: sni } });
        const got = r.status === 200 ? r.json<EchoResponse>().backend : r.status;
        assert.equal(got, expected, `SNI ${sni}, Host ${host}`);
      }
      // Two exact listeners on the client-validated port, one of them a ListenerSet's.
      const r = await request({
        port: strictPort,
        host: 'tenant.example.com',
        path: '/',
        tls: { servername: 'strict.example.com', cert: trusted.cert, key: trusted.key },
      });
      assert.equal(r.status, 421);
    });

    test('misdirected: an HTTP/2 connection made for one SNI answers 421 for a coalesced :authority', async () => {
      const session = http2.connect(`https://127.0.0.1:${fallbackPort}`, {
        servername: 'a.wild.example.org',
        rejectUnauthorized: false,
      });
      try {
        const get = (authority: string) =>
          new Promise<number>((resolve, reject) => {
            const req = session.request({ ':authority': authority, ':path': '/', ':method': 'GET' });
            req.on('response', (h) => resolve(Number(h[':status'])));
            req.on('error', reject);
            req.resume();
            req.end();
          });
        assert.equal(await get('a.wild.example.org'), 200);
        assert.equal(await get('second.example.org'), 421);
        assert.equal(await get('b.wild.example.org'), 200, 'the connection is still usable');
      } finally {
        session.close();
      }
    });

    test('mixed TLS modes on one port: passthrough reaches the TLS backend, terminate the plain one', async () => {
      const pass = await request({
        port: w.ports.tls,
        host: 'pass.example.net',
        tls: { servername: 'pass.example.net' },
      });
      assert.equal(pass.peerCertificate?.subjectCN, 'pass.example.net', "the backend's own certificate");
      const e = pass.json<EchoResponse>();
      assert.equal(e.backend, 'secure');
      assert.equal(e.sni, 'pass.example.net', 'the backend terminated TLS itself');
      const term = await request({
        port: w.ports.tls,
        host: 'term.example.net',
        tls: { servername: 'term.example.net' },
      });
      assert.equal(term.peerCertificate?.subjectCN, 'term.example.net', "the listener's certificate");
      const t = term.json<EchoResponse>();
      assert.equal(t.backend, 'v2');
      assert.equal(t.tls, undefined, 'the backend got the decrypted stream');
      await refused(
        request({ port: w.ports.tls, host: 'other.example.net', tls: { servername: 'other.example.net' } }),
      );
      const gw = await w.statusOf('Gateway', GATEWAY.name);
      for (const name of ['pass', 'term'])
        assert.equal(condition(listenerStatus(gw!, name)?.conditions, 'Accepted')?.status, 'True', name);
    });

    test('a CA bundle that is removed takes the port down with NoValidCACertificate; restored, it serves again', async () => {
      w.write('01-secrets.yaml', [w.tlsSecretDoc('server-cert', '*.example.com')]);
      const s = await w.waitStatus(
        'Gateway',
        GATEWAY.name,
        (st) =>
          condition(listenerStatus(st, 'strict')?.conditions, 'Accepted')?.reason === 'NoValidCACertificate',
        'strict listener refused',
      );
      assert.equal(
        condition(listenerStatus(s, 'strict')?.conditions, 'ResolvedRefs')?.reason,
        'InvalidCACertificateRef',
      );
      await w.waitEnvoySynced('the listener without a CA bundle is gone');
      await refused(get(strictPort, 'strict.example.com', trusted));
      w.write('01-secrets.yaml', secretDocs());
      await waitFor(
        async () =>
          (await get(strictPort, 'strict.example.com', trusted).catch(() => undefined))?.status === 200,
        { what: 'mTLS served again', timeoutMs: 30_000 },
      );
    });
  });
}
