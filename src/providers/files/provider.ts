/**
 * The file provider: Convoy's embedded default source of objects. It reads Kubernetes-shaped
 * YAML and JSON from a directory tree and keeps the store equal to what a v1.6.1 cluster would
 * hold if those files were applied to it. This module only sequences the steps, each in its own
 * module: list the files without leaving the directory (walk.ts), watch for changes (watch.ts),
 * wait for changed files to settle (settle.ts), read, parse (parse.ts) and do what the API
 * server would (apiserver.ts) in worker threads (scan.ts, parse-pool.ts), apply the difference
 * to the store (apply.ts) and report problems (problems.ts).
 *
 * Bad input never crashes and never reaches Envoy (docs/architecture.md §10): a file that stops
 * parsing, or an object that stops validating, keeps its last good version in the store.
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
import { SettleGate } from './settle';
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
  /**
   * A changed file is read only once it has been left alone this long, so one rewritten in
   * several writes is not applied half-written (see settle.ts). 0 reads at once. Default 500 ms.
   */
  settleMs?: number;
}

/** Default per-file size limit: many objects, but a bounded parse. */
export const DEFAULT_MAX_FILE_BYTES = 4 * 1024 * 1024;
export const DEFAULT_SETTLE_MS = 500;
/** How many times start() waits for settling files before it reports the store synced. */
const START_SETTLE_ROUNDS = 4;

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
  private readonly settle: SettleGate;

  /** Scan results by file name, reused while the content does not change. */
  private readonly scanCache = new Map<string, CachedScan>();
  private watcher?: DirectoryWatcher;
  private pollTimer?: NodeJS.Timeout;
  /** A rescan for files still settling, and when it fires (wall clock). */
  private settleTimer?: { timer: NodeJS.Timeout; at: number };
  /** The longest wait the last rescan left for a settling file (0: none settling). */
  private settlingWaitMs = 0;
  private stopped = false;
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
    this.settle = new SettleGate(opts.settleMs ?? DEFAULT_SETTLE_MS);
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
    // Files being written as Convoy starts: wait for them (a little) before calling it synced.
    for (let round = 0; round < START_SETTLE_ROUNDS && this.settlingWaitMs > 0; round++) {
      await new Promise((resolve) => setTimeout(resolve, this.settlingWaitMs));
      await this.reload();
    }
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
    this.stopped = true;
    this.watcher?.stop();
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    if (this.settleTimer) clearTimeout(this.settleTimer.timer);
    this.settleTimer = undefined;
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
    const scans: FileScan[] = [];
    /** New files still being written: not looked at yet. */
    const settling = new Set<string>();
    let waitMs = 0;
    for (const r of results) {
      if (r === undefined) continue;
      if ('settling' in r) {
        waitMs = Math.max(waitMs, r.waitMs);
        if (r.previous) scans.push(r.previous);
        else settling.add(r.file);
      } else scans.push(r);
    }
    const present = new Set(listing.files.map((path) => relativeName(this.dir, path)));
    for (const file of this.scanCache.keys()) if (!present.has(file)) this.scanCache.delete(file);
    this.settle.retain(present);
    const unseen = (file: string) => settling.has(file) || listing.unseen(file);
    this.problemReport.set([...listing.problems, ...this.applier.apply(scans, unseen)]);
    this.settlingWaitMs = waitMs;
    if (waitMs > 0) this.rescanIn(waitMs);
  }

  /** Asks for a rescan in `ms` (or sooner, if one is already due sooner). */
  private rescanIn(ms: number): void {
    if (this.stopped) return;
    const at = Date.now() + ms;
    if (this.settleTimer && this.settleTimer.at <= at) return;
    if (this.settleTimer) clearTimeout(this.settleTimer.timer);
    const timer = setTimeout(() => {
      this.settleTimer = undefined;
      void this.reload();
    }, ms);
    timer.unref();
    this.settleTimer = { timer, at };
  }

  /**
   * Scans one file in the pool, or reuses the last scan: the worker answers `unchanged` when
   * the content hash is the same, and a failed scan is not retried until the file changes. A
   * file that changed but has not settled yet is not read: its last scan stands meanwhile.
   * Undefined when the file vanished since it was listed.
   */
  private async scanFile(
    path: string,
  ): Promise<FileScan | { settling: true; file: string; waitMs: number; previous?: FileScan } | undefined> {
    const file = relativeName(this.dir, path);
    const cached = this.scanCache.get(file);
    let fingerprint = 'cannot stat';
    try {
      const st = await stat(path);
      fingerprint = `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
      if (cached?.fingerprint !== fingerprint) {
        const gate = this.settle.check(file, fingerprint, st.mtimeMs);
        if (!gate.ready) return { settling: true, file, waitMs: gate.waitMs, previous: cached?.scan };
      }
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
