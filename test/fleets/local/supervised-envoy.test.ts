import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { desiredLocalEnvoys } from '../../../src/fleets/local/desired';
import { SupervisedEnvoy } from '../../../src/fleets/local/supervised-envoy';
import { silentLogger } from '../../../src/observability/logger';

/**
 * The supervisor with a stand-in for Envoy (a script that records its arguments and waits):
 * a process killed from outside is started again with backoff, a binary that cannot start is
 * retried, and stop ends the process without any restart. Real Envoys: e2e/local-fleet.test.ts.
 */

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-supervised-'));
const fake = path.join(root, 'fake-envoy');
// A Node script, so its command line keeps its arguments (as Envoy's does) for its whole life.
fs.writeFileSync(
  fake,
  `#!${process.execPath}\nrequire('node:fs').writeFileSync('args.txt', process.argv.slice(2).join(' '));\nsetInterval(() => {}, 60_000);\n`,
  { mode: 0o755 },
);
const backoff = { initialMs: 10, maxMs: 50, stableMs: 60_000 };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until<T>(what: string, f: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

after(() => fs.rmSync(root, { recursive: true, force: true }));

describe('SupervisedEnvoy', () => {
  test('a process killed from outside is restarted; stop ends it for good', async () => {
    const [spec] = desiredLocalEnvoys(['default/demo'], path.join(root, 'state'));
    let restarts = 0;
    const ports: number[] = [];
    const envoy = new SupervisedEnvoy({
      spec: spec!,
      binary: fake,
      command: { drainTimeS: 0, concurrency: 1, logLevel: 'info' },
      prepare: async (port) => {
        ports.push(port);
        fs.mkdirSync(spec!.dir, { recursive: true });
      },
      logger: silentLogger(),
      backoff,
      onRestart: () => restarts++,
    });
    await envoy.start();
    const first = await until('the first process', () => envoy.pid);
    const args = await until('its arguments', () => {
      const f = path.join(spec!.dir, 'args.txt');
      return fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : undefined;
    });
    assert.match(args, /--use-dynamic-base-id/);
    assert.equal(fs.readFileSync(path.join(spec!.dir, 'envoy.pid'), 'utf8').trim(), String(first));
    assert.equal(envoy.adminPort(), ports[0]);

    process.kill(first, 'SIGKILL');
    const second = await until('a new process', () => (envoy.pid !== first ? envoy.pid : undefined));
    assert.notEqual(second, first);
    assert.equal(restarts, 1);
    assert.equal(ports.length, 2, 'a fresh admin port for the new process');

    await envoy.stop(0);
    assert.equal(envoy.pid, undefined);
    await until('the process to be gone', () => !alive(second!));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(envoy.pid, undefined, 'nothing restarted after stop');
    assert.equal(restarts, 1);
    assert.equal(fs.existsSync(path.join(spec!.dir, 'envoy.pid')), false);
  });

  test('a binary that cannot start is retried with backoff until stopped', async () => {
    const [spec] = desiredLocalEnvoys(['default/missing'], path.join(root, 'state'));
    let restarts = 0;
    const envoy = new SupervisedEnvoy({
      spec: spec!,
      binary: path.join(root, 'no-such-envoy'),
      command: { drainTimeS: 0, concurrency: 1, logLevel: 'info' },
      prepare: async () => void fs.mkdirSync(spec!.dir, { recursive: true }),
      logger: silentLogger(),
      backoff,
      onRestart: () => restarts++,
    });
    await envoy.start();
    await until('three attempts', () => restarts >= 3);
    await envoy.stop(0);
    const seen = restarts;
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(restarts, seen, 'no attempt after stop');
  });

  test('a leftover process named by the pid file and running this bootstrap is stopped first', async () => {
    const [spec] = desiredLocalEnvoys(['default/leftover'], path.join(root, 'state'));
    fs.mkdirSync(spec!.dir, { recursive: true });
    const bootstrap = path.join(spec!.dir, 'envoy.yaml');
    const { spawn } = await import('node:child_process');
    const orphan = spawn(fake, ['-c', bootstrap], { cwd: spec!.dir, stdio: 'ignore' });
    const orphanExit = new Promise((r) => orphan.once('exit', r));
    fs.writeFileSync(path.join(spec!.dir, 'envoy.pid'), `${orphan.pid}\n`);
    await until('the leftover to run', () => fs.existsSync(path.join(spec!.dir, 'args.txt')));
    const envoy = new SupervisedEnvoy({
      spec: spec!,
      binary: fake,
      command: { drainTimeS: 0, concurrency: 1, logLevel: 'info' },
      prepare: async () => undefined,
      logger: silentLogger(),
      backoff,
    });
    await envoy.start();
    await orphanExit;
    assert.ok(envoy.pid !== undefined && envoy.pid !== orphan.pid);
    await envoy.stop(0);

    // A process that does not run this bootstrap is never signalled, whatever the pid file says.
    const stranger = spawn(fake, ['-c', path.join(root, 'other.yaml')], { cwd: root, stdio: 'ignore' });
    fs.writeFileSync(path.join(spec!.dir, 'envoy.pid'), `${stranger.pid}\n`);
    await until('the stranger to run', () => fs.existsSync(path.join(root, 'args.txt')));
    const again = new SupervisedEnvoy({
      spec: spec!,
      binary: fake,
      command: { drainTimeS: 0, concurrency: 1, logLevel: 'info' },
      prepare: async () => undefined,
      logger: silentLogger(),
      backoff,
    });
    await again.start();
    assert.ok(alive(stranger.pid!), 'the stranger still runs');
    await again.stop(0);
    stranger.kill('SIGKILL');
  });
});
