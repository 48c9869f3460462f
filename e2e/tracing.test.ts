import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { request, waitFor } from './harness';
import { CONTROLLER, GATEWAY, World } from './support/world';

/**
 * Issue 16: `convoy serve --tracing HOST:PORT` makes real Envoys export spans over OTLP/gRPC to that
 * collector. The collector here is a plain HTTP/2 server that records the gRPC calls it receives
 * (the path names the OTLP trace service and the body carries the fleet's service name).
 */

const API = 'gateway.networking.k8s.io/v1';
const DEADLINE_MS = 60_000;
const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

interface Call {
  path: string;
  body: Buffer;
}

/** An HTTP/2 server answering every gRPC call with an empty OK message, recording the calls. */
async function startCollector(): Promise<{ port: number; calls: Call[]; close: () => Promise<void> }> {
  const calls: Call[] = [];
  const server = http2.createServer();
  // Envoy resets its streams and sessions when it stops: that is not a test failure.
  server.on('session', (session) => session.on('error', () => undefined));
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      calls.push({ path: String(headers[':path']), body: Buffer.concat(chunks) });
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      // One empty length-prefixed message: ExportTraceServiceResponse with no fields.
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('OpenTelemetry tracing through real Envoy', { concurrency: false }, () => {
  let w: World;
  let collector: Awaited<ReturnType<typeof startCollector>>;

  before(async () => {
    collector = await startCollector();
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
          listeners: [{ name: 'http', protocol: 'HTTP', port: w.ports.http }],
        },
      },
      {
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name: 'web', namespace: 'default' },
        spec: { parentRefs: [{ name: GATEWAY.name }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
      },
    ]);
    w.write('01-services.yaml', w.serviceDocs('web'));
    await w.startConvoy(['--tracing', `127.0.0.1:${collector.port}`]);
    await w.startEnvoy();
  });

  after(async () => {
    await w?.dispose();
    await collector?.close();
  });

  test('requests produce an OTLP export to the collector naming the fleet', async () => {
    await waitFor(
      async () => {
        const r = await request({ port: w.ports.http, host: 'www.example.com', path: '/traced' }).catch(
          () => undefined,
        );
        return r?.status === 200 ? r : undefined;
      },
      { what: 'traffic through Envoy', timeoutMs: DEADLINE_MS, context: () => w.envoy.logContext(20) },
    );
    // Envoy flushes spans on a timer (5 s by default): keep sending until an export arrives.
    const call = await waitFor(
      async () => {
        await request({ port: w.ports.http, host: 'www.example.com', path: '/traced' }).catch(
          () => undefined,
        );
        return collector.calls.find((c) => c.path === EXPORT_PATH);
      },
      {
        what: 'an OTLP export',
        timeoutMs: DEADLINE_MS,
        intervalMs: 500,
        context: () => w.envoy.logContext(20),
      },
    );
    const body = call.body.toString('latin1');
    assert.ok(body.includes(`${GATEWAY.namespace}/${GATEWAY.name}`), 'the service name is the fleet');
    assert.ok(body.includes('/traced'), 'the span carries the request path');
  });
});
