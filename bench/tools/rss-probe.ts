/**
 * Attributes a file-mode `convoy serve`'s steady memory: starts it on the bench world with M
 * simulated delta Envoys synced, then prints /proc figures (RSS, threads, smaps rollup), V8's heap
 * spaces and external memory from /metrics, and optionally writes a heap snapshot (SIGUSR2 with
 * --heapsnapshot-signal) into --snapshot-dir. A tool for finding what holds memory, not a benchmark.
 *
 *   node dist/bench/tools/rss-probe.js [--size large] [--clients 200] [--procs 2] [--snapshot-dir DIR]
 *     [--wait-ms 5000] [-- extra convoy serve args]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { ConvoyProcess } from '../../e2e/harness/convoy';
import { freePorts, isListening } from '../../e2e/harness/ports';
import { MALLOC_ENV } from '../../src/runtime/memory';
import { nowMs, sleep } from '../common';
import { ClientPool } from '../fanout';
import { whenTrue } from '../e2e/probes';
import { parsePromText } from '../e2e/prom-text';
import { SIZES, World } from '../world';
import { writeWorldFiles } from '../world-files';
import { benchXdsIdentity } from '../xds-identity';

const MIB = 1024 * 1024;

function procFigures(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  for (const f of ['VmRSS', 'VmHWM', 'RssAnon', 'RssFile', 'Threads'])
    out[f] = Number(new RegExp(`^${f}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return out;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      size: { type: 'string', default: 'large' },
      clients: { type: 'string', default: '200' },
      procs: { type: 'string', default: '2' },
      'snapshot-dir': { type: 'string' },
      'wait-ms': { type: 'string', default: '5000' },
    },
    allowPositionals: true,
  });
  const size = SIZES[values.size!]!;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-rss-'));
  const [xdsPort, adminPort, httpsPort, httpPort] = await freePorts(4);
  const world = new World({ size, httpsPort: httpsPort!, httpPort: httpPort! });
  let convoy: ConvoyProcess | undefined;
  let pool: ClientPool | undefined;
  try {
    const certsDir = path.join(work, 'xds-pki');
    const { simTls } = await benchXdsIdentity(certsDir);
    const worldDir = path.join(work, 'world');
    const n = writeWorldFiles(world, worldDir);
    pool = await ClientPool.start(Number(values.procs));
    const snapDir = values['snapshot-dir'];
    const t0 = nowMs();
    convoy = await ConvoyProcess.start({
      name: 'convoy-rss',
      args: [
        '--from-dir',
        worldDir,
        '--from-dir-max-files',
        String(Math.max(10_000, 2 * n)),
        '--envoy-bind-address',
        '127.0.0.1',
        '--xds-certs-dir',
        certsDir,
        '--xds-unknown-fleet-timeout',
        '30m',
        ...positionals,
      ],
      xdsPort,
      adminPort,
      waitReady: false,
      allowLoopbackEndpoints: false,
      env: {
        ...MALLOC_ENV,
        ...(snapDir
          ? {
              NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${path.resolve(snapDir)}`,
            }
          : {}),
      },
      workDir: path.join(work, 'convoy'),
    });
    const c = convoy;
    const pid = c.pid!;
    await whenTrue(() => isListening(xdsPort!), 'the xDS port', 900_000, 10);
    const clients = Number(values.clients);
    const synced = await pool.connect(
      `127.0.0.1:${xdsPort}`,
      'delta',
      clients,
      'sim',
      clients,
      900_000,
      simTls,
    );
    console.log(
      `synced ${clients} sims in ${Math.round(Math.max(...synced.map((r) => r.syncedAt)) - t0)} ms`,
    );
    await sleep(Number(values['wait-ms']));
    const proc = procFigures(pid);
    const metrics = parsePromText((await c.get('/metrics')).body);
    const pick = (name: string) =>
      metrics.filter((s) => s.name.includes(name)).map((s) => ({ ...s.labels, v: s.value / MIB }));
    const threads = fs
      .readdirSync(`/proc/${pid}/task`)
      .map((t) => fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim());
    console.log(JSON.stringify({ proc, threads }));
    for (const name of ['heap_space_size_used', 'heap_space_size_total', 'external_memory', 'heap_size'])
      console.log(name, JSON.stringify(pick(name)));
    console.log(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    if (snapDir) {
      fs.mkdirSync(snapDir, { recursive: true });
      process.kill(pid, 'SIGUSR2');
      await sleep(3000);
      for (;;) {
        const done = fs.readdirSync(snapDir).filter((f) => f.endsWith('.heapsnapshot'));
        const sz = done.length ? fs.statSync(path.join(snapDir, done[0]!)).size : 0;
        await sleep(5000);
        if (sz > 0 && fs.statSync(path.join(snapDir, done[0]!)).size === sz) break;
      }
      console.log('snapshot written; after:', JSON.stringify(procFigures(pid)));
    }
  } finally {
    await pool?.exit();
    await convoy?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
