/**
 * Scanning ahead: what lets the parse workers read, parse and validate a tree before the file
 * provider exists (docs/architecture.md §10.6). `convoy serve --from-dir` names the directory in
 * its arguments, so the workers can start on it while the main thread still loads the control
 * plane's modules; the provider, once started, asks for every file as usual and a worker answers
 * from what it scanned ahead when the file is provably the one it read.
 *
 * This module holds what the pool (main thread) and the workers must agree on: which worker
 * scans which file ahead (aheadOwner), and the listing a worker scans from (listAhead).
 */
import type { Dirent } from 'node:fs';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { compareStrings } from '../../util/compare';
import { isReadableName, relativeName } from './walk';

/** What the pool asks of worker `index` of `of`: scan its share of the files under `root`. */
export interface AheadRequest {
  root: string;
  index: number;
  of: number;
  /** Files and directories listed at most (the provider's --from-dir-max-files). */
  maxEntries: number;
  /** Directory levels below the root, at most. */
  maxDepth: number;
}

/**
 * Which of `of` workers scans `path` ahead: a hash of the path, so the pool routes the provider's
 * request for a file to the worker holding its scan without either side sending a list.
 */
export function aheadOwner(path: string, of: number): number {
  // FNV-1a over the UTF-16 code units.
  let h = 0x811c9dc5;
  for (let i = 0; i < path.length; i++) {
    h ^= path.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % of;
}

/**
 * The files under `req.root` that worker `req.index` scans ahead, in the provider's order (path
 * order, walk.ts), as absolute paths built as walk.ts builds them. A plain listing: hidden names
 * and symlinks are skipped and unreadable directories ignored; a file it misses, or one it lists
 * that the provider does not read, costs time, never a wrong object, because the provider's own
 * listing decides what is read and a scan ahead is used only for a file it asks for.
 */
export function listAhead(req: AheadRequest): { path: string; file: string }[] {
  const found: { path: string; file: string }[] = [];
  let entries = 0;
  const walk = (dir: string, depth: number): void => {
    let list: Dirent[];
    try {
      list = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of list) {
      if (e.name.startsWith('.') || e.isSymbolicLink()) continue;
      const readable = e.isFile() && isReadableName(e.name);
      if (!readable && !e.isDirectory()) continue;
      if (++entries > req.maxEntries) return;
      const path = join(dir, e.name);
      if (readable) {
        if (aheadOwner(path, req.of) === req.index) found.push({ path, file: relativeName(req.root, path) });
      } else if (depth < req.maxDepth) walk(path, depth + 1);
    }
  };
  walk(req.root, 0);
  found.sort((a, b) => compareStrings(a.file, b.file));
  return found;
}
