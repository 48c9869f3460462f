/**
 * Lists the files the provider reads: *.yaml, *.yml and *.json anywhere below the directory, in
 * path order, and the directories to watch, without ever leaving the directory.
 *
 * Entries whose name starts with "." are skipped, so editor swap files and the `..data` and
 * `..2024_…` directories of a mounted ConfigMap or Secret volume are not read twice (their
 * visible symlinks are). Symlinks are followed only where they resolve inside the directory: a
 * symlink to `/`, to /proc or to another program's files is refused with one problem, and
 * nothing behind it is read or watched. Loops are harmless (each real directory is walked
 * once), and the walk stops at a number of entries and a depth, each reported once.
 */
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import type { FileProblem } from './problems';
import { byName } from '../../util/compare';

const EXTENSIONS = ['.yaml', '.yml', '.json'];

/** Whether a file of this name (or path) is one the provider reads: not hidden, YAML or JSON. */
export function isReadableName(path: string): boolean {
  const name = basename(path);
  return !name.startsWith('.') && EXTENSIONS.some((x) => name.toLowerCase().endsWith(x));
}

export interface WalkLimits {
  /** Files read plus directories walked, at most. */
  maxEntries: number;
  /** Directory levels below the root, at most. */
  maxDepth: number;
}

export const DEFAULT_WALK_LIMITS: WalkLimits = { maxEntries: 10_000, maxDepth: 16 };

export interface Listing {
  /** Absolute paths (as reached, not resolved) of the files to read, in path order. */
  files: string[];
  /** Directories to watch: those that could be read. */
  dirs: Set<string>;
  /** Symlinks refused, directories that could not be read, limits reached. */
  problems: FileProblem[];
  /**
   * Whether `file` (a name relative to the root) may exist without having been listed: it is
   * under a directory that could not be read, or the walk stopped at its limit. Whatever such
   * a file contributed before must stay.
   */
  unseen: (file: string) => boolean;
}

/**
 * The path of `p` relative to `root`, with "/" separators: how files are named in problems. A
 * path the walk built (`root` + "/" + clean segments) is sliced, which is what path.relative()
 * would answer for it; anything else goes through path.relative().
 */
export function relativeName(root: string, p: string): string {
  if (sep === '/' && p.length > root.length + 1 && p.startsWith(root) && p[root.length] === '/') {
    const rest = p.slice(root.length + 1);
    if (!UNCLEAN_SEGMENT.test(rest)) return rest;
  }
  return relative(root, p).split(sep).join('/');
}

/** A relative path that slicing cannot name as path.relative() would: empty, ".", ".." or "//". */
const UNCLEAN_SEGMENT = /(^|\/)\.{0,2}(\/|$)/;

/** Whether `p` is `dir` or inside it (both resolved). */
function within(dir: string, p: string): boolean {
  return p === dir || p.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * Walks `root`, depth first in name order, so where a limit cuts the walk is the same every
 * time, and returns the files sorted by relative path. Throws when the root itself cannot be
 * resolved or read.
 */
export async function listFiles(root: string, limits: WalkLimits = DEFAULT_WALK_LIMITS): Promise<Listing> {
  const realRoot = await realpath(root);
  const files: string[] = [];
  const dirs = new Set<string>();
  const problems: FileProblem[] = [];
  const unreadDirs: string[] = [];
  const visited = new Set<string>();
  let entries = 0;
  let truncated = false;
  const name = (p: string) => relativeName(root, p);

  const walk = async (d: string, real: string, depth: number): Promise<void> => {
    if (truncated || visited.has(real)) return;
    visited.add(real);
    let list: Dirent[];
    try {
      list = await readdir(d, { withFileTypes: true });
    } catch (err) {
      if (d === root) throw err;
      const e = err as NodeJS.ErrnoException;
      // Vanished since it was listed: simply gone.
      if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return;
      problems.push({ file: name(d), message: `cannot read directory: ${e.code ?? e.message}` });
      unreadDirs.push(name(d) + '/');
      return;
    }
    dirs.add(d);
    list.sort(byName);
    for (const e of list) {
      if (e.name.startsWith('.')) continue;
      const p = join(d, e.name);
      let target = { real: join(real, e.name), isDir: e.isDirectory(), isFile: e.isFile() };
      if (e.isSymbolicLink()) {
        const resolved = await resolveLink(p);
        if (!resolved) continue; // dangling: nothing to read
        target = resolved;
      }
      const readable = target.isFile && EXTENSIONS.some((x) => e.name.toLowerCase().endsWith(x));
      if (!target.isDir && !readable) continue;
      if (!within(realRoot, target.real)) {
        problems.push({
          file: name(p),
          message: `symlink to ${target.real} leads outside ${root}; not followed`,
        });
        continue;
      }
      if (target.isDir && visited.has(target.real)) continue;
      if (++entries > limits.maxEntries) {
        truncated = true;
        problems.push({
          file: name(p),
          message:
            `more than ${limits.maxEntries} files and directories: this one and the rest are not read ` +
            `(--from-dir-max-files)`,
        });
        return;
      }
      if (readable) files.push(p);
      else if (depth >= limits.maxDepth) {
        problems.push({
          file: name(p),
          message: `directory nested more than ${limits.maxDepth} levels deep; not read (--from-dir-max-depth)`,
        });
      } else await walk(p, target.real, depth + 1);
      if (truncated) return;
    }
  };
  await walk(root, realRoot, 0);
  // Path order, which decides which of two files defining the same object wins.
  const named = files.map((f) => ({ path: f, name: name(f) }));
  named.sort(byName);
  return {
    files: named.map((f) => f.path),
    dirs,
    problems,
    unseen: unseenIn(truncated ? new Set(named.map((f) => f.name)) : undefined, unreadDirs),
  };
}

/**
 * Returns the test Listing.unseen answers: a file not `listed` when the walk stopped at its limit
 * (`listed` given), or one under a directory that could not be read.
 *
 * Made here rather than inside listFiles so that the closure keeps only these two: a closure
 * defined in listFiles would share its scope, and with it the walk's lists of every file and
 * directory, for as long as the provider keeps the listing (bench/README.md, "Steady RSS,
 * session 18").
 */
function unseenIn(
  listed: ReadonlySet<string> | undefined,
  unreadDirs: readonly string[],
): (file: string) => boolean {
  return (file) => (listed !== undefined && !listed.has(file)) || unreadDirs.some((d) => file.startsWith(d));
}

/** Where a symlink leads (resolved) and what it is; undefined when it leads nowhere. */
async function resolveLink(
  p: string,
): Promise<{ real: string; isDir: boolean; isFile: boolean } | undefined> {
  try {
    const real = await realpath(p);
    const st = await stat(real);
    return { real, isDir: st.isDirectory(), isFile: st.isFile() };
  } catch {
    return undefined;
  }
}
