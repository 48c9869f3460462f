/**
 * Watches the provider's directories and asks for a rescan when something changes: one
 * non-recursive fs.watch per directory (portable; recursive watching is not available on every
 * platform and Node 20 version), with events debounced into one rescan per burst.
 */
import type { FSWatcher } from 'node:fs';
import { watch as fsWatch } from 'node:fs';
import type { Logger } from '../../observability/logger';

/** Rescan at the latest this long after the first event of a burst, however busy the directory. */
const MAX_DEBOUNCE_MS = 2000;

export interface DirectoryWatcherOptions {
  logger: Logger;
  /** Quiet time after the last filesystem event before asking for a rescan. */
  debounceMs: number;
  /** Called once per burst of events. */
  onChange: () => void;
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
        const w = fsWatch(d, { persistent: false }, () => this.onFsEvent());
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

  private onFsEvent(): void {
    if (!this.running) return;
    const now = Date.now();
    if (!this.debounceTimer) this.burstStart = now;
    else clearTimeout(this.debounceTimer);
    const wait = Math.max(0, Math.min(this.opts.debounceMs, this.burstStart + MAX_DEBOUNCE_MS - now));
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      if (this.running) this.opts.onChange();
    }, wait);
  }
}
