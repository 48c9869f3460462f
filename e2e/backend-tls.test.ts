import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { request, waitFor, type HttpResult } from './harness';
import { CONTROLLER, GATEWAY, World, type Variant } from './support/world';
import { createCertificateAuthority, issueLeafCertificate, type PemPair } from '../src/pki/x509-issuer';

/**
 * BackendTLSPolicy and the Gateway's backend client certificate (docs/gateway-api.md §24) through a
 * real Envoy in file mode, for both ADS variants: a Node HTTPS backend with a certificate of a test
 * CA (src/pki) answers only when Envoy trusts that CA and checks the right name, and it reports the
 * client certificate Envoy presented.
 */

const API = 'gateway.networking.k8s.io/v1';
const HOST = 'backend-tls.example.com';
const BACKEND_NAME = 'backend.internal.example';
const BACKEND_URI = 'spiffe://example.test/backend';
const DAY = 86_400_000;

interface TlsEcho {
  sni: string | undefined;
  clientCertificate: string | undefined;
  path: string;
}

interface TlsBackend {
  port: number;
  close(): Promise<void>;
}

/** An HTTPS server that asks for (but does not require) a client certificate and echoes what it saw. */
async function startTlsBackend(cert: PemPair, clientCa: string): Promise<TlsBackend> {
  const server = https.createServer(
    { cert: cert.certPem, key: cert.keyPem, requestCert: true, rejectUnauthorized: false, ca: clientCa },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      const echo: TlsEcho = {
        sni: (socket as TLSSocket & { servername?: string }).servername || undefined,
        clientCertificate: socket.authorized && peer?.subject ? String(peer.subject.CN) : undefined,
        path: req.url ?? '',
      };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(echo));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A Service (port 443, named `https`) and EndpointSlice for the TLS backend. */
function serviceDocs(name: string, port: number): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: { ports: [{ name: 'https', port: 443, targetPort: port, appProtocol: 'HTTPS' }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    },
  ];
}

function policy(name: string, service: string, hostname: string, ca: string, sans?: object[]): object {
  return {
    apiVersion: API,
    kind: 'BackendTLSPolicy',
    metadata: { name, namespace: 'default' },
    spec: {
      targetRefs: [{ group: '', kind: 'Service', name: service, sectionName: 'https' }],
      validation: {
        caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: ca }],
        hostname,
        ...(sans ? { subjectAltNames: sans } : {}),
      },
    },
  };
}

const configMap = (name: string, pem: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data: { 'ca.crt': pem },
});

function echoOf(r: HttpResult): TlsEcho {
  assert.equal(r.status, 200, `expected 200, got ${r.status}: ${r.body.slice(0, 200)}`);
  return r.json<TlsEcho>();
}

for (const variant of ['delta', 'sotw'] as Variant[]) {
  describe(`BackendTLSPolicy through real Envoy (${variant} ADS)`, { concurrency: false }, () => {
    let w: World;
    let backend: TlsBackend;
    let caPem = '';
    let otherCaPem = '';
    const backendDocs = (ca: string) => [
      ...routes.flatMap((r) => serviceDocs(r, backend.port)),
      configMap('backend-ca', ca),
      configMap('other-ca', otherCaPem),
    ];
    const get = (path: string) => request({ port: w.ports.http, host: HOST, path });
    const routes = ['good', 'wrong-ca', 'wrong-san', 'uri-san'];

    before(async () => {
      const ca = await createCertificateAuthority({ commonName: 'backend-ca', validityMs: DAY });
      const otherCa = await createCertificateAuthority({ commonName: 'other-ca', validityMs: DAY });
      const serving = await issueLeafCertificate(ca, {
        commonName: BACKEND_NAME,
        usage: 'server',
        dnsNames: [BACKEND_NAME],
        uris: [BACKEND_URI],
        validityMs: DAY,
      });
      const client = await issueLeafCertificate(ca, {
        commonName: 'gateway-client',
        usage: 'client',
        validityMs: DAY,
      });
      backend = await startTlsBackend(serving, ca.certPem);
      caPem = ca.certPem;
      otherCaPem = otherCa.certPem;
      w = await World.create(variant);
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
            tls: { backend: { clientCertificateRef: { group: '', kind: 'Secret', name: 'gateway-client' } } },
          },
        },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'gateway-client', namespace: 'default' },
          type: 'kubernetes.io/tls',
          data: {
            'tls.crt': Buffer.from(client.certPem).toString('base64'),
            'tls.key': Buffer.from(client.keyPem).toString('base64'),
          },
        },
      ]);
      w.write('01-backends.yaml', backendDocs(caPem));
      w.write('02-route.yaml', [
        {
          apiVersion: API,
          kind: 'HTTPRoute',
          metadata: { name: 'tls-backends', namespace: 'default' },
          spec: {
            parentRefs: [{ name: GATEWAY.name }],
            hostnames: [HOST],
            rules: routes.map((r) => ({
              matches: [{ path: { type: 'PathPrefix', value: `/${r}` } }],
              backendRefs: [{ name: r, port: 443 }],
            })),
          },
        },
      ]);
      w.write('03-policies.yaml', [
        policy('good', 'good', BACKEND_NAME, 'backend-ca'),
        policy('wrong-ca', 'wrong-ca', BACKEND_NAME, 'other-ca'),
        policy('wrong-san', 'wrong-san', 'elsewhere.example', 'backend-ca'),
        policy('uri-san', 'uri-san', BACKEND_NAME, 'backend-ca', [{ type: 'URI', uri: BACKEND_URI }]),
      ]);
      await w.startConvoy();
      await w.startEnvoy();
      await waitFor(async () => (await get('/good')).status === 200, {
        what: 'first request through Envoy to the TLS backend',
        timeoutMs: 30_000,
        context: () => `${w.envoy.logContext(20)}\n${w.convoy.logContext(20)}`,
      });
    });

    after(async () => {
      await w?.dispose();
      await backend?.close();
    });

    test('the right CA and hostname: traffic passes, SNI is the hostname, the client certificate is presented', async () => {
      const echo = echoOf(await get('/good'));
      assert.equal(echo.sni, BACKEND_NAME);
      assert.equal(echo.clientCertificate, 'gateway-client');
    });

    test('a CA that did not sign the backend certificate: the request fails with a 5xx', async () => {
      const r = await get('/wrong-ca');
      assert.ok(r.status >= 500, `status ${r.status}`);
    });

    test('a hostname the certificate does not carry: the request fails with a 5xx', async () => {
      const r = await get('/wrong-san');
      assert.ok(r.status >= 500, `status ${r.status}`);
    });

    test('a URI subjectAltName authenticates the backend (BackendTLSPolicySANValidation)', async () => {
      assert.equal(echoOf(await get('/uri-san')).sni, BACKEND_NAME);
    });

    test('policies report Accepted and ResolvedRefs on the Gateway ancestor; the Gateway ResolvedRefs', async () => {
      const s = await w.waitStatus(
        'BackendTLSPolicy',
        'good',
        (st) => Array.isArray(st.status.ancestors) && st.status.ancestors.length === 1,
        'policy ancestors',
      );
      const [ancestor] = s.status.ancestors as {
        ancestorRef: { name: string };
        controllerName: string;
        conditions: { type: string; status: string; reason: string }[];
      }[];
      assert.equal(ancestor.ancestorRef.name, GATEWAY.name);
      assert.equal(ancestor.controllerName, CONTROLLER);
      assert.deepEqual(
        ancestor.conditions.map((c) => [c.type, c.status, c.reason]),
        [
          ['Accepted', 'True', 'Accepted'],
          ['ResolvedRefs', 'True', 'ResolvedRefs'],
        ],
      );
      const gw = await w.statusOf('Gateway', GATEWAY.name);
      const resolved = (gw?.status.conditions as { type: string; status: string }[]).find(
        (c) => c.type === 'ResolvedRefs',
      );
      assert.equal(resolved?.status, 'True');
    });

    test('a CA ConfigMap emptied: the policy is not accepted and its backend answers 5xx; restored, traffic returns', async () => {
      w.write('01-backends.yaml', backendDocs(''));
      await w.waitStatus(
        'BackendTLSPolicy',
        'good',
        (st) =>
          JSON.stringify(st.status).includes('"NoValidCACertificate"') &&
          JSON.stringify(st.status).includes('"InvalidCACertificateRef"'),
        'NoValidCACertificate',
      );
      await waitFor(async () => (await get('/good')).status >= 500, {
        what: 'good backend refused',
        timeoutMs: 20_000,
      });
      w.write('01-backends.yaml', backendDocs(caPem));
      await waitFor(async () => (await get('/good')).status === 200, {
        what: 'traffic back',
        timeoutMs: 20_000,
      });
    });
  });
}
