/**
 * Attributes a file-mode `convoy serve`'s steady memory: starts it on the bench world with M
 * simulated delta Envoys synced, then prints /proc figures (RSS, threads, smaps rollup), V8's heap
 * spaces and external memory from /metrics, and optionally writes a heap snapshot (SIGUSR2 with
 * --heapsnapshot-signal) into --snapshot-dir. A tool for finding what holds memory, not a benchmark.
 *
 *   node dist/bench/tools/rss-probe.js [--size large] [--clients 200] [--procs 2] [--snapshot-dir DIR]
 *     [--wait-ms 5000] [--env K=V]... [--node-options=...] [--no-launch-options] [--out FILE.json] [--log-out FILE]
 *     [-- extra convoy serve args]
 *
 * Convoy starts with the image's environment (launchEnv in src/runtime/memory.ts: MALLOC_ENV and
 * LAUNCH_NODE_OPTIONS, which --node-options may override option by option); --no-launch-options
 * leaves the NODE_OPTIONS part out.
 *
 * The smaps breakdown sorts the anonymous mappings: glibc malloc arenas (a 64 MiB-aligned run of
 * anonymous mappings whose sizes sum to 64 MiB, as glibc reserves them), the main malloc heap
 * ([heap]), thread stacks and the rest (mostly V8's heap pages and code space); the peak is VmHWM.
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

const MIB = 1024 * 1024;

function procFigures(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  for (const f of ['VmRSS', 'VmHWM', 'RssAnon', 'RssFile', 'Threads'])
    out[f] = Number(new RegExp(`^${f}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return out;
}

/** One mapping of /proc/PID/smaps: its address range, permissions, name and resident kB. */
interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  name: string;
  rssKb: number;
}

function readSmaps(pid: number): Mapping[] {
  const out: Mapping[] = [];
  let cur: Mapping | undefined;
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      cur = {
        start: BigInt(`0x${head[1]}`),
        end: BigInt(`0x${head[2]}`),
        perms: head[3]!,
        name: head[4]!.trim(),
        rssKb: 0,
      };
      out.push(cur);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && cur) cur.rssKb = Number(rss[1]);
  }
  return out;
}

/** Sums resident memory by kind of mapping (see the file comment for the arena rule). */
export function classifyMappings(maps: readonly Mapping[]): Record<string, number> {
  const ARENA = 64n * 1024n * 1024n;
  const kb: Record<string, number> = {
    arenaCount: 0,
    arenasKb: 0,
    heapKb: 0,
    stackKb: 0,
    fileKb: 0,
    otherAnonKb: 0,
  };
  for (let i = 0; i < maps.length; i++) {
    const m = maps[i]!;
    if (m.name === '[heap]') kb.heapKb! += m.rssKb;
    else if (m.name.startsWith('[stack')) kb.stackKb! += m.rssKb;
    else if (m.name.startsWith('/')) kb.fileKb! += m.rssKb;
    else if (m.name === '' && m.start % ARENA === 0n) {
      let j = i;
      let rss = 0;
      while (j < maps.length && maps[j]!.name === '' && maps[j]!.end - m.start <= ARENA) {
        rss += maps[j]!.rssKb;
        if (maps[j]!.end - m.start === ARENA) break;
        if (j + 1 < maps.length && maps[j + 1]!.start !== maps[j]!.end) break;
        j++;
      }
      if (j < maps.length && maps[j]!.end - m.start === ARENA && maps[j]!.name === '') {
        kb.arenaCount!++;
        kb.arenasKb! += rss;
        i = j;
      } else kb.otherAnonKb! += m.rssKb;
    } else kb.otherAnonKb! += m.rssKb;
  }
  return kb;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      size: { type: 'string', default: 'large' },
      clients: { type: 'string', default: '200' },
      procs: { type: 'string', default: '2' },
      'snapshot-dir': { type: 'string' },
      'wait-ms': { type: 'string', default: '5000' },
      env: { type: 'string', multiple: true, default: [] },
      'node-options': { type: 'string' },
      out: { type: 'string' },
      'log-out': { type: 'string' },
      // Without the image's NODE_OPTIONS (LAUNCH_NODE_OPTIONS); MALLOC_ENV stays.
      'no-launch-options': { type: 'boolean', default: false },
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
      args: [...filesConvoyArgs(worldDir, n, certsDir), ...positionals],
      xdsPort,
      adminPort,
      waitReady: false,
      allowLoopbackEndpoints: false,
      env: {
        ...launchEnv({}),
        ...Object.fromEntries(
          values.env!.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
        ),
        NODE_OPTIONS: [
          values['no-launch-options']
            ? (values['node-options'] ?? '')
            : launchEnv({ NODE_OPTIONS: values['node-options'] ?? '' }).NODE_OPTIONS,
          snapDir ? `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${path.resolve(snapDir)}` : '',
        ]
          .join(' ')
          .trim(),
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
    const syncMs = Math.round(Math.max(...synced.map((r) => r.syncedAt)) - t0);
    console.log(`synced ${clients} sims in ${syncMs} ms`);
    // The event-loop delay histogram resets at each scrape: this one starts the steady window.
    await c.get('/metrics');
    // RSS once a second over the window: at steady state it still moves with each rescan's
    // garbage and each collection, so one reading is a sample of a cycle, not its level.
    const rssSamplesMiB: number[] = [];
    for (const end = nowMs() + Number(values['wait-ms']); nowMs() < end;) {
      await sleep(Math.min(1000, Math.max(0, end - nowMs())));
      rssSamplesMiB.push(Math.round(procFigures(pid).VmRSS! / 1024));
    }
    const sorted = [...rssSamplesMiB].sort((a, b) => a - b);
    const windowRss = {
      medianMiB: sorted[Math.floor(sorted.length / 2)] ?? NaN,
      minMiB: sorted[0] ?? NaN,
      maxMiB: sorted[sorted.length - 1] ?? NaN,
    };
    console.log('steady window RSS', JSON.stringify(windowRss));
    const proc = procFigures(pid);
    const metrics = parsePromText((await c.get('/metrics')).body);
    const loopMs = (name: string) =>
      Math.round((metrics.find((s) => s.name === name)?.value ?? NaN) * 1e4) / 10;
    const steadyLoop = {
      maxMs: loopMs('convoy_nodejs_eventloop_lag_max_seconds'),
      p99Ms: loopMs('convoy_nodejs_eventloop_lag_p99_seconds'),
    };
    console.log('steady event-loop delay', JSON.stringify(steadyLoop));
    const pick = (name: string) =>
      metrics.filter((s) => s.name.includes(name)).map((s) => ({ ...s.labels, v: s.value / MIB }));
    const threads = fs
      .readdirSync(`/proc/${pid}/task`)
      .map((t) => fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim());
    console.log(JSON.stringify({ proc, threads }));
    for (const name of ['heap_space_size_used', 'heap_space_size_total', 'external_memory', 'heap_size'])
      console.log(name, JSON.stringify(pick(name)));
    console.log(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    const collections = c
      .log()
      .split('\n')
      .filter((l) => l.includes('quiet garbage collection'));
    for (const l of collections) console.log(l);
    const mappings = classifyMappings(readSmaps(pid));
    console.log('mappings', JSON.stringify(mappings));
    if (values.out) {
      const sum = (name: string) =>
        metrics.filter((s) => s.name.endsWith(name)).reduce((a, s) => a + s.value, 0) / MIB;
      const record = {
        size: values.size,
        clients,
        node: process.version,
        env: values.env,
        nodeOptions: values['node-options'] ?? '',
        // What Convoy was started with (the launch options included).
        convoyNodeOptions: fs
          .readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .find((kv) => kv.startsWith('NODE_OPTIONS='))
          ?.slice('NODE_OPTIONS='.length),
        serveArgs: positionals,
        syncMs,
        rssMiB: proc.VmRSS! / 1024,
        peakMiB: proc.VmHWM! / 1024,
        threads,
        mappingsMiB: Object.fromEntries(
          Object.entries(mappings).map(([k, v]) => [k, k === 'arenaCount' ? v : v / 1024]),
        ),
        heapTotalMiB: sum('nodejs_heap_size_total_bytes'),
        heapUsedMiB: sum('nodejs_heap_size_used_bytes'),
        externalMiB: sum('nodejs_external_memory_bytes'),
        heapSpaces: pick('heap_space_size'),
        quietCollections: collections,
        steadyEventLoop: steadyLoop,
        windowRss,
        rssSamplesMiB,
      };
      fs.mkdirSync(path.dirname(path.resolve(values.out)), { recursive: true });
      fs.writeFileSync(values.out, JSON.stringify(record, null, 2) + '\n');
    }
    if (values['log-out']) fs.writeFileSync(values['log-out'], c.log());
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
