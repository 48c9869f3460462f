/**
 * Measures what a /metrics scrape costs a file-mode `convoy serve` at bench size: starts it on the
 * bench world with M simulated delta Envoys synced, then repeats (scrape, wait, scrape) and prints,
 * per round, how long each scrape took as the client saw it (the serving thread is otherwise idle,
 * so this is about the scrape's own turn) and the event-loop delay maximum and p99 of the idle
 * window between them (prom-client resets its histogram at each scrape). A tool for finding what a
 * scrape costs (bench/README.md "Event loop (session 18)"), not a benchmark.
 *
 *   node dist/bench/tools/scrape-cost.js [--size large] [--clients 200] [--procs 2] [--rounds 8]
 *     [--idle-ms 3000] [--node-options=...] [--out FILE.json] [-- extra convoy serve args]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { ConvoyProcess } from '../../e2e/harness/convoy';
import { filesConvoyArgs } from './files-convoy-args';
import { freePorts, isListening } from '../../e2e/harness/ports';
import { launchEnv } from '../../src/runtime/memory';
import { nowMs, sleep } from '../common';
import { ClientPool } from '../fanout';
import { whenTrue } from '../e2e/probes';
import { parsePromText } from '../e2e/prom-text';
import { SIZES, World } from '../world';
import { writeWorldFiles } from '../world-files';
import { benchXdsIdentity } from '../xds-identity';

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      size: { type: 'string', default: 'large' },
      clients: { type: 'string', default: '200' },
      procs: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '8' },
      'idle-ms': { type: 'string', default: '3000' },
      'node-options': { type: 'string' },
      out: { type: 'string' },
    },
    allowPositionals: true,
  });
  const size = SIZES[values.size!]!;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-scrape-'));
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
    convoy = await ConvoyProcess.start({
      name: 'convoy-scrape',
      args: [...filesConvoyArgs(worldDir, n, certsDir), ...positionals],
      xdsPort,
      adminPort,
      waitReady: false,
      allowLoopbackEndpoints: false,
      env: { ...launchEnv({ NODE_OPTIONS: values['node-options'] ?? '' }) },
      workDir: path.join(work, 'convoy'),
    });
    const c = convoy;
    await whenTrue(() => isListening(xdsPort!), 'the xDS port', 900_000, 10);
    const clients = Number(values.clients);
    await pool.connect(`127.0.0.1:${xdsPort}`, 'delta', clients, 'sim', clients, 900_000, simTls);
    await sleep(2000);
    const rounds: { scrapeMs: number; bytes: number; idleMaxMs: number; idleP99Ms: number }[] = [];
    await c.get('/metrics');
    for (let i = 0; i < Number(values.rounds); i++) {
      await sleep(Number(values['idle-ms']));
      const t = nowMs();
      const r = await c.get('/metrics');
      const scrapeMs = nowMs() - t;
      const m = parsePromText(r.body);
      const loopMs = (name: string) => (m.find((s) => s.name === name)?.value ?? NaN) * 1000;
      const round = {
        scrapeMs: Math.round(scrapeMs * 10) / 10,
        bytes: r.body.length,
        idleMaxMs: Math.round(loopMs('convoy_nodejs_eventloop_lag_max_seconds') * 10) / 10,
        idleP99Ms: Math.round(loopMs('convoy_nodejs_eventloop_lag_p99_seconds') * 10) / 10,
      };
      console.log(JSON.stringify(round));
      rounds.push(round);
    }
    if (values.out) {
      fs.mkdirSync(path.dirname(path.resolve(values.out)), { recursive: true });
      fs.writeFileSync(
        values.out,
        JSON.stringify({ size: values.size, clients, node: process.version, rounds }, null, 2) + '\n',
      );
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
