/**
 * Lists the files the provider reads: *.yaml, *.yml and *.json anywhere below the directory, in
 * path order, and the directories to watch. Entries whose name starts with "." are skipped, so
 * editor swap files and the `..data`/`..2024_…` directories of a mounted ConfigMap or Secret
 * volume are not read twice (their visible symlinks are). Symlinks are followed, with a guard
 * against loops.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Logger } from '../../observability/logger';

const EXTENSIONS = ['.yaml', '.yml', '.json'];

export interface Listing {
  /** Absolute paths of the files to read, sorted by their path relative to the root. */
  files: string[];
  /** Directories to watch (as reached, not resolved). */
  dirs: Set<string>;
}

/** The path of `p` relative to `root`, with "/" separators: how files are named in problems. */
export function relativeName(root: string, p: string): string {
  return relative(root, p).split(sep).join('/');
}

/** Walks `root`. Throws when the root itself cannot be read; other unreadable entries are logged. */
export async function listFiles(root: string, logger: Logger): Promise<Listing> {
  const files: string[] = [];
  const dirs = new Set<string>();
  const visited = new Set<string>();
  const walk = async (d: string, mustExist: boolean): Promise<void> => {
    let real: string;
    try {
      real = await realpath(d);
    } catch (err) {
      if (mustExist) throw err;
      return;
    }
    if (visited.has(real)) return;
    visited.add(real);
    dirs.add(d);
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch (err) {
      if (mustExist) throw err;
      logger.warn({ dir: d, err: (err as Error).message }, 'cannot read directory');
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const p = join(d, e.name);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        const st = await stat(p).catch(() => undefined);
        if (!st) continue;
        isDir = st.isDirectory();
        isFile = st.isFile();
      }
      if (isDir) await walk(p, false);
      else if (isFile && EXTENSIONS.some((x) => e.name.toLowerCase().endsWith(x))) files.push(p);
    }
  };
  await walk(root, true);
  const rel = (p: string) => relativeName(root, p);
  files.sort((a, b) => (rel(a) < rel(b) ? -1 : rel(a) > rel(b) ? 1 : 0));
  return { files, dirs };
}
