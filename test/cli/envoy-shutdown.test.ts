import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

const MAIN = path.resolve(__dirname, '..', '..', 'src', 'cli', 'main.js');

/** A stand-in Envoy admin that records each POST path with the time it arrived. */
async function fakeAdmin(): Promise<{
  server: http.Server;
  port: number;
  calls: { path: string; at: number }[];
}> {
  const calls: { path: string; at: number }[] = [];
  const server = http.createServer((req, res) => {
    calls.push({ path: `${req.method} ${req.url}`, at: Date.now() });
    res.end('OK\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, calls };
}

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

function status(port: number, urlPath: string): Promise<number> {
  return new Promise((resolve) => {
    http
      .get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', () => resolve(0));
  });
}

test('envoy-shutdown-manager drains Envoy on SIGTERM and exits only after the drain timeout', async () => {
  const admin = await fakeAdmin();
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      MAIN,
      'envoy-shutdown-manager',
      '--listen',
      `127.0.0.1:${port}`,
      '--envoy-admin',
      `127.0.0.1:${admin.port}`,
      '--drain-timeout',
      '500ms',
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<{ code: number | null; at: number }>((r) =>
    child.once('exit', (code) => r({ code, at: Date.now() })),
  );
  try {
    // Only GET /shutdown is served: a 404 on any other path says the sidecar listens.
    for (let i = 0; i < 200 && (await status(port, '/')) !== 404; i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.equal(admin.calls.length, 0, 'nothing drains before the pod stops');
    child.kill('SIGTERM');
    const exit = await exited;
    assert.equal(exit.code, 0);
    assert.deepEqual(
      admin.calls.map((c) => c.path),
      ['POST /healthcheck/fail', 'POST /drain_listeners?graceful'],
    );
    assert.ok(exit.at - admin.calls[1].at >= 500, 'the sidecar outlives the drain timeout');
  } finally {
    child.kill('SIGKILL');
    admin.server.close();
  }
});
