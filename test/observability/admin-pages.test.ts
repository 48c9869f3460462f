import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { AdminServer } from '../../src/observability/admin-server';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { silentLogger } from '../../src/observability/logger';

function get(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>(
    (resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      });
      req.on('error', reject);
      req.end();
    },
  );
}

/** Opens an event stream and collects its `data:` messages until closed. */
function openStream(port: number, path: string) {
  const messages: string[] = [];
  let status = 0;
  let ended = false;
  let waiters: (() => void)[] = [];
  const wake = () => {
    for (const w of waiters) w();
    waiters = [];
  };
  const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
    status = res.statusCode ?? 0;
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6));
        if (data.length > 0) messages.push(data.join('\n'));
      }
      wake();
    });
    res.on('end', () => {
      ended = true;
      wake();
    });
    wake();
  });
  req.on('error', () => {
    ended = true;
    wake();
  });
  const until = async (predicate: () => boolean) => {
    while (!predicate()) await new Promise<void>((r) => waiters.push(r));
  };
  return {
    messages,
    status: () => status,
    ended: () => ended,
    until,
    close: () => req.destroy(),
  };
}

describe('AdminServer pages and event streams', () => {
  const subscribers = new Set<(data: string) => void>();
  let unsubscribed = 0;
  const server = new AdminServer({
    address: '127.0.0.1:0',
    logger: silentLogger(),
    metrics: new ConvoyMetrics(),
    pages: {
      '/fleet': () => ({ contentType: 'text/html; charset=utf-8', body: '<!doctype html><p>fleet</p>' }),
    },
    eventStreams: {
      '/fleet/events': (send) => {
        send('first\nline two');
        subscribers.add(send);
        return () => {
          subscribers.delete(send);
          unsubscribed++;
        };
      },
    },
  });
  let port = 0;
  before(async () => {
    port = await server.listen();
  });
  after(() => server.stop());

  test('serves a page with a policy that allows only its own scripts, styles and connections', async () => {
    const r = await get(port, '/fleet');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(r.body, '<!doctype html><p>fleet</p>');
    const policy = String(r.headers['content-security-policy']);
    assert.match(policy, /default-src 'none'/);
    assert.match(policy, /script-src 'self'/);
    assert.match(policy, /frame-ancestors 'none'/);
    assert.equal(r.headers['x-frame-options'], 'DENY');
    assert.match((await get(port, '/')).body, /\/fleet\n[\s\S]*\/fleet\/events/);
  });

  test('streams messages as server-sent events, multi-line data split into data: lines', async () => {
    const s = openStream(port, '/fleet/events');
    await s.until(() => s.messages.length >= 1);
    assert.equal(s.status(), 200);
    assert.deepEqual(s.messages, ['first\nline two']);
    for (const send of subscribers) send('{"n":2}');
    await s.until(() => s.messages.length >= 2);
    assert.equal(s.messages[1], '{"n":2}');
    const before = unsubscribed;
    s.close();
    await waitUntil(() => unsubscribed > before);
  });

  test('refuses a request naming another host (DNS rebinding) and accepts loopback names', async () => {
    for (const host of ['attacker.example', 'attacker.example:9090', '10.0.0.1']) {
      const r = await get(port, '/fleet', { host });
      assert.equal(r.status, 421, host);
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost']) {
      assert.equal((await get(port, '/fleet', { host })).status, 200, host);
    }
    // Probes keep working whatever the Host header says.
    assert.equal((await get(port, '/healthz', { host: 'pod-ip.example' })).status, 200);
  });

  test('stop() ends open event streams instead of waiting for them', async () => {
    const s = openStream(port, '/fleet/events');
    await s.until(() => s.messages.length >= 1);
    await server.stop();
    await s.until(() => s.ended());
    assert.equal(subscribers.size, 0);
  });
});

describe('AdminServer event-stream client limit', () => {
  test('answers 503 past the limit', async () => {
    const server = new AdminServer({
      address: '127.0.0.1:0',
      logger: silentLogger(),
      metrics: new ConvoyMetrics(),
      eventStreams: { '/events': (send) => (send('hello'), () => {}) },
    });
    const port = await server.listen();
    const open = [];
    try {
      for (let i = 0; i < 32; i++) {
        const s = openStream(port, '/events');
        open.push(s);
        await s.until(() => s.messages.length >= 1);
      }
      const r = await get(port, '/events');
      assert.equal(r.status, 503);
      assert.equal(r.headers['retry-after'], '10');
    } finally {
      for (const s of open) s.close();
      await server.stop();
    }
  });

  test('refuses a page path that is also a route', () => {
    const base = { address: '127.0.0.1:0', logger: silentLogger(), metrics: new ConvoyMetrics() };
    const page = () => ({ contentType: 'text/plain', body: '' });
    assert.throws(
      () => new AdminServer({ ...base, routes: { '/x': () => 1 }, pages: { '/x': page } }),
      /given twice/,
    );
    assert.throws(() => new AdminServer({ ...base, pages: { '/': page } }), /reserved/);
  });
});

async function waitUntil(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !predicate(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(predicate(), 'condition not reached');
}
