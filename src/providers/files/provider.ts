/**
 * The file provider: Convoy's embedded default source of objects. It reads Kubernetes-shaped
 * YAML and JSON from a directory tree and keeps the store equal to what a v1.6.1 cluster would
 * hold if those files were applied to it. This module only sequences the steps, each in its own
 * module: list the files (walk.ts), watch for changes (watch.ts), parse (parse.ts), do what the
 * API server would (apiserver.ts), apply the difference to the store (apply.ts) and report
 * problems (problems.ts).
 */
import { readFile, stat } from 'node:fs/promises';
import type { Logger } from '../../observability/logger';
import type { ConvoyMetrics } from '../../observability/metrics';
import type { ObjectStore } from '../../store/store';
import { MetadataAssigner, admitEntry } from './apiserver';
import type { FileScan } from './apply';
import { StoreApplier } from './apply';
import type { ParsedFile } from './parse';
import { parseFile } from './parse';
import type { FileProblem } from './problems';
import { ProblemReport } from './problems';
import type { Listing } from './walk';
import { listFiles, relativeName } from './walk';
import { DirectoryWatcher } from './watch';

export type { FileProblem } from './problems';
export { parseFile } from './parse';
export { uidFor } from './apiserver';

export interface FileProviderOptions {
  dir: string;
  store: ObjectStore;
  logger: Logger;
  metrics?: ConvoyMetrics;
  /** Quiet time after the last filesystem event before rescanning. Default 100 ms. */
  debounceMs?: number;
  /**
   * Safety-net full rescan interval, for filesystems where events get lost (network mounts,
   * inotify limits). Unchanged files are not re-parsed. 0 disables. Default 10 s.
   */
  pollIntervalMs?: number;
}

export const SOURCE_NAME = 'files';

export class FileProvider {
  private readonly dir: string;
  private readonly store: ObjectStore;
  private readonly logger: Logger;
  private readonly debounceMs: number;
  private readonly pollIntervalMs: number;
  private readonly applier: StoreApplier;
  private readonly problemReport: ProblemReport;

  /** Parse results by file, reused while the content does not change. */
  private parseCache = new Map<string, { content: string; parsed: ParsedFile }>();
  private watcher?: DirectoryWatcher;
  private pollTimer?: NodeJS.Timeout;
  /** Serialises rescans: a rescan requested while one runs starts right after it. */
  private scanChain: Promise<void> = Promise.resolve();
  private scanQueued?: Promise<void>;

  constructor(opts: FileProviderOptions) {
    this.dir = opts.dir;
    this.store = opts.store;
    this.logger = opts.logger.child({ provider: SOURCE_NAME });
    this.debounceMs = opts.debounceMs ?? 100;
    this.pollIntervalMs = opts.pollIntervalMs ?? 10_000;
    this.applier = new StoreApplier(this.store, new MetadataAssigner());
    this.problemReport = new ProblemReport(this.logger, opts.metrics);
  }

  async start(): Promise<void> {
    this.store.registerSource(SOURCE_NAME);
    const st = await stat(this.dir).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`file provider: cannot read directory ${this.dir}: ${err.code ?? err.message}`);
    });
    if (!st.isDirectory()) throw new Error(`file provider: ${this.dir} is not a directory`);
    this.watcher = new DirectoryWatcher({
      logger: this.logger,
      debounceMs: this.debounceMs,
      onChange: () => void this.reload(),
    });
    await this.reload();
    this.store.markSynced(SOURCE_NAME);
    if (this.pollIntervalMs > 0) {
      this.pollTimer = setInterval(() => void this.reload(), this.pollIntervalMs);
      this.pollTimer.unref();
    }
    this.logger.info(
      { dir: this.dir, objects: this.applier.size, problems: this.problemReport.size },
      'file provider started',
    );
  }

  async stop(): Promise<void> {
    this.watcher?.stop();
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    await this.scanChain;
  }

  problems(): FileProblem[] {
    return this.problemReport.list();
  }

  /** Rescans now. Concurrent calls share one follow-up rescan. */
  reload(): Promise<void> {
    if (this.scanQueued) return this.scanQueued;
    const next = this.scanChain.then(() => {
      this.scanQueued = undefined;
      return this.rescan();
    });
    this.scanQueued = next;
    this.scanChain = next.catch(() => undefined);
    return next;
  }

  private async rescan(): Promise<void> {
    let listing: Listing;
    try {
      listing = await listFiles(this.dir, this.logger);
    } catch (err) {
      // The directory itself vanished or became unreadable: keep serving what we have.
      this.problemReport.set([{ file: '.', message: `cannot read directory: ${(err as Error).message}` }]);
      this.watcher?.sync(new Set());
      return;
    }
    this.watcher?.sync(listing.dirs);

    const scans: FileScan[] = [];
    for (const path of listing.files) {
      const scan = await this.scanFile(path);
      if (scan) scans.push(scan);
    }
    const present = new Set(scans.map((s) => s.file));
    for (const file of this.parseCache.keys()) if (!present.has(file)) this.parseCache.delete(file);
    this.problemReport.set(this.applier.apply(scans));
  }

  /** Reads, parses and admits one file; undefined when it vanished since it was listed. */
  private async scanFile(path: string): Promise<FileScan | undefined> {
    const file = relativeName(this.dir, path);
    let content: string;
    try {
      content = await readFile(path, 'utf8');
    } catch (err) {
      // Deleted between listing and reading: the next event rescans; treat as gone.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      return {
        file,
        problems: [{ file, message: `cannot read file: ${(err as Error).message}` }],
        broken: true,
        entries: [],
      };
    }
    let cached = this.parseCache.get(file);
    if (!cached || cached.content !== content) {
      cached = { content, parsed: parseFile(file, content) };
      this.parseCache.set(file, cached);
    }
    const { parsed } = cached;
    const entries: FileScan['entries'] = [];
    for (const entry of parsed.entries) {
      const admission = admitEntry(entry);
      if (admission.kind === 'ignored') {
        this.logger.debug(
          {
            file,
            document: entry.document,
            apiVersion: admission.apiVersion,
            kind: admission.objectKind,
            name: admission.name,
          },
          'ignoring kind Convoy does not read',
        );
      }
      entries.push({ document: entry.document, admission });
    }
    return {
      file,
      problems: parsed.errors.map((e) => ({ file, document: e.document, message: e.message })),
      broken: parsed.errors.length > 0,
      entries,
    };
  }
}
