import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
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
 * listener of the same port, with AllowValidOnly and AllowInsecureFallback.
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
      const https = (name: string, port: number, hostname: string) => ({
        name,
        protocol: 'HTTPS',
        port,
        hostname,
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
              https('fallback', fallbackPort, 'fallback.example.com'),
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
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'client-ca', namespace: 'default' },
          data: { 'ca.crt': clientCa.cert },
        },
      ];
      w.write('01-secrets.yaml', secretDocs());
      w.write('02-services.yaml', [...w.serviceDocs('app'), ...w.serviceDocs('tenant')]);
      const route = (name: string, parent: object, backend: string) => ({
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name, namespace: 'default' },
        spec: { parentRefs: [parent], rules: [{ backendRefs: [{ name: backend, port: 80 }] }] },
      });
      w.write('03-routes.yaml', [
        route('app', { name: GATEWAY.name }, 'app'),
        route('tenant', { name: 'tenants', kind: 'ListenerSet', sectionName: 'tenant' }, 'tenant'),
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
