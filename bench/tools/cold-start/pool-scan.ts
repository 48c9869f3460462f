/**
 * The load phase of a file-mode cold start alone: scans every file of a world directory through
 * the provider's real parse pool (two workers, as on a 2-core machine) and prints the CPU time of
 * the process and of each thread. Why: the full cold start (drive.sh) adds module loading, the
 * apply and the first build, whose noise on a shared machine hides changes to the workers' part;
 * this isolates it (docs/architecture.md §10.4).
 *
 *   node dist/bench/tools/cold-start/pool-scan.js WORLD_DIR [--workers 2]
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ScanPool } from '../../../src/providers/files/parse-pool';

/** Every file under `dir`, relative to it (world-files.ts writes two levels). */
function listFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) files.push(join(entry.parentPath, entry.name).slice(dir.length + 1));
  }
  return files.sort();
}

/** CPU milliseconds of this process's threads, summed by thread name (from /proc). */
function cpuByThread(): Record<string, number> {
  const ticksMs = 10; // USER_HZ is 100 on Linux
  const out: Record<string, number> = {};
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').replace(/.*\) /, '').split(' ');
      out[name] = (out[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) * ticksMs;
    } catch {
      // The thread ended while it was read.
    }
  }
  return out;
}

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: pool-scan WORLD_DIR [--workers 2]');
  const at = process.argv.indexOf('--workers');
  const size = at > 0 ? Number(process.argv[at + 1]) : 2;
  const files = listFiles(dir);
  const limits = { maxFileBytes: 1024 * 1024, maxObjectBytes: 1024 * 1024 };
  const pool = new ScanPool({ size });
  const started = Date.now();
  const cpu0 = process.cpuUsage();
  const results = await Promise.all(files.map((file) => pool.scan({ path: join(dir, file), file, limits })));
  const cpu = process.cpuUsage(cpu0);
  const objects = results.reduce((n, r) => n + (r.status === 'scanned' ? r.scan.entries.length : 0), 0);
  console.log(
    JSON.stringify({
      files: files.length,
      objects,
      wallMs: Date.now() - started,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      cpuByThreadMs: cpuByThread(),
    }),
  );
  process.exit(0);
}

void main();
