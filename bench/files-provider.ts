/**
 * File provider benchmark, as a user of file mode sees it: a bench world written one object per
 * file (world-files.ts), then (a) process start → every object in the store, and (b) a file
 * replaced atomically (route edited, certificate rotated) → its object in the store, plus (c)
 * the periodic safety-net rescan with nothing changed, and (d) a file rewritten in place (which
 * waits for the settle time, by design). Each run is a fresh child process; figures are the
 * median of the runs with their spread, beside the machine's calibration figure.
 *
 *   node dist/bench/files-provider.js [--size large] [--runs 3] [--changes 20] [--format yaml|json]
 *                                     [--out bench/results/FILE.json]
 *
 * Only the store is measured here; a real Envoy serving the change is the end-to-end bench's.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileProvider } from '../src/providers/files/provider';
import { silentLogger } from '../src/observability/logger';
import { ObjectStore } from '../src/store/store';
import { keyOf } from '../src/store/objects';
import type { KubeObject } from '../src/store/objects';
import { calibrationMs, gitShortRev, median, nowMs, percentile, round } from './common';
import type { WorldSize } from './world';
import { SIZES, World } from './world';
import type { WorldFileFormat } from './world-files';
import { objectFileName, objectFileText, writeObjectFile, writeWorldFiles } from './world-files';

interface ChildResult {
  /** Process start (the child's time origin) → store synced, ms. */
  coldStartMs: number;
  /** CPU (user + system, every thread) spent until synced, ms. */
  coldStartCpuMs: number;
  objects: number;
  problems: number;
  rssMiB: number;
  /** Atomic replace → object in the store, ms, per change. */
  routeEditMs: number[];
  certRotateMs: number[];
  /** A rescan of the whole tree with nothing changed, ms. */
  idleRescanMs: number[];
  /** A file rewritten in place → in the store, ms (includes the settle time). */
  inPlaceEditMs: number[];
}

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};

/**
 * A size by name: the bench sizes, or `n<N>` for N ListenerSets shaped like the worlds
 * (two routes per ListenerSet, a Service per 2.5 ListenerSets, as in large).
 */
function sizeOf(name: string): WorldSize {
  if (SIZES[name]) return SIZES[name];
  const n = /^n(\d+)$/.exec(name);
  if (!n) throw new Error(`unknown size ${name}`);
  const listenerSets = Number(n[1]);
  return {
    ...SIZES.large,
    name,
    listenerSets,
    routes: 2 * listenerSets,
    services: Math.ceil(listenerSets / 2.5),
  };
}

/** In the child: start a provider on `dir`, time it, then time changes. */
async function child(dir: string, sizeName: string, changes: number, format: WorldFileFormat): Promise<void> {
  // The provider holds nothing open that keeps a process alive (Convoy's servers do that).
  const keepAlive = setInterval(() => undefined, 1000);
  const store = new ObjectStore();
  const provider = new FileProvider({
    dir,
    store,
    logger: silentLogger(),
    pollIntervalMs: 0,
    maxEntries: 1_000_000,
  });
  await provider.start();
  const coldStartMs = performance.now();
  const usage = process.cpuUsage();
  const result: ChildResult = {
    coldStartMs,
    coldStartCpuMs: (usage.user + usage.system) / 1000,
    objects: store.size(),
    problems: provider.problems().length,
    rssMiB: round(process.memoryUsage().rss / (1024 * 1024), 0),
    routeEditMs: [],
    certRotateMs: [],
    idleRescanMs: [],
    inPlaceEditMs: [],
  };

  const world = new World({ size: sizeOf(sizeName) });
  /** Writes `obj`'s file with `write`, resolves with ms until the store holds that version. */
  const timeChange = (obj: KubeObject, write: () => void): Promise<number> =>
    new Promise((resolve) => {
      const key = keyOf(obj);
      const started = nowMs();
      const off = store.onChange((c) => {
        if (c.key !== key || c.type !== 'put') return;
        off();
        resolve(nowMs() - started);
      });
      write();
    });
  const pause = () => new Promise((r) => setTimeout(r, 100));
  for (let k = 0; k < changes; k++) {
    const route = world.editRoute((k * 397) % world.size.routes)[0];
    result.routeEditMs.push(await timeChange(route, () => writeObjectFile(dir, route, format)));
    await pause();
    const secret = world.rotateCertificate((k * 211) % world.size.listenerSets).objects[0];
    result.certRotateMs.push(await timeChange(secret, () => writeObjectFile(dir, secret, format)));
    await pause();
  }
  for (let k = 0; k < 3; k++) {
    const t = nowMs();
    await provider.reload();
    result.idleRescanMs.push(nowMs() - t);
  }
  for (let k = 0; k < 3; k++) {
    const route = world.editRoute(k)[0];
    const path = join(dir, objectFileName(route, format));
    result.inPlaceEditMs.push(
      await timeChange(route, () => writeFileSync(path, objectFileText(route, format))),
    );
  }
  await provider.stop();
  clearInterval(keepAlive);
  process.stdout.write(JSON.stringify(result) + '\n');
}

function runChild(
  node: string,
  dir: string,
  size: string,
  changes: number,
  format: string,
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      node,
      [__filename, '--child', dir, '--size', size, '--changes', String(changes), '--format', format],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('close', (code) => {
      if (code !== 0) reject(new Error(`child exited with ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()!) as ChildResult);
    });
  });
}

function summary(values: number[]): { median: number; min: number; max: number; p90?: number } {
  return {
    median: round(median(values), 1),
    min: round(Math.min(...values), 1),
    max: round(Math.max(...values), 1),
    ...(values.length >= 10 && { p90: round(percentile(values, 90), 1) }),
  };
}

async function main(): Promise<void> {
  const childIndex = process.argv.indexOf('--child');
  const size = arg('size', 'large');
  const changes = Number(arg('changes', '20'));
  const format = arg('format', 'yaml') as WorldFileFormat;
  if (childIndex > 0) return child(process.argv[childIndex + 1], size, changes, format);

  const runs = Number(arg('runs', '3'));
  const node = arg('node', process.execPath);
  const calibrate = (): number => calibrationMs(node);
  const results: ChildResult[] = [];
  const calibrations: number[] = [calibrate()];
  for (let r = 0; r < runs; r++) {
    const dir = mkdtempSync(join(tmpdir(), 'convoy-files-bench-'));
    try {
      const files = writeWorldFiles(new World({ size: sizeOf(size) }), dir, { format });
      // Let the page cache and the directory settle, as for a Convoy started on an existing tree.
      await new Promise((r) => setTimeout(r, 1000));
      const res = await runChild(node, dir, size, changes, format);
      results.push(res);
      console.error(
        `run ${r + 1}: ${files} files, cold start ${round(res.coldStartMs, 0)} ms (CPU ${round(res.coldStartCpuMs, 0)} ms), ` +
          `route edit median ${round(median(res.routeEditMs), 1)} ms, certificate ${round(median(res.certRotateMs), 1)} ms`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    calibrations.push(calibrate());
  }
  const all = (pick: (r: ChildResult) => number[]) => results.flatMap(pick);
  const report = {
    bench: 'files-provider',
    commit: gitShortRev(process.cwd()),
    date: new Date().toISOString(),
    node: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(),
    size,
    format,
    runs,
    calibrationMs: { median: median(calibrations), values: calibrations },
    coldStartMs: summary(results.map((r) => r.coldStartMs)),
    coldStartCpuMs: summary(results.map((r) => r.coldStartCpuMs)),
    objects: results[0].objects,
    problems: results[0].problems,
    rssMiBAfterStart: summary(results.map((r) => r.rssMiB)),
    atomicRouteEditToStoreMs: summary(all((r) => r.routeEditMs)),
    atomicCertRotateToStoreMs: summary(all((r) => r.certRotateMs)),
    idleFullRescanMs: summary(all((r) => r.idleRescanMs)),
    inPlaceEditToStoreMs: summary(all((r) => r.inPlaceEditMs)),
  };
  const text = JSON.stringify(report, null, 2) + '\n';
  const out = arg('out', '');
  if (out) writeFileSync(out, text);
  process.stdout.write(text);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
