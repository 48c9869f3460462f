import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { freePorts, request, waitFor, type EchoResponse } from './harness';
import { GATEWAY, GATEWAY_API, World, gatewayDocs } from './support/world';

/**
 * Issue 16: Envoy's access log, on by default, names the Gateway API listener that served a request
 * and the route that matched it, with the upstream and response flags: real requests through a
 * real Envoy, JSON lines read from its stdout; a dead backend shows as the response flag UF.
 */

const API = GATEWAY_API;
const DEADLINE_MS = 60_000;

function docs(w: World): object[] {
  return [
    ...gatewayDocs([{ name: 'http', protocol: 'HTTP', port: w.ports.http }], { listenerSets: true }),
    {
      apiVersion: API,
      kind: 'ListenerSet',
      metadata: { name: 'team', namespace: 'default' },
      spec: {
        parentRef: { name: GATEWAY.name, kind: 'Gateway', group: 'gateway.networking.k8s.io' },
        listeners: [
          {
            name: 'secure',
            protocol: 'HTTPS',
            port: w.ports.https,
            hostname: 'secure.example.com',
            tls: { mode: 'Terminate', certificateRefs: [{ name: 'secure-cert' }] },
          },
        ],
      },
    },
    {
      apiVersion: API,
      kind: 'HTTPRoute',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        parentRefs: [
          { name: 'team', kind: 'ListenerSet', group: 'gateway.networking.k8s.io' },
          { name: GATEWAY.name },
        ],
        rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
      },
    },
    w.tlsSecretDoc('secure-cert', 'secure.example.com'),
  ];
}

interface AccessLine {
  listener?: string;
  route?: string;
  path?: string;
  status?: string | number;
  upstream_cluster?: string;
  upstream_host?: string;
  response_flags?: string;
  [key: string]: unknown;
}

/** The JSON lines of Envoy's output (its stdout and stderr share the log file) carrying `marker`. */
function accessLines(file: string, marker: string): AccessLine[] {
  const out: AccessLine[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('{') || !line.includes(marker)) continue;
    try {
      out.push(JSON.parse(line) as AccessLine);
    } catch {
      // Not one of ours.
    }
  }
  return out;
}

describe('Envoy access logs', { concurrency: false }, () => {
  let w: World;

  before(async () => {
    w = await World.create('delta');
    await w.addBackend('web');
    w.write('00-gateway.yaml', docs(w));
    w.write('01-services.yaml', w.serviceDocs('web'));
    await w.startConvoy();
    await w.startEnvoy();
  });

  after(async () => {
    await w?.dispose();
  });

  const served = async (req: Parameters<typeof request>[0]) =>
    waitFor(
      async () => {
        const r = await request(req).catch(() => undefined);
        return r?.status === 200 ? r.json<EchoResponse>() : undefined;
      },
      { what: `a 200 for ${req.path}`, timeoutMs: DEADLINE_MS, context: () => w.envoy.logContext(20) },
    );

  test('a request through a ListenerSet listener logs that listener, the route and the upstream', async () => {
    await served({
      port: w.ports.https,
      host: 'secure.example.com',
      path: '/tls-marker?token=secret-value',
      tls: { servername: 'secure.example.com' },
    });
    const [line] = await waitFor(
      async () => {
        const lines = accessLines(w.envoy.logFile, '/tls-marker');
        return lines.length > 0 ? lines : undefined;
      },
      { what: 'the access-log line', timeoutMs: DEADLINE_MS, context: () => w.envoy.logContext(20) },
    );
    assert.equal(line.listener, 'ListenerSet/default/team/secure');
    assert.match(String(line.route), /^HTTPRoute\/default\/web\/rule\/0\/match\/0/);
    assert.equal(line.upstream_cluster, 'default/web/80');
    assert.equal(line.upstream_host, `127.0.0.1:${w.backends.get('web')!.port}`);
    assert.equal(String(line.status), '200');
    assert.equal(line.response_flags, '-');
    assert.equal(line.path, '/tls-marker', 'the query string (which may carry credentials) is not logged');
    assert.ok(!JSON.stringify(line).includes('secret-value'));
  });

  test('a request on the plain HTTP port logs its Envoy listener and the route', async () => {
    await served({ port: w.ports.http, host: 'plain.example.com', path: '/http-marker' });
    const [line] = await waitFor(
      async () => {
        const lines = accessLines(w.envoy.logFile, '/http-marker');
        return lines.length > 0 ? lines : undefined;
      },
      { what: 'the access-log line', timeoutMs: DEADLINE_MS, context: () => w.envoy.logContext(20) },
    );
    assert.equal(line.listener, `http-${w.ports.http}`);
    assert.match(String(line.route), /^HTTPRoute\/default\/web\/rule\/0\/match\/0/);
    assert.equal(line.upstream_cluster, 'default/web/80');
  });

  test('a backend nobody listens on logs the response flag UF and its upstream host', async () => {
    const [deadPort] = await freePorts(1);
    w.write('02-gone.yaml', [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'gone', namespace: 'default' },
        spec: { ports: [{ name: 'main', port: 80, targetPort: deadPort }] },
      },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'gone-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'gone' } },
        addressType: 'IPv4',
        ports: [{ name: 'main', port: deadPort }],
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      },
      {
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name: 'gone', namespace: 'default' },
        spec: {
          parentRefs: [{ name: GATEWAY.name }],
          hostnames: ['gone.example.com'],
          rules: [{ backendRefs: [{ name: 'gone', port: 80 }] }],
        },
      },
    ]);
    await waitFor(
      async () => {
        const r = await request({ port: w.ports.http, host: 'gone.example.com', path: '/uf-marker' });
        return r.status === 503 ? r : undefined;
      },
      { what: 'a 503 from the dead backend', timeoutMs: DEADLINE_MS, context: () => w.envoy.logContext(20) },
    );
    const lines = await waitFor(
      async () => {
        const found = accessLines(w.envoy.logFile, '/uf-marker').filter((l) => String(l.status) === '503');
        return found.length > 0 ? found : undefined;
      },
      { what: 'the access-log line', timeoutMs: DEADLINE_MS, context: () => w.envoy.logContext(20) },
    );
    const line = lines[lines.length - 1];
    assert.match(String(line.response_flags), /\bUF\b/);
    assert.equal(line.upstream_host, `127.0.0.1:${deadPort}`);
    assert.match(String(line.route), /^HTTPRoute\/default\/gone\//);
  });
});
