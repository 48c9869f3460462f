/**
 * Watches the provider's directories and says what changed: one non-recursive fs.watch per
 * directory (portable; recursive watching is not available on every platform and Node 20
 * version), with events debounced into one report per burst. The report names each file that
 * had events and whether any of them was a write in place ('change'), or only creations,
 * deletions and renames ('rename'); it asks for a full rescan instead when it cannot name the
 * file (a platform without names, a watch that failed, a new directory).
 */
import type { FSWatcher } from 'node:fs';
import { watch as fsWatch } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../observability/logger';

/** Rescan at the latest this long after the first event of a burst, however busy the directory. */
const MAX_DEBOUNCE_MS = 2000;

/**
 * Quiet time that ends a burst of only renames, creations and deletions. A file renamed into
 * place is complete (docs/architecture.md §10.1), so waiting longer only delays the change; this
 * still gathers the files one writer renames one after another into one report.
 */
export const RENAME_QUIET_MS = 5;

/** What one burst of events touched. */
export interface WatchReport {
  /** Something happened that no file name describes: list the whole tree again. */
  full: boolean;
  /** Absolute path → whether the file was written in place during the burst. */
  files: Map<string, { written: boolean }>;
}

export interface DirectoryWatcherOptions {
  logger: Logger;
  /**
   * Quiet time after the last filesystem event before reporting, when the burst has a write in
   * place or an event without a name; a burst of renames alone waits at most RENAME_QUIET_MS.
   */
  debounceMs: number;
  /** Called once per burst of events. */
  onChange: (report: WatchReport) => void;
}

export class DirectoryWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  /** Directories whose watch could not be set up. */
  private readonly failed = new Set<string>();
  private debounceTimer?: NodeJS.Timeout;
  private burstStart = 0;
  private running = true;
  /** True until the first sync(). */
  private first = true;
  /** The burst being collected. */
  private pending: WatchReport = { full: false, files: new Map() };
  /** The burst being collected has a write in place. */
  private pendingWritten = false;

  constructor(private readonly opts: DirectoryWatcherOptions) {}

  /** Stops every watcher and any pending rescan request. */
  stop(): void {
    this.running = false;
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    this.debounceTimer = undefined;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  /**
   * Watches exactly `dirs`: closes watchers of directories that are gone, opens new ones.
   * Directory events cover creates, edits, deletes and the rename-into-place writes of editors
   * and ConfigMap volume updates.
   */
  sync(dirs: Set<string>): void {
    if (!this.running) return;
    for (const [d, w] of this.watchers) {
      if (!dirs.has(d)) {
        w.close();
        this.watchers.delete(d);
      }
    }
    for (const d of this.failed) if (!dirs.has(d)) this.failed.delete(d);
    let added = false;
    for (const d of dirs) {
      if (this.watchers.has(d) || this.failed.has(d)) continue;
      try {
        const w = fsWatch(d, { persistent: false }, (event, name) => this.onFsEvent(d, event, name));
        w.on('error', (err) => {
          this.opts.logger.debug({ dir: d, err: err.message }, 'directory watch ended');
          w.close();
          this.watchers.delete(d);
          this.onFsEvent();
        });
        this.watchers.set(d, w);
        added = true;
      } catch (err) {
        // Not retried (nor logged again) while the directory stays: a retry that fails at once
        // would otherwise turn into a rescan loop.
        this.failed.add(d);
        this.opts.logger.warn(
          { dir: d, err: (err as Error).message },
          'cannot watch directory; changes are picked up by the periodic rescan',
        );
      }
    }
    // Something may have been created in a new directory between listing it and watching it.
    // Not after the first sync: the provider is starting, and its periodic rescan covers that
    // short window.
    if (added && !this.first) this.onFsEvent();
    this.first = false;
  }

  /**
   * Records one event: a named file in a watched directory, or (without a name) anything. Names
   * starting with one "." are files the provider never reads (temporary files of atomic writes,
   * editor swap files): ignored. Names starting with ".." are the data links of a mounted
   * ConfigMap or Secret volume, whose swap changes every visible file at once: a full rescan.
   */
  private onFsEvent(dir?: string, event?: string, name?: string | Buffer | null): void {
    if (!this.running) return;
    const file = typeof name === 'string' ? name : name?.toString('utf8');
    if (dir === undefined || !file || file.startsWith('..') || file.includes('/')) this.pending.full = true;
    else if (file.startsWith('.')) return;
    else {
      const path = join(dir, file);
      const seen = this.pending.files.get(path);
      const written = event === 'change';
      if (seen) seen.written ||= written;
      else this.pending.files.set(path, { written });
    }
    const now = Date.now();
    if (!this.debounceTimer) this.burstStart = now;
    else clearTimeout(this.debounceTimer);
    if (event === 'change') this.pendingWritten = true;
    const renamesOnly = !this.pending.full && !this.pendingWritten;
    const quiet = renamesOnly ? Math.min(this.opts.debounceMs, RENAME_QUIET_MS) : this.opts.debounceMs;
    const wait = Math.max(0, Math.min(quiet, this.burstStart + MAX_DEBOUNCE_MS - now));
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      const report = this.pending;
      this.pending = { full: false, files: new Map() };
      this.pendingWritten = false;
      if (this.running && (report.full || report.files.size > 0)) this.opts.onChange(report);
    }, wait);
  }
}
