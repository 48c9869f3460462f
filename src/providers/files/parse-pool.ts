/**
 * A small pool of worker threads that scan files (scan.ts) off the main thread, so reading a
 * directory with a huge or hostile file never delays xDS or the admin server: the main thread
 * only sends paths and receives plain data.
 *
 * Each worker is sent up to WINDOW files ahead and scans them one at a time, in order, so it
 * never waits for the main thread between files; its output comes back in batches (see
 * parse-worker.ts). A worker that runs out of memory, crashes or makes no progress for the
 * deadline is terminated and replaced: the file it was scanning (its oldest unanswered one) gets
 * a problem instead of a result, and the files queued behind it are scanned by the next worker.
 * Idle workers do not keep the process alive, and all but one are ended after `idleMs`: each is
 * a whole V8 isolate (tens of MiB of RSS), needed in numbers only for a cold start or a rescan of
 * the tree, while the one kept answers single-file changes without a worker start. The one kept
 * is replaced by a fresh worker, with V8's default nursery, when it goes idle after scanning
 * `recycleAfterFiles` files: a worker that scanned half a large tree keeps the heap pages that
 * work touched resident for good, a fresh one only what loading the parser needs
 * (docs/operations.md "Steady RSS, session 16").
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { WorkerItem, WorkerRequest } from './parse-worker';
import type { FileScan, ScanRequest, ScanResult } from './scan';

/** Files sent to one worker ahead of its answers. */
const WINDOW = 64;
/**
 * Young generation of each worker. V8 sizes it from the heap limit, which gives a worker a few
 * MiB; a scan allocates mostly short-lived values (text, parse state, messages), so a larger
 * nursery collects the same garbage in fewer, cheaper scavenges.
 */
const YOUNG_GENERATION_MB = 48;
/**
 * Each worker's semi-spaces start at their full size (a third of YOUNG_GENERATION_MB) instead of
 * the few MiB V8 starts with and keeps while few values survive: a scan's garbage is then
 * collected in half as many scavenges (docs/architecture.md §10.4).
 */
const SEMI_SPACE_MB = YOUNG_GENERATION_MB / 3;

/** Workers spawned whose isolate may not exist yet (see withWorkerNursery). */
let workersStarting = 0;

/**
 * Spawns a worker with V8's minimum semi-space size raised to SEMI_SPACE_MB while its isolate is
 * made. V8 flags are the process's, not a worker's (a Worker accepts only the maximum, in
 * resourceLimits), and an isolate reads this one when it is created: so the flag is set before
 * the spawn and put back to V8's default (0, sized by V8) once every worker spawned meanwhile is
 * online. The main thread's heap, made long before, and later threads keep their own sizing.
 */
function withWorkerNursery(spawn: () => Worker): Worker {
  if (workersStarting++ === 0) setFlagsFromString(`--min-semi-space-size=${SEMI_SPACE_MB}`);
  let settled = false;
  const done = (): void => {
    if (settled) return;
    settled = true;
    if (--workersStarting === 0) setFlagsFromString('--min-semi-space-size=0');
  };
  let worker: Worker;
  try {
    worker = spawn();
  } catch (err) {
    done();
    throw err;
  }
  worker.once('online', done);
  worker.once('exit', done);
  return worker;
}

export interface ScanPoolOptions {
  /**
   * Worker threads. Default: one per core, at most 4. The main thread has little to do while
   * files are scanned (it receives results), and the operating system shares the cores between
   * it and the workers, so a core per worker keeps a cold start short without starving it.
   */
  size?: number;
  /** A worker that answers nothing for this long is terminated. Default 60 s. */
  timeoutMs?: number;
  /** Heap limit of each worker. Default 512 MiB. */
  maxHeapMb?: number;
  /** Idle workers beyond the first are ended after this long. Default 10 s. */
  idleMs?: number;
  /**
   * The last worker is replaced by a fresh one when it goes idle (idleMs) having scanned at least
   * this many files since it started. Default 256: a cold start or a rescan of the tree, not a
   * few single-file changes.
   */
  recycleAfterFiles?: number;
}

interface Task {
  id: number;
  request: ScanRequest;
  resolve: (r: ScanResult) => void;
  /** Entries received so far (the worker may send them before the result). */
  entries: FileScan['entries'];
}

interface Slot {
  worker: Worker;
  /** Tasks sent to the worker and not yet answered, oldest first (the worker's order). */
  tasks: Map<number, Task>;
  timer?: NodeJS.Timeout;
  /** Ends the worker when it stays idle (see the file comment). */
  idleTimer?: NodeJS.Timeout;
  /** Files the worker answered since it started (see recycleAfterFiles). */
  answered: number;
}

const WORKER_SCRIPT = join(__dirname, 'parse-worker.js');

export class ScanPool {
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly maxHeapMb: number;
  private readonly idleMs: number;
  private readonly recycleAfterFiles: number;
  private readonly slots = new Set<Slot>();
  /** Tasks not yet sent to a worker: `queue[queueHead]` onwards (shift() is O(n) on a long array). */
  private queue: Task[] = [];
  private queueHead = 0;
  private nextId = 1;
  private started = 0;
  private closed = false;
  private dispatchScheduled = false;

  constructor(opts: ScanPoolOptions = {}) {
    this.size = Math.max(1, opts.size ?? Math.min(4, availableParallelism()));
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.maxHeapMb = opts.maxHeapMb ?? 512;
    this.idleMs = opts.idleMs ?? 10_000;
    this.recycleAfterFiles = opts.recycleAfterFiles ?? 256;
  }

  /** How many workers are running now (for tests and metrics). */
  workers(): number {
    return this.slots.size;
  }

  /**
   * How many workers were ever started. Tests read this instead of workers() after a burst:
   * a worker that finished early may already have been ended as idle.
   */
  workersStarted(): number {
    return this.started;
  }

  /** Scans one file in a worker. Never rejects: failures come back as problems of the file. */
  scan(request: ScanRequest): Promise<ScanResult> {
    if (this.closed) return Promise.resolve(failure(request, 'the file provider is stopping'));
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, request, resolve, entries: [] });
      // Files asked for in one turn (a whole tree) go out together.
      if (this.dispatchScheduled) return;
      this.dispatchScheduled = true;
      queueMicrotask(() => {
        this.dispatchScheduled = false;
        this.dispatch();
      });
    });
  }

  /**
   * Starts the workers now, so their start (loading the parser and the validation) overlaps
   * with listing the tree instead of following it. Idle workers keep nothing alive.
   */
  prestart(): void {
    while (!this.closed && this.slots.size < this.size) {
      const slot = this.spawn();
      slot.worker.unref();
      this.armIdle(slot);
    }
  }

  /** Terminates every worker; queued and running scans resolve as failures. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.takeQueue()) t.resolve(failure(t.request, 'the file provider is stopping'));
    const running = [...this.slots];
    this.slots.clear();
    await Promise.all(
      running.map((slot) => {
        if (slot.timer) clearTimeout(slot.timer);
        if (slot.idleTimer) clearTimeout(slot.idleTimer);
        for (const task of slot.tasks.values())
          task.resolve(failure(task.request, 'the file provider is stopping'));
        slot.tasks.clear();
        return slot.worker.terminate();
      }),
    );
  }

  /**
   * Hands queued files to workers: to the least loaded one with room, spawning up to `size`, in
   * one message per worker and turn.
   */
  private dispatch(): void {
    const sends = new Map<Slot, { id: number; request: ScanRequest }[]>();
    while (this.queueHead < this.queue.length) {
      let slot: Slot | undefined;
      for (const s of this.slots) if (!slot || s.tasks.size < slot.tasks.size) slot = s;
      if ((!slot || slot.tasks.size > 0) && this.slots.size < this.size) slot = this.spawn();
      if (!slot || slot.tasks.size >= WINDOW) break;
      const task = this.queue[this.queueHead++];
      slot.tasks.set(task.id, task);
      if (slot.tasks.size === 1) {
        slot.worker.ref();
        this.armDeadline(slot);
        if (slot.idleTimer) clearTimeout(slot.idleTimer);
        slot.idleTimer = undefined;
      }
      const batch = sends.get(slot) ?? [];
      batch.push({ id: task.id, request: task.request });
      sends.set(slot, batch);
    }
    if (this.queueHead === this.queue.length) this.takeQueue();
    for (const [slot, scans] of sends) slot.worker.postMessage({ scans } satisfies WorkerRequest);
  }

  /** Empties the queue; returns the tasks that were still in it, in order. */
  private takeQueue(): Task[] {
    const rest = this.queue.slice(this.queueHead);
    this.queue = [];
    this.queueHead = 0;
    return rest;
  }

  /** (Re)starts the slot's deadline: the worker must answer something within timeoutMs. */
  private armDeadline(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = setTimeout(() => {
      this.retire(slot, `scanning took longer than ${Math.round(this.timeoutMs / 1000)} s; not applied`);
    }, this.timeoutMs);
  }

  /**
   * Ends `slot`'s worker after idleMs without work, unless it is then the only worker left, which
   * is replaced by a fresh one instead if it scanned recycleAfterFiles files (see the file
   * comment); dispatch starts workers again when files come.
   */
  private armIdle(slot: Slot): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      slot.idleTimer = undefined;
      if (slot.tasks.size > 0 || !this.slots.has(slot)) return;
      const last = this.slots.size <= 1;
      if (last && (this.closed || slot.answered < this.recycleAfterFiles)) return;
      this.slots.delete(slot);
      if (slot.timer) clearTimeout(slot.timer);
      void slot.worker.terminate();
      // Its replacement starts now, while nothing waits for it, and keeps nothing alive.
      if (last) this.spawn(false).worker.unref();
    }, this.idleMs);
    slot.idleTimer.unref();
  }

  /**
   * Starts a worker. `nursery` sizes its young generation for scanning many files (see
   * withWorkerNursery); the fresh worker kept for single-file changes gets V8's default sizing.
   */
  private spawn(nursery = true): Slot {
    this.started++;
    const create = (): Worker =>
      new Worker(WORKER_SCRIPT, {
        resourceLimits: {
          maxOldGenerationSizeMb: this.maxHeapMb,
          maxYoungGenerationSizeMb: YOUNG_GENERATION_MB,
        },
        stdout: false,
        stderr: false,
      });
    const worker = nursery ? withWorkerNursery(create) : create();
    const slot: Slot = { worker, tasks: new Map(), answered: 0 };
    worker.on('message', (items: WorkerItem[]) => {
      if (!this.slots.has(slot)) return;
      for (const item of items) {
        const task = slot.tasks.get(item.id);
        if (!task) continue;
        if ('entries' in item) {
          for (const e of item.entries) task.entries.push(e);
          continue;
        }
        slot.tasks.delete(item.id);
        slot.answered++;
        const r = item.result;
        if (r.status === 'scanned') {
          for (const e of r.scan.entries) task.entries.push(e);
          task.resolve({ ...r, scan: { ...r.scan, entries: task.entries } });
        } else task.resolve(r);
      }
      if (slot.tasks.size > 0) this.armDeadline(slot);
      else {
        if (slot.timer) clearTimeout(slot.timer);
        slot.timer = undefined;
        worker.unref();
        this.armIdle(slot);
      }
      // Acknowledge on the next turn, after timers and sockets had theirs (see parse-worker.ts).
      setImmediate(() => {
        if (this.slots.has(slot)) worker.postMessage({ ack: true } satisfies WorkerRequest);
      });
      this.dispatch();
    });
    worker.on('error', (err: Error & { code?: string }) => {
      const why =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `parsing needs more than ${this.maxHeapMb} MiB of memory; not applied`
          : `parsing failed: ${err.message}`;
      this.retire(slot, why);
    });
    worker.on('exit', () => this.retire(slot, 'the parser stopped unexpectedly; not applied'));
    this.slots.add(slot);
    return slot;
  }

  /**
   * Drops the worker: its oldest unanswered file (the one it was scanning) fails with `why`, the
   * files queued behind it go back to the front of the queue for another worker.
   */
  private retire(slot: Slot, why: string): void {
    if (!this.slots.delete(slot)) return;
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.timer = undefined;
    const [current, ...behind] = slot.tasks.values();
    slot.tasks.clear();
    current?.resolve(failure(current.request, why));
    for (const task of behind) task.entries = [];
    this.queue = [...behind, ...this.takeQueue()];
    void slot.worker.terminate();
    if (!this.closed) this.dispatch();
  }
}

/** A default pool started ahead of its provider (prestartDefaultPool()), not yet adopted. */
let prestarted: ScanPool | undefined;

/**
 * Starts the workers of a default pool now, for the next file provider with default settings to
 * adopt, so they load the parser and the validation while the process is still loading its own
 * modules (docs/architecture.md §10.4). Unadopted, they keep nothing alive.
 */
export function prestartDefaultPool(): void {
  if (prestarted) return;
  prestarted = new ScanPool();
  prestarted.prestart();
}

/** The pool prestartDefaultPool() started, handed out once; undefined when there is none. */
export function adoptPrestartedPool(): ScanPool | undefined {
  const pool = prestarted;
  prestarted = undefined;
  return pool;
}

/** A scan result carrying one problem for the whole file. */
function failure(request: ScanRequest | undefined, message: string): ScanResult {
  const file = request?.file ?? '';
  return {
    status: 'scanned',
    scan: { file, problems: [{ file, message }], broken: true, entries: [] },
  };
}
