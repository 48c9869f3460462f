import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { TypeUrl } from '../src/envoy/resources';
import { AdsClient } from '../test/support/ads-client';
import {
  ConvoyProcess,
  convoyMain,
  freePorts,
  isListening,
  loopbackRequest,
  tempDir,
  waitFor,
} from './harness';

/**
 * `convoy serve` as a real process against hostile surroundings (issue 10 rows 8, 9, 11): a port
 * someone else holds, a stdout nobody reads or that cannot be written, and an admin server behind
 * a token file.
 */

const API = 'gateway.networking.k8s.io/v1';

/** A small world (one Gateway) plus `noise` ignored documents with long names: one long debug line each. */
function writeWorld(dir: string, listenerPort: number, noise = 0, salt = ''): void {
  const docs: object[] = [
    {
      apiVersion: API,
      kind: 'GatewayClass',
      metadata: { name: 'convoy' },
      spec: { controllerName: 'convoy.dev/gateway-controller' },
    },
    {
      apiVersion: API,
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: 'default' },
      spec: {
        gatewayClassName: 'convoy',
        listeners: [{ name: 'http', protocol: 'HTTP', port: listenerPort }],
      },
    },
  ];
  for (let i = 0; i < noise; i++) {
    docs.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `noise-${salt}${i}-${'n'.repeat(3000)}`, namespace: 'default' },
    });
  }
  const file = path.join(dir, 'world.yaml');
  fs.writeFileSync(`${file}.tmp`, docs.map((d) => stringify(d)).join('---\n'));
  fs.renameSync(`${file}.tmp`, file);
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** `convoy serve ARGS` with stdout on `stdout` (a file descriptor); resolves how it ended. */
function spawnServe(
  args: string[],
  stdout: number,
): { child: childProcess.ChildProcess; exit: Promise<Exit> } {
  // These tests are about Convoy itself: no managed Envoys (docs/operations.md §14).
  const unmanaged = args.includes('--from-dir') ? ['--no-managed-envoy'] : [];
  const child = childProcess.spawn(process.execPath, [convoyMain(), 'serve', ...unmanaged, ...args], {
    stdio: ['ignore', stdout, 'pipe'],
    env: { ...process.env, CONVOY_LOG_FORMAT: 'json' },
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exit = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, exit };
}

/** Resolves with the exit, or rejects when the process is still running after `ms` (generous: a busy CI). */
function exitedWithin(exit: Promise<Exit>, ms: number, child: childProcess.ChildProcess): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`convoy serve still running after ${ms} ms`));
    }, ms);
  });
  return Promise.race([exit, timeout]).finally(() => clearTimeout(timer));
}

async function metric(adminPort: number, name: string): Promise<number> {
  const r = await loopbackRequest(adminPort, '/metrics');
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(r.body);
  return m ? Number(m[1]) : NaN;
}

describe('convoy serve as a process', { concurrency: false }, () => {
  let tmp: { dir: string; cleanup: () => void };
  let objects: string;
  let devNull: number;

  before(() => {
    tmp = tempDir('serve-lifecycle');
    objects = path.join(tmp.dir, 'objects');
    fs.mkdirSync(objects);
    devNull = fs.openSync('/dev/null', 'w');
  });
  after(() => {
    fs.closeSync(devNull);
    tmp.cleanup();
  });

  test('a port someone else holds: exit 1 with one line, the other port closed again', async () => {
    const [xdsPort, adminPort, listenerPort] = await freePorts(3);
    writeWorld(objects, listenerPort);
    for (const [held, other, what] of [
      [adminPort, xdsPort, 'admin server'],
      [xdsPort, adminPort, 'xDS server'],
    ] as const) {
      const blocker = net.createServer();
      await new Promise<void>((r) => blocker.listen(held, '127.0.0.1', r));
      try {
        const { child, exit } = spawnServe(
          [
            '--from-dir',
            objects,
            '--xds-address',
            `127.0.0.1:${xdsPort}`,
            '--admin-address',
            `127.0.0.1:${adminPort}`,
          ],
          devNull,
        );
        const e = await exitedWithin(exit, 60_000, child);
        assert.equal(e.code, 1, e.stderr);
        assert.equal(
          e.stderr,
          `convoy serve: ${what}: cannot listen on 127.0.0.1:${held}: address already in use\n`,
        );
        assert.equal(await isListening(other), false, `port ${other} closed`);
      } finally {
        await new Promise((r) => blocker.close(r));
      }
    }
  });

  test('an admin port out of range, or off loopback without a token: exit 2 before opening anything', async () => {
    for (const [address, message] of [
      ['127.0.0.1:70000', /port out of range/],
      ['0.0.0.0:9090', /not a loopback address/],
    ] as const) {
      const { child, exit } = spawnServe(['--from-dir', objects, '--admin-address', address], devNull);
      const e = await exitedWithin(exit, 60_000, child);
      assert.equal(e.code, 2);
      assert.match(e.stderr, message);
    }
  });

  for (const destination of ['a pipe nobody reads', '/dev/full'] as const) {
    test(`logging to ${destination} never stops serving; dropped lines are counted; SIGTERM still exits`, async () => {
      const [xdsPort, adminPort, listenerPort] = await freePorts(3);
      writeWorld(objects, listenerPort, 100, 'a');
      let stdout: number;
      let reader: number | undefined;
      if (destination === '/dev/full') stdout = fs.openSync('/dev/full', 'w');
      else {
        const fifo = path.join(tmp.dir, 'stdout.fifo');
        fs.rmSync(fifo, { force: true });
        childProcess.execFileSync('mkfifo', [fifo]);
        // Opened for reading and never read: the pipe fills after 64 kB.
        reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
        stdout = fs.openSync(fifo, fs.constants.O_WRONLY);
      }
      const { child, exit } = spawnServe(
        [
          '--from-dir',
          objects,
          '--xds-address',
          `127.0.0.1:${xdsPort}`,
          '--admin-address',
          `127.0.0.1:${adminPort}`,
          '--log-level',
          'debug',
          '--log-buffer-bytes',
          String(64 * 1024),
          // The raw ADS client below checks only that xDS answers; its security is e2e/xds-auth's.
          '--insecure-plaintext-xds',
        ],
        stdout,
      );
      fs.closeSync(stdout);
      let ads: AdsClient | undefined;
      try {
        const abort = () => (child.exitCode !== null ? `convoy exited: ${child.exitCode}` : undefined);
        await waitFor(
          async () => (await loopbackRequest(adminPort, '/readyz').catch(() => undefined))?.status === 200,
          {
            what: 'convoy /readyz',
            timeoutMs: 60_000,
            abort,
          },
        );
        const dropped = await waitFor(
          async () => {
            const n = await metric(adminPort, 'convoy_log_lines_dropped_total');
            return n > 0 ? n : undefined;
          },
          { what: 'dropped log lines counted', timeoutMs: 60_000, abort },
        );
        if (destination === '/dev/full')
          assert.ok((await metric(adminPort, 'convoy_log_write_errors_total')) > 0);

        // xDS answers: a SotW client of the Gateway's fleet gets its listener.
        ads = new AdsClient({
          address: `127.0.0.1:${xdsPort}`,
          node: { id: 'log-test', cluster: 'default/edge' },
        });
        ads.subscribe(TypeUrl.Listener, []);
        const lds = await ads.next(TypeUrl.Listener, 30_000);
        assert.deepEqual(lds.names, ['http-' + listenerPort]);

        // More logs (a rewritten directory) while nothing drains: more drops, still serving.
        writeWorld(objects, listenerPort, 100, 'b');
        await waitFor(async () => (await metric(adminPort, 'convoy_log_lines_dropped_total')) > dropped, {
          what: 'more dropped lines',
          timeoutMs: 60_000,
          abort,
        });
        assert.equal((await loopbackRequest(adminPort, '/healthz')).status, 200);

        // Exiting waits for the logs only so long: SIGTERM ends the process although they never drain.
        child.kill('SIGTERM');
        const e = await exitedWithin(exit, 60_000, child);
        assert.equal(e.code, 0, e.stderr);
        assert.equal(e.stderr, '');
      } finally {
        ads?.close();
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        if (reader !== undefined) fs.closeSync(reader);
      }
    });
  }

  test('--admin-token-file guards admin (probes open), follows a rewritten file; logs are flushed on exit', async () => {
    const [listenerPort] = await freePorts(1);
    writeWorld(objects, listenerPort);
    const tokenFile = path.join(tmp.dir, 'admin-token');
    fs.writeFileSync(tokenFile, 'first-admin-token-0123456789\n');
    const convoy = await ConvoyProcess.start({
      name: 'convoy-token',
      args: ['--from-dir', objects, '--admin-token-file', tokenFile],
      workDir: path.join(tmp.dir, 'convoy-token'),
    });
    try {
      const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
      assert.equal((await convoy.get('/healthz')).status, 200);
      assert.equal((await convoy.get('/readyz')).status, 200);
      for (const p of ['/status', '/metrics', '/debug/xds', '/'])
        assert.equal((await convoy.get(p)).status, 401, p);
      assert.equal((await convoy.get('/status', bearer('first-admin-token-0123456789'))).status, 200);
      fs.writeFileSync(`${tokenFile}.tmp`, 'second-admin-token-0123456789');
      fs.renameSync(`${tokenFile}.tmp`, tokenFile);
      assert.equal((await convoy.get('/status', bearer('second-admin-token-0123456789'))).status, 200);
      assert.equal((await convoy.get('/status', bearer('first-admin-token-0123456789'))).status, 401);
      assert.ok(!convoy.log().includes('admin-token-0123456789'), 'the token is never logged');
    } finally {
      const exit = await convoy.stop();
      assert.match(exit ?? '', /code 0/);
      // The last lines (written after the signal, just before exit) made it to the file.
      assert.match(convoy.log(), /"msg":"shutting down"/);
      await convoy.dispose();
    }
  });
});
