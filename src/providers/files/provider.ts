/**
 * The file provider: Convoy's embedded default source of objects. It reads Kubernetes-shaped
 * YAML and JSON from a directory tree and keeps the store equal to what a v1.6.1 cluster would
 * hold if those files were applied to it. This module only sequences the steps, each in its own
 * module: list the files (walk.ts), watch for changes (watch.ts), parse (parse.ts), do what the
 * API server would (apiserver.ts), apply the difference to the store (apply.ts) and report
 * problems (problems.ts).
 */
import { stat } from 'node:fs/promises';
import type { Logger } from '../../observability/logger';
import type { ConvoyMetrics } from '../../observability/metrics';
import type { ObjectStore } from '../../store/store';
import { MAX_OBJECT_BYTES, MetadataAssigner } from './apiserver';
import { StoreApplier } from './apply';
import { ScanPool } from './parse-pool';
import type { FileProblem } from './problems';
import { ProblemReport } from './problems';
import type { FileScan, ScanLimits } from './scan';
import type { Listing, WalkLimits } from './walk';
import { DEFAULT_WALK_LIMITS, listFiles, relativeName } from './walk';
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
  /** A larger file is not read; it is reported instead. Default 4 MiB. */
  maxFileBytes?: number;
  /** A larger object is refused, as Kubernetes refuses it. Default 1 MiB. */
  maxObjectBytes?: number;
  /** Worker threads that parse files (see parse-pool.ts). Default: one per spare core, ≤ 2. */
  parseWorkers?: number;
  /** Files and directories read, at most. Default 10,000. */
  maxEntries?: number;
  /** Directory levels below `dir` read, at most. Default 16. */
  maxDepth?: number;
}

/** Default per-file size limit: many objects, but a bounded parse. */
export const DEFAULT_MAX_FILE_BYTES = 4 * 1024 * 1024;

/** The last scan of one file, reused while the file does not change. */
interface CachedScan {
  /** Content hash; absent when the scan failed (read error, parser crash or deadline). */
  hash?: string;
  /** Size, times and inode when scanned: a failed scan is retried only once these change. */
  fingerprint: string;
  scan: FileScan;
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
  private readonly limits: ScanLimits;
  private readonly walkLimits: WalkLimits;
  private readonly pool: ScanPool;

  /** Scan results by file name, reused while the content does not change. */
  private readonly scanCache = new Map<string, CachedScan>();
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
    this.limits = {
      maxFileBytes: opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
      maxObjectBytes: opts.maxObjectBytes ?? MAX_OBJECT_BYTES,
    };
    this.walkLimits = {
      maxEntries: opts.maxEntries ?? DEFAULT_WALK_LIMITS.maxEntries,
      maxDepth: opts.maxDepth ?? DEFAULT_WALK_LIMITS.maxDepth,
    };
    this.pool = new ScanPool({ size: opts.parseWorkers });
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
    await this.pool.close();
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
      listing = await listFiles(this.dir, this.walkLimits);
    } catch (err) {
      // The directory itself vanished or became unreadable: keep serving what we have.
      this.problemReport.set([{ file: '.', message: `cannot read directory: ${(err as Error).message}` }]);
      this.watcher?.sync(new Set());
      return;
    }
    this.watcher?.sync(listing.dirs);

    // Every file is scanned in the pool at once; the results are applied in path order.
    const results = await Promise.all(listing.files.map((path) => this.scanFile(path)));
    const scans = results.filter((r): r is FileScan => r !== undefined);
    const present = new Set(scans.map((r) => r.file));
    for (const file of this.scanCache.keys()) if (!present.has(file)) this.scanCache.delete(file);
    this.problemReport.set([...listing.problems, ...this.applier.apply(scans, listing.unseen)]);
  }

  /**
   * Scans one file in the pool, or reuses the last scan: the worker answers `unchanged` when
   * the content hash is the same, and a failed scan is not retried until the file changes.
   * Undefined when the file vanished since it was listed.
   */
  private async scanFile(path: string): Promise<FileScan | undefined> {
    const file = relativeName(this.dir, path);
    const cached = this.scanCache.get(file);
    let fingerprint = 'cannot stat';
    try {
      const st = await stat(path);
      fingerprint = `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    }
    if (cached && cached.hash === undefined && cached.fingerprint === fingerprint) return cached.scan;
    const result = await this.pool.scan({ path, file, previousHash: cached?.hash, limits: this.limits });
    if (result.status === 'gone') return undefined;
    if (result.status === 'unchanged' && cached) {
      cached.fingerprint = fingerprint;
      return cached.scan;
    }
    if (result.status !== 'scanned') return undefined;
    for (const { document, admission: a } of result.scan.entries) {
      if (a.kind !== 'ignored') continue;
      this.logger.debug(
        { file, document, apiVersion: a.apiVersion, kind: a.objectKind, name: a.name },
        'ignoring kind Convoy does not read',
      );
    }
    this.scanCache.set(file, { hash: result.hash, fingerprint, scan: result.scan });
    return result.scan;
  }
}
