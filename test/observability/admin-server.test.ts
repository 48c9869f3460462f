import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { AdminServer } from '../../src/observability/admin-server';
import { AdminTokenFile, bearerMatches } from '../../src/observability/admin-token';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { silentLogger } from '../../src/observability/logger';
import { TypeUrl } from '../../src/envoy/resources';
import { renderXdsDebugText } from '../../src/xds/sync-view';

function get(port: number, path: string, headers: Record<string, string> = {}, method = 'GET') {
  return new Promise<{ status: number; body: string; type: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers, method, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends a raw request line, so paths are not normalised by the client. */
function rawGet(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () =>
      // Written without half-closing: /metrics answers over several turns, and Node's server ends
      // a half-closed socket's pending request (docs/operations.md §8 "Scrape cost (session 18)").
      s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
    );
    let data = '';
    s.on('data', (c) => (data += c.toString()));
    s.on('end', () => resolve(data.split('\r\n')[0]));
    s.on('error', reject);
  });
}

describe('AdminServer', () => {
  let ready = false;
  let statuses: unknown = [{ kind: 'Gateway', metadata: { name: 'gw' }, status: {} }];
  const metrics = new ConvoyMetrics();
  const server = new AdminServer({
    address: '127.0.0.1:0',
    logger: silentLogger(),
    metrics,
    isReady: () => ready,
    routes: {
      '/status': () => statuses,
      '/status/problems': () => [],
      '/debug/xds': () => ({
        streams: [
          {
            node: { id: 'envoy-1', cluster: 'ns/gw' },
            variant: 'delta',
            types: { [TypeUrl.Listener]: { lastSentNonce: '2', lastAckedNonce: '2' } },
          },
        ],
      }),
      '/debug/boom': () => {
        throw new Error('kaputt');
      },
    },
    textRenderers: { '/debug/xds': (state) => renderXdsDebugText(state) },
  });
  let port = 0;
  before(async () => {
    port = await server.listen();
  });
  after(() => server.stop());

  test('binds the requested loopback address and reports the port', () => {
    assert.ok(port > 0);
    assert.equal(server.port, port);
  });

  test('/healthz is 200 while running; /readyz follows isReady', async () => {
    assert.equal((await get(port, '/healthz')).status, 200);
    assert.equal((await get(port, '/readyz')).status, 503);
    ready = true;
    const r = await get(port, '/readyz');
    assert.equal(r.status, 200);
    assert.equal(r.body, 'ready\n');
  });

  test('/metrics exposes the Convoy registry plus process metrics', async () => {
    metrics.xdsNacks.inc({ type: 'LDS' });
    const r = await get(port, '/metrics');
    assert.equal(r.status, 200);
    assert.match(r.type, /^text\/plain/);
    assert.match(r.body, /convoy_xds_nacks_total\{type="LDS"\} 1/);
    assert.match(r.body, /convoy_process_cpu_seconds_total/);
    assert.match(r.body, /convoy_nodejs_eventloop_lag_seconds/);
  });

  test('JSON providers; undefined means not available', async () => {
    const r = await get(port, '/status');
    assert.equal(r.status, 200);
    assert.equal(r.type, 'application/json');
    assert.deepEqual(JSON.parse(r.body), statuses);
    statuses = undefined;
    assert.equal((await get(port, '/status')).status, 404);
    statuses = [];
    assert.deepEqual(JSON.parse((await get(port, '/status/')).body), []);
  });

  test('/debug/xds as JSON, and as a table with ?format=text or Accept: text/plain', async () => {
    const json = await get(port, '/debug/xds');
    assert.equal(JSON.parse(json.body).streams[0].node.id, 'envoy-1');
    for (const r of [
      await get(port, '/debug/xds?format=text'),
      await get(port, '/debug/xds', { accept: 'text/plain' }),
    ]) {
      assert.equal(r.status, 200);
      assert.match(r.type, /^text\/plain/);
      assert.match(r.body, /^NODE\s+FLEET\s+VARIANT\s+LDS\n/);
      assert.match(r.body, /envoy-1\s+ns\/gw\s+delta\s+SYNCED/);
    }
  });

  test('errors: unknown path 404, provider throws 500, non-GET 405, HEAD has no body', async () => {
    const nf = await get(port, '/nope');
    assert.equal(nf.status, 404);
    assert.match(nf.body, /\/debug\/xds/);
    assert.equal((await get(port, '/debug/boom')).status, 500);
    assert.equal((await get(port, '/status', {}, 'POST')).status, 405);
    const head = await get(port, '/healthz', {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
  });

  test('refuses dot segments and encoded slashes instead of normalising them', async () => {
    assert.match(await rawGet(port, '/status/../metrics'), / 400 /);
    assert.match(await rawGet(port, '/status/%2e%2e/metrics'), / 400 /);
    assert.match(await rawGet(port, '/debug%2fxds'), / 400 /);
    assert.match(await rawGet(port, '//metrics'), / 400 /);
    assert.match(await rawGet(port, '/metrics'), / 200 /);
  });

  test('rejects reserved or malformed route paths', () => {
    const base = { address: '127.0.0.1:0', logger: silentLogger(), metrics: new ConvoyMetrics() };
    assert.throws(() => new AdminServer({ ...base, routes: { '/healthz': () => 1 } }), /reserved/);
    assert.throws(() => new AdminServer({ ...base, routes: { status: () => 1 } }), /invalid/);
  });
});

describe('AdminServer with a token', () => {
  const server = new AdminServer({
    address: '127.0.0.1:0',
    logger: silentLogger(),
    metrics: new ConvoyMetrics({ processMetrics: true }),
    token: 's3cret',
    routes: { '/status': () => [] },
  });
  let port = 0;
  before(async () => {
    port = await server.listen();
  });
  after(() => server.stop());

  test('probes stay open; everything else needs the bearer token', async () => {
    assert.equal((await get(port, '/healthz')).status, 200);
    assert.equal((await get(port, '/readyz')).status, 200, 'no isReady means ready');
    assert.equal((await get(port, '/status')).status, 401);
    assert.equal((await get(port, '/metrics', { authorization: 'Bearer wrong' })).status, 401);
    assert.equal((await get(port, '/status', { authorization: 'Bearer s3cret' })).status, 200);
    // processMetrics already registered by ConvoyMetrics: not registered twice.
    const m = await get(port, '/metrics', { authorization: 'Bearer s3cret' });
    assert.equal(m.body.match(/^# TYPE convoy_process_cpu_seconds_total/gm)?.length, 1);
  });

  test('a second server on the same port fails to listen with the error', async () => {
    const clash = new AdminServer({
      address: `127.0.0.1:${port}`,
      logger: silentLogger(),
      metrics: new ConvoyMetrics(),
    });
    await assert.rejects(clash.listen(), /EADDRINUSE/);
  });
});

describe('AdminServer with a token file', () => {
  let dir = '';
  let file = '';
  let server: AdminServer;
  let port = 0;
  const problems: string[] = [];
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  /** Replaces the file the way a Secret volume or an editor does: write aside, then rename. */
  const rewrite = (content: string) => {
    fs.writeFileSync(`${file}.tmp`, content);
    fs.renameSync(`${file}.tmp`, file);
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-token-'));
    file = path.join(dir, 'token');
    fs.writeFileSync(file, 'first-token-0123456789\n');
    const token = await AdminTokenFile.load(file, (m) => problems.push(m));
    server = new AdminServer({
      address: '127.0.0.1:0',
      logger: silentLogger(),
      metrics: new ConvoyMetrics(),
      token: () => token.current(),
      routes: { '/status': () => [] },
    });
    port = await server.listen();
  });
  after(async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the token is the file content without surrounding whitespace; probes need none', async () => {
    assert.equal((await get(port, '/healthz')).status, 200);
    assert.equal((await get(port, '/status')).status, 401);
    assert.equal((await get(port, '/status', auth('first-token-0123456789'))).status, 200);
    assert.equal((await get(port, '/status', auth('first-token-012345678'))).status, 401);
    assert.equal((await get(port, '/status', { authorization: 'Basic first-token-0123456789' })).status, 401);
  });

  test('a rewritten file takes effect without a restart; an invalid rewrite keeps the last good token', async () => {
    rewrite('second-token-0123456789');
    assert.equal((await get(port, '/status', auth('second-token-0123456789'))).status, 200);
    assert.equal((await get(port, '/status', auth('first-token-0123456789'))).status, 401);
    rewrite('short');
    assert.equal((await get(port, '/status', auth('second-token-0123456789'))).status, 200);
    assert.equal((await get(port, '/status', auth('short'))).status, 401);
    assert.equal((await get(port, '/status', auth('second-token-0123456789'))).status, 200);
    assert.equal(problems.length, 1, 'one report per change of the file');
    assert.match(problems[0], /shorter than 16 characters; the previous admin token stays in use/);
    fs.rmSync(file);
    assert.equal((await get(port, '/status', auth('second-token-0123456789'))).status, 200);
    assert.match(problems[1], /ENOENT/);
  });

  test('loading refuses a missing, empty, short or multi-word token file with its name', async () => {
    const bad = path.join(dir, 'bad');
    await assert.rejects(AdminTokenFile.load(bad), /cannot read admin token file .*bad: ENOENT/);
    for (const [content, message] of [
      ['  \n', /is empty/],
      ['0123456789', /shorter than 16/],
      ['two words 0123456789', /spaces or characters outside visible ASCII/],
    ] as const) {
      fs.writeFileSync(bad, content);
      await assert.rejects(AdminTokenFile.load(bad), message);
    }
  });

  test('bearerMatches accepts exactly "Bearer <token>"', () => {
    const t = 'a-token-of-some-length';
    assert.equal(bearerMatches(`Bearer ${t}`, t), true);
    for (const header of [undefined, '', 'Bearer', 'Bearer ', `bearer ${t}`, `Bearer ${t} `, `Bearer ${t}x`])
      assert.equal(bearerMatches(header, t), false, String(header));
  });
});

describe('AdminServer serving only health', () => {
  let ready = false;
  const server = new AdminServer({
    address: '127.0.0.1:0',
    logger: silentLogger(),
    metrics: new ConvoyMetrics(),
    endpoints: 'health',
    isReady: () => ready,
    routes: { '/status': () => [] },
  });
  let port = 0;
  before(async () => {
    port = await server.listen();
  });
  after(() => server.stop());

  test('answers /healthz and /readyz and nothing else, token or not', async () => {
    assert.equal((await get(port, '/healthz')).status, 200);
    assert.equal((await get(port, '/readyz')).status, 503);
    ready = true;
    assert.equal((await get(port, '/readyz')).status, 200);
    for (const p of ['/', '/metrics', '/status', '/debug/xds']) {
      const r = await get(port, p);
      assert.equal(r.status, 404, p);
      assert.match(r.body, /serves only \/healthz and \/readyz/);
    }
  });
});
