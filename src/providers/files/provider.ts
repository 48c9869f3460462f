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
import { lstat, stat } from 'node:fs/promises';
import type { Logger } from '../../observability/logger';
import type { ConvoyMetrics } from '../../observability/metrics';
import type { ObjectStore } from '../../store/store';
import { compareStrings } from '../../util/compare';
import { MAX_OBJECT_BYTES, MetadataAssigner } from './apiserver';
import { StoreApplier } from './apply';
import type { CacheLoad, CachedScan as DiskEntry } from './disk-cache';
import { ScanDiskCache, scanCacheKey } from './disk-cache';
import { ScanPool, adoptPrestartedPool } from './parse-pool';
import type { FileProblem } from './problems';
import { ProblemReport } from './problems';
import type { FileScan, ScanLimits, ScanResult } from './scan';
import { fingerprintOf, rememberWorkAhead } from './scan';
import { SettleGate } from './settle';
import type { Listing, WalkLimits } from './walk';
import { DEFAULT_WALK_LIMITS, isReadableName, listFiles, relativeName } from './walk';
import { DirectoryWatcher } from './watch';

export type { FileProblem } from './problems';
export { parseFile } from './parse';
export { uidFor } from './apiserver';

export interface FileProviderOptions {
  dir: string;
  store: ObjectStore;
  logger: Logger;
  metrics?: ConvoyMetrics;
  /** Quiet time after the last filesystem event before rescanning. Default 20 ms. */
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
  /**
   * Keep each file's scan in this directory between runs, so a restart parses and validates
   * only the files whose content changed (disk-cache.ts, docs/architecture.md §10.2). Off when
   * unset. `convoyVersion` is part of the cache's key.
   */
  cache?: { dir: string; convoyVersion: string };
}

/** Default per-file size limit: many objects, but a bounded parse. */
export const DEFAULT_MAX_FILE_BYTES = 4 * 1024 * 1024;
export const DEFAULT_SETTLE_MS = 500;
/**
 * Coalesces one burst of events (an atomic write is a create, writes and a rename within
 * microseconds) into one rescan. It protects nothing: half-written files are the settle gate's
 * business, so it can be short (docs/architecture.md §10.1).
 */
export const DEFAULT_DEBOUNCE_MS = 20;
/**
 * Files a rescan stats per event-loop turn (scanAll): a slice costs a few milliseconds of the
 * loop, and keeps the thread pool busy while the next waits.
 */
const CHECK_SLICE = 64;
/** How many times start() waits for settling files before it reports the store synced. */
const START_SETTLE_ROUNDS = 4;
/** The cache on disk is written this long after start, out of the first build's way. */
const CACHE_WRITE_DELAY_MS = 2000;

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
  /** The scan cache on disk, while it is being read and until it is written after start. */
  private diskCache?: ScanDiskCache;
  private diskCacheLoad?: Promise<CacheLoad>;
  private diskCacheWrite?: NodeJS.Timeout;
  /** Files whose scan came from the cache on disk. */
  private diskCacheHits = 0;

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
  /** The next rescan lists the whole tree. */
  private fullQueued = false;
  /** Files named by watch reports since the last rescan started. */
  private filesQueued = new Map<string, { written: boolean }>();
  /**
   * The last full listing: its problems, directories and the files it could not see. Not its
   * list of files: `known` holds those, and the list would keep a second copy of every path.
   */
  private listing?: Omit<Listing, 'files'>;
  /** Files present (relative name → absolute path), and their names in path order. */
  private known = new Map<string, string>();
  private order: string[] = [];
  /**
   * Changes made to `scanCache` so far, and how many of them the last apply saw: equal when the
   * store holds what the cache says, so a full rescan that changed nothing need not apply again.
   */
  private cacheChanges = 0;
  private appliedCacheChanges = -1;
  /** The problems the last apply reported (kept for a rescan that skips the apply). */
  private lastApplied: FileProblem[] = [];

  constructor(opts: FileProviderOptions) {
    this.dir = opts.dir;
    this.store = opts.store;
    this.logger = opts.logger.child({ provider: SOURCE_NAME });
    this.debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
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
    const prestarted = opts.parseWorkers === undefined ? adoptPrestartedPool() : undefined;
    this.pool = prestarted ?? new ScanPool({ size: opts.parseWorkers });
    this.settle = new SettleGate(opts.settleMs ?? DEFAULT_SETTLE_MS);
    if (opts.cache)
      this.diskCache = new ScanDiskCache(opts.cache.dir, scanCacheKey(opts.cache.convoyVersion, this.limits));
  }

  async start(): Promise<void> {
    this.store.registerSource(SOURCE_NAME);
    this.pool.prestart();
    // Read while the tree is listed; scans wait for it (scanFile()).
    this.diskCacheLoad = this.diskCache?.load();
    const st = await stat(this.dir).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`file provider: cannot read directory ${this.dir}: ${err.code ?? err.message}`);
    });
    if (!st.isDirectory()) throw new Error(`file provider: ${this.dir} is not a directory`);
    this.watcher = new DirectoryWatcher({
      logger: this.logger,
      debounceMs: this.debounceMs,
      onChange: (report) => void (report.full ? this.reload() : this.reloadFiles(report.files)),
    });
    await this.reload();
    // Files being written as Convoy starts: wait for them (a little) before calling it synced.
    for (let round = 0; round < START_SETTLE_ROUNDS && this.settlingWaitMs > 0; round++) {
      await new Promise((resolve) => setTimeout(resolve, this.settlingWaitMs));
      await this.reload();
    }
    this.store.markSynced(SOURCE_NAME);
    const cacheLoad = await this.diskCacheLoad;
    this.scheduleCacheWrite();
    if (this.pollIntervalMs > 0) {
      this.pollTimer = setInterval(() => void this.reload(), this.pollIntervalMs);
      this.pollTimer.unref();
    }
    this.logger.info(
      {
        dir: this.dir,
        objects: this.applier.size,
        problems: this.problemReport.size,
        ...(cacheLoad
          ? { cache: { entries: cacheLoad.entries, hits: this.diskCacheHits, ignored: cacheLoad.ignored } }
          : {}),
      },
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
    if (this.diskCacheWrite) {
      clearTimeout(this.diskCacheWrite);
      this.diskCacheWrite = undefined;
      await this.writeDiskCache();
    }
  }

  /**
   * After the first load: writes the cache on disk (soon, once) if it differs from what was
   * read, else forgets it. Scans are serialized for it only until then.
   */
  private scheduleCacheWrite(): void {
    const cache = this.diskCache;
    if (!cache) return;
    if (!cache.changedSinceLoad()) {
      cache.discard();
      this.diskCache = undefined;
      return;
    }
    this.diskCacheWrite = setTimeout(() => {
      this.diskCacheWrite = undefined;
      void this.writeDiskCache();
    }, CACHE_WRITE_DELAY_MS);
    this.diskCacheWrite.unref();
  }

  private async writeDiskCache(): Promise<void> {
    const cache = this.diskCache;
    if (!cache) return;
    this.diskCache = undefined;
    try {
      const entries = await cache.write(this.order);
      this.logger.debug({ entries }, 'file provider: scan cache written');
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'file provider: cannot write the scan cache');
    }
  }

  problems(): FileProblem[] {
    return this.problemReport.list();
  }

  /** Files whose scan came from the cache on disk since start (for tests and the log). */
  get diskCacheHitCount(): number {
    return this.diskCacheHits;
  }

  /** Rescans the whole tree now (stat only for known files). Concurrent calls share one rescan. */
  reload(): Promise<void> {
    this.fullQueued = true;
    return this.enqueueRescan();
  }

  /**
   * Rescans only the named files (absolute paths; `written`: written in place, so the settle
   * time applies). Calls made while a rescan runs are merged into the next one.
   */
  reloadFiles(files: ReadonlyMap<string, { written: boolean }>): Promise<void> {
    for (const [path, change] of files) {
      const seen = this.filesQueued.get(path);
      this.filesQueued.set(path, { written: (seen?.written ?? false) || change.written });
    }
    return this.enqueueRescan();
  }

  private enqueueRescan(): Promise<void> {
    if (this.scanQueued) return this.scanQueued;
    const next = this.scanChain.then(() => {
      this.scanQueued = undefined;
      const full = this.fullQueued;
      const files = this.filesQueued;
      this.fullQueued = false;
      this.filesQueued = new Map();
      return full ? this.rescan() : this.rescanNamed(files);
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
    this.listing = { dirs: listing.dirs, problems: listing.problems, unseen: listing.unseen };
    if (!this.listsKnownFiles(listing.files)) {
      this.known = new Map(listing.files.map((path) => [relativeName(this.dir, path), path]));
      this.order = [...this.known.keys()];
    }
    await this.scanAndApply(listing.files.map((path) => ({ path, mode: 'check' as const })));
  }

  /**
   * Returns whether `files` (a listing, absolute paths) are exactly the known files in `order`.
   * Then `known` and `order` stay as they are: the periodic rescan of an unchanged tree does not
   * rebuild a map and a list of every file (docs/architecture.md §10.1).
   */
  private listsKnownFiles(files: readonly string[]): boolean {
    if (files.length !== this.order.length) return false;
    for (let i = 0; i < files.length; i++) if (this.known.get(this.order[i]!) !== files[i]) return false;
    return true;
  }

  /**
   * Rescans the files a watch report named. A name that is now a directory or a symlink, or a
   * directory that vanished, changes the tree's shape, which only a full rescan decides (walk.ts
   * rules); anything else is a file read, replaced or deleted, handled here alone.
   */
  private async rescanNamed(files: ReadonlyMap<string, { written: boolean }>): Promise<void> {
    if (!this.listing) return this.rescan();
    const candidates: Candidate[] = [];
    const gone: string[] = [];
    for (const [path, { written }] of files) {
      const file = relativeName(this.dir, path);
      let st;
      try {
        st = await lstat(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return this.rescan();
        if (this.known.has(file)) gone.push(file);
        else if (this.listing.dirs.has(path)) return this.rescan();
        continue;
      }
      if (st.isDirectory() || st.isSymbolicLink()) return this.rescan();
      if (!st.isFile() || !isReadableName(path)) continue;
      if (!this.known.has(file)) {
        if (this.known.size >= this.walkLimits.maxEntries) return this.rescan();
        this.insert(file, path);
      }
      // Renamed into place (atomic replace): complete, read at once. Written in place: settle.
      candidates.push({ path, mode: written ? 'check' : 'read', named: true });
    }
    // Files gone because the whole directory went: the full rescan keeps serving (see rescan).
    if (gone.length > 0 && (await this.directoryGone())) return this.rescan();
    for (const file of gone) this.forget(file);
    await this.scanAndApply(candidates, gone);
  }

  /** True when the watched directory itself no longer exists (its files are not deleted then). */
  private async directoryGone(): Promise<boolean> {
    try {
      await lstat(this.dir);
      return false;
    } catch {
      return true;
    }
  }

  /**
   * Scans `candidates` (in the pool, or from the cache), then applies every known file's latest
   * scan to the store: files still settling keep their last scan, and new ones that are still
   * settling stay out until a later rescan.
   */
  private async scanAndApply(candidates: Candidate[], named?: string[]): Promise<void> {
    const results = await this.scanAll(candidates);
    if (results.some((r) => r !== undefined && 'gone' in r) && (await this.directoryGone())) {
      this.problemReport.set([{ file: '.', message: 'cannot read directory: it no longer exists' }]);
      return;
    }
    let waitMs = 0;
    const settling = new Set<string>();
    for (const r of results) {
      if (r === undefined) continue;
      if ('gone' in r) this.forget(r.gone);
      else if (r.waitMs > 0) {
        waitMs = Math.max(waitMs, r.waitMs);
        if (!this.scanCache.has(r.file)) settling.add(r.file);
      }
    }
    const allScans = () => {
      const scans: FileScan[] = [];
      for (const file of this.order) {
        const cached = this.scanCache.get(file);
        if (cached) scans.push(cached.scan);
      }
      return scans;
    };
    // Only a listing drops files from `known` without forget(): a named rescan has nothing to drop.
    if (!named)
      for (const file of this.scanCache.keys())
        if (!this.known.has(file)) {
          this.scanCache.delete(file);
          this.cacheChanges++;
        }
    this.settle.retain((file) => this.known.has(file));
    const listing = this.listing;
    if (!named && waitMs === 0 && this.appliedCacheChanges === this.cacheChanges) {
      // A full rescan that found every file as the last apply left it (the 10 s safety net on an
      // unchanged tree): applying again would change nothing, and it walks every scan.
      this.problemReport.set([...(listing?.problems ?? []), ...this.lastApplied]);
      this.settlingWaitMs = 0;
      return;
    }
    const unseen = (file: string) => settling.has(file) || (listing?.unseen(file) ?? false);
    // A named rescan changed only the scans of its candidates and of the files it found gone, so
    // the applier decides those alone (apply.ts applyFiles): a change costs what it touches.
    const applied = named
      ? this.applier.applyFiles(
          [...candidates.map((c) => relativeName(this.dir, c.path)), ...named, ...gonesOf(results)],
          (file) => this.scanCache.get(file)?.scan,
          unseen,
          allScans,
        )
      : this.applier.apply(allScans(), unseen);
    if (!named) {
      // Only a full apply decides every file: after a named one, the next full rescan applies.
      this.appliedCacheChanges = this.cacheChanges;
      this.lastApplied = applied;
    }
    this.problemReport.set([...(listing?.problems ?? []), ...applied]);
    this.settlingWaitMs = waitMs;
    if (waitMs > 0) this.rescanIn(waitMs);
  }

  /**
   * Scans `candidates`. Files already scanned once (a rescan: a stat each, a read only when they
   * changed) are started in slices of CHECK_SLICE, one slice per event-loop turn, so the periodic
   * rescan of a large tree never holds the loop for all its stats at once; the first load hands
   * every file to the parse pool at once, which queues them itself.
   */
  private async scanAll(candidates: Candidate[]): Promise<Awaited<ReturnType<FileProvider['scanFile']>>[]> {
    if (this.scanCache.size === 0 || candidates.length <= CHECK_SLICE)
      return Promise.all(candidates.map((c) => this.scanFile(c)));
    const results: Awaited<ReturnType<FileProvider['scanFile']>>[] = [];
    for (let i = 0; i < candidates.length; i += CHECK_SLICE) {
      const slice = candidates.slice(i, i + CHECK_SLICE);
      for (const r of await Promise.all(slice.map((c) => this.scanFile(c)))) results.push(r);
    }
    return results;
  }

  /** Adds a new file to the known files, in path order. */
  private insert(file: string, path: string): void {
    this.known.set(file, path);
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareStrings(this.order[mid], file) < 0) lo = mid + 1;
      else hi = mid;
    }
    this.order.splice(lo, 0, file);
  }

  /** Drops a deleted file: its objects are deleted at the next apply. */
  private forget(file: string): void {
    if (!this.known.delete(file)) return;
    const i = this.order.indexOf(file);
    if (i >= 0) this.order.splice(i, 1);
    this.scanCache.delete(file);
    this.cacheChanges++;
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
   * Scans one file in the pool, or reuses its last scan, and caches the result. `check` first
   * compares the file's stat fingerprint with the cached one (nothing is read when it is the
   * same) and holds a changed file back until it has settled (settle.ts); a file never scanned
   * is read at once and held back afterwards if it turns out to be still settling, so a cold
   * start costs no stat per file. `read` reads at once (a file renamed into place is
   * complete). The worker answers `unchanged` when the content hash is the same, and a failed
   * scan is not retried until the file changes. Answers what became of the file: gone, or
   * settling for `waitMs` (0: scanned or reused).
   */
  private async scanFile(candidate: Candidate): Promise<{ gone: string } | { file: string; waitMs: number }> {
    const { path } = candidate;
    const file = relativeName(this.dir, path);
    const cached = this.scanCache.get(file);
    if (cached && candidate.mode === 'check') {
      let st;
      try {
        st = await stat(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { gone: file };
        // Unreadable now: let the worker report why.
      }
      if (st) {
        const fingerprint = fingerprintOf(st);
        // A file an event named is read even so: a filesystem with coarse times can rewrite it
        // within one tick at the same size (the content hash then decides).
        if (cached.fingerprint === fingerprint && !candidate.named) return { file, waitMs: 0 };
        const gate = this.settle.check(file, fingerprint, st.mtimeMs);
        if (!gate.ready) return { file, waitMs: gate.waitMs };
      }
    }
    const { result, fromDisk } = await this.scanInPool(path, file, cached);
    if (result.status === 'gone') return { gone: file };
    const fingerprint = result.fingerprint ?? 'cannot stat';
    if (!cached && candidate.mode === 'check' && result.fingerprint) {
      // A new file found by a listing: read already, but applied only once it has settled.
      const gate = this.settle.check(file, fingerprint, mtimeOf(fingerprint));
      if (!gate.ready) return { file, waitMs: gate.waitMs };
    }
    if (result.status === 'unchanged' && cached) {
      cached.fingerprint = fingerprint;
      return { file, waitMs: 0 };
    }
    if (result.status === 'unchanged' && fromDisk) {
      this.diskCacheHits++;
      this.diskCache?.keep(file, fromDisk.entry);
      rememberWorkAhead(fromDisk.scan);
      this.scanCache.set(file, { hash: fromDisk.entry.hash, fingerprint, scan: fromDisk.scan });
      this.cacheChanges++;
      return { file, waitMs: 0 };
    }
    if (result.status !== 'scanned') return { file, waitMs: 0 };
    if (result.serialized && result.hash !== undefined) {
      this.diskCache?.keep(file, { hash: result.hash, bytes: result.serialized });
    }
    for (const { document, admission: a } of result.scan.entries) {
      if (a.kind !== 'ignored') continue;
      this.logger.debug(
        { file, document, apiVersion: a.apiVersion, kind: a.objectKind, name: a.name },
        'ignoring kind Convoy does not read',
      );
    }
    rememberWorkAhead(result.scan);
    this.scanCache.set(file, { hash: result.hash, fingerprint, scan: result.scan });
    this.cacheChanges++;
    return { file, waitMs: 0 };
  }

  /**
   * Reads `file` in the pool. The worker compares its content hash with the scan in memory or,
   * for a file not scanned yet this run, with the cache on disk; a cached scan that turns out
   * not to decode is replaced by a parse of the file.
   */
  private async scanInPool(
    path: string,
    file: string,
    cached: CachedScan | undefined,
  ): Promise<{ result: ScanResult; fromDisk?: DiskHit }> {
    if (this.diskCacheLoad) await this.diskCacheLoad;
    const cache = this.diskCache;
    const disk = cached ? undefined : cache?.lookup(file);
    const scan = (previousHash: string | undefined) =>
      this.pool.scan({ path, file, previousHash, limits: this.limits, serialize: cache !== undefined });
    const result = await scan(cached?.hash ?? disk?.hash);
    if (result.status !== 'unchanged' || !disk || !cache) return { result };
    const decoded = cache.decode(file, disk);
    if (!decoded) return { result: await scan(undefined) };
    return { result, fromDisk: { entry: disk, scan: decoded } };
  }
}

/** A scan answered by the cache on disk: its entry and the scan decoded from it. */
interface DiskHit {
  entry: DiskEntry;
  scan: FileScan;
}

/** How the provider looks at a file: stat first and wait for it to settle, or read at once. */
interface Candidate {
  path: string;
  mode: 'check' | 'read';
  /** Named by a watch event (not just listed). */
  named?: boolean;
}

/** The files a scan found gone. */
function gonesOf(results: ({ gone: string } | { file: string; waitMs: number })[]): string[] {
  const gone: string[] = [];
  for (const r of results) if ('gone' in r) gone.push(r.gone);
  return gone;
}

/** The modification time recorded in a fingerprint (fingerprintOf()). */
function mtimeOf(fingerprint: string): number {
  return Number(fingerprint.split(':')[1]);
}
