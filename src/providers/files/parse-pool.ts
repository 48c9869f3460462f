/**
 * A small pool of worker threads that scan files (scan.ts) off the main thread, so reading a
 * directory with a huge or hostile file never delays xDS or the admin server: the main thread
 * only sends a path and receives plain data.
 *
 * Each worker scans one file at a time, with a heap limit and a deadline. A worker that runs
 * out of memory, crashes or overruns the deadline is terminated and replaced; the file it was
 * scanning gets a problem instead of a result. Idle workers do not keep the process alive.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FileScan, ScanRequest, ScanResult } from './scan';

/** A message from a worker: a batch of entries of a scan in progress, or the scan's result. */
type WorkerMessage = { id: number; entries: FileScan['entries'] } | { id: number; result: ScanResult };

export interface ScanPoolOptions {
  /** Worker threads. Default: one per spare core, at most 2, at least 1. */
  size?: number;
  /** A scan running longer is abandoned (its worker terminated). Default 60 s. */
  timeoutMs?: number;
  /** Heap limit of each worker. Default 512 MiB. */
  maxHeapMb?: number;
}

interface Task {
  id: number;
  request: ScanRequest;
  resolve: (r: ScanResult) => void;
  /** Entries received so far (the worker sends them before the result). */
  entries: FileScan['entries'];
}

interface Slot {
  worker: Worker;
  task?: Task;
  timer?: NodeJS.Timeout;
}

const WORKER_SCRIPT = join(__dirname, 'parse-worker.js');

export class ScanPool {
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly maxHeapMb: number;
  private readonly slots = new Set<Slot>();
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;

  constructor(opts: ScanPoolOptions = {}) {
    this.size = Math.max(1, opts.size ?? Math.min(2, availableParallelism() - 1));
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.maxHeapMb = opts.maxHeapMb ?? 512;
  }

  /** Scans one file in a worker. Never rejects: failures come back as problems of the file. */
  scan(request: ScanRequest): Promise<ScanResult> {
    if (this.closed) return Promise.resolve(failure(request, 'the file provider is stopping'));
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, request, resolve, entries: [] });
      this.dispatch();
    });
  }

  /** Terminates every worker; queued and running scans resolve as failures. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.queue.splice(0)) t.resolve(failure(t.request, 'the file provider is stopping'));
    const running = [...this.slots];
    this.slots.clear();
    await Promise.all(
      running.map((slot) => {
        this.finish(slot, failure(slot.task?.request, 'the file provider is stopping'));
        return slot.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = [...this.slots].find((s) => !s.task);
      if (!slot) {
        if (this.slots.size >= this.size) return;
        slot = this.spawn();
      }
      const task = this.queue.shift()!;
      slot.task = task;
      slot.worker.ref();
      slot.timer = setTimeout(() => {
        this.retire(slot, `scanning took longer than ${Math.round(this.timeoutMs / 1000)} s; not applied`);
      }, this.timeoutMs);
      slot.worker.postMessage({ id: task.id, request: task.request });
    }
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_SCRIPT, {
      resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb },
      stdout: false,
      stderr: false,
    });
    const slot: Slot = { worker };
    worker.on('message', (m: WorkerMessage) => {
      const task = slot.task;
      if (task?.id !== m.id) return;
      if ('entries' in m) {
        for (const e of m.entries) task.entries.push(e);
        // Acknowledge on the next turn, after timers and sockets had theirs (see parse-worker.ts).
        setImmediate(() => {
          if (slot.task === task) worker.postMessage({ ack: task.id });
        });
        return;
      }
      const r = m.result;
      this.finish(slot, r.status === 'scanned' ? { ...r, scan: { ...r.scan, entries: task.entries } } : r);
      worker.unref();
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

  /** Resolves the slot's task, if any, and clears its deadline. */
  private finish(slot: Slot, result: ScanResult): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    const task = slot.task;
    slot.task = undefined;
    task?.resolve(result);
  }

  /** Fails the slot's task with `why`, drops the worker and lets another take the queue. */
  private retire(slot: Slot, why: string): void {
    if (!this.slots.delete(slot)) return;
    this.finish(slot, failure(slot.task?.request, why));
    void slot.worker.terminate();
    this.dispatch();
  }
}

/** A scan result carrying one problem for the whole file. */
function failure(request: ScanRequest | undefined, message: string): ScanResult {
  const file = request?.file ?? '';
  return {
    status: 'scanned',
    scan: { file, problems: [{ file, message }], broken: true, entries: [] },
  };
}
