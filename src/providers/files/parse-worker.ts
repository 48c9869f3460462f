/**
 * Entry point of a parse worker thread (started by parse-pool.ts): scans the files it is sent,
 * one at a time in the order received, and posts what they yielded back, tagged with each
 * request's id.
 *
 * Output goes in messages of about BATCH_BYTES that pack the results of many small files (or a
 * slice of one large file's entries), and each message is sent only after the main thread
 * acknowledged the previous one. The main thread decodes all queued messages in one go and
 * acknowledges on its next turn, so however large a file or a directory is, the main thread
 * never decodes more than one batch per worker before serving timers and sockets again. Scanning
 * goes on while a message waits for its acknowledgement, up to OUTBOX_BYTES of output, so the
 * worker is not idle for the round trip.
 */
import { statSync } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import { serialize } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { MAX_OBJECT_BYTES } from './apiserver';
import { MAX_CACHED_SCAN_BYTES } from './disk-cache';
import type { AheadRequest } from './scan-ahead';
import { listAhead } from './scan-ahead';
import type { FileScan, ScanLimits, ScanRequest, ScanResult } from './scan';
import { DEFAULT_MAX_FILE_BYTES, fingerprintOf, scanFileSync } from './scan';

const BATCH_BYTES = 256 * 1024;
const BATCH_ENTRIES = 100;
/** Output scanned ahead of the main thread's acknowledgements, at most. */
const OUTBOX_BYTES = 4 * BATCH_BYTES;

/** One item of a message: a slice of a scan's entries, or a scan's result (closing its id). */
export type WorkerItem =
  | { id: number; entries: FileScan['entries'] }
  | { id: number; result: ScanResult }
  /** The file is as scanned ahead (its request's `aheadFingerprint`): use that scan. */
  | { id: number; sameAsAhead: true };
export type WorkerRequest =
  | { scans: { id: number; request: ScanRequest; aheadFingerprint?: string }[] }
  | { ack: true }
  | { ahead: AheadRequest }
  | { aheadAck: number }
  | { stopAhead: true }
  | { dropAhead: true };
/**
 * Reports on scanning ahead: once a worker stopped scanning ahead, how many files it scanned.
 */
export type WorkerAheadReport =
  | { aheadDone: number }
  /** Scans ahead (plain results; the pool keeps them until asked for), `bytes` of text. */
  | { aheadScans: { path: string; file: string; result: ScanResult }[]; bytes: number; limits: ScanLimits };

/** The limits a scan ahead uses: the provider's defaults (a request with others is scanned again). */
const AHEAD_LIMITS: ScanLimits = { maxFileBytes: DEFAULT_MAX_FILE_BYTES, maxObjectBytes: MAX_OBJECT_BYTES };
/**
 * Text of scans ahead posted and not yet acknowledged, at most. Scans ahead are posted without
 * waiting for acknowledgements (the main thread is loading modules and cannot answer), so this
 * bounds what it decodes in the one turn after: scanning ahead pauses there.
 */
const AHEAD_UNACKED_BYTES = 8 * 1024 * 1024;

const port: MessagePort = workerPort();

function workerPort(): MessagePort {
  if (!parentPort) throw new Error('parse-worker.js runs only as a worker thread');
  return parentPort;
}

const requests: { id: number; request: ScanRequest; aheadFingerprint?: string }[] = [];
const outbox: { item: WorkerItem; bytes: number }[] = [];
let outboxBytes = 0;
let awaitingAck = false;
let scanning = false;
/** Resolves when the outbox has room again. */
let roomWaiter: (() => void) | undefined;

/**
 * Scanning ahead (scan-ahead.ts): the files of this worker's share not scanned or asked for yet,
 * from `aheadNext` on, and the paths asked for. Scans ahead are posted to the pool at once, as
 * plain results (the same structured clone as any result), and the pool keeps them: held in a
 * worker as live objects they survived every scavenge and cost more in collection than they
 * saved, and held serialized they cost a second encoding (docs/architecture.md §10.6).
 */
let ahead: { path: string; file: string }[] = [];
let aheadNext = 0;
let aheadScanned = 0;
let aheadScheduled = false;
let aheadUnacked = 0;
const asked = new Set<string>();
let aheadBatch: { path: string; file: string; result: ScanResult }[] = [];
let aheadBatchBytes = 0;

port.on('message', (message: WorkerRequest) => {
  if ('ack' in message) {
    awaitingAck = false;
    send();
    return;
  }
  if ('ahead' in message) {
    ahead = listAhead(message.ahead);
    aheadNext = 0;
    scheduleAhead();
    return;
  }
  if ('aheadAck' in message) {
    aheadUnacked -= message.aheadAck;
    scheduleAhead();
    return;
  }
  if ('stopAhead' in message) {
    if (ahead.length > 0) port.postMessage({ aheadDone: aheadScanned } satisfies WorkerAheadReport);
    ahead = [];
    return;
  }
  if ('dropAhead' in message) {
    ahead = [];
    asked.clear();
    return;
  }
  for (const scan of message.scans) {
    requests.push(scan);
    if (ahead.length > 0) asked.add(scan.request.path);
  }
  if (!scanning) void scanAll();
});

/**
 * Scans the next files of the share ahead, a few milliseconds' worth per event-loop turn so
 * requests are never kept waiting long: only while no request is being scanned (or the scan
 * waits for the main thread's acknowledgement), and only up to AHEAD_UNACKED_BYTES posted and
 * not acknowledged.
 */
function scheduleAhead(): void {
  if (aheadScheduled || aheadNext >= ahead.length) return;
  aheadScheduled = true;
  setImmediate(() => {
    aheadScheduled = false;
    const until = Date.now() + 5;
    while (aheadNext < ahead.length && Date.now() < until) {
      if ((scanning && !roomWaiter) || aheadUnacked >= AHEAD_UNACKED_BYTES) break;
      const next = ahead[aheadNext++];
      if (asked.has(next.path)) continue;
      const result = scanFileSync({ path: next.path, file: next.file, limits: AHEAD_LIMITS });
      aheadScanned++;
      // Only a file read completely is offered: a read failure is retried when it is asked for.
      if (result.status !== 'scanned' || result.hash === undefined || result.fingerprint === undefined) continue;
      const bytes = result.bytes ?? 0;
      aheadBatch.push({ path: next.path, file: next.file, result });
      aheadBatchBytes += bytes;
      aheadUnacked += bytes;
      if (aheadBatchBytes >= BATCH_BYTES) postAhead();
    }
    postAhead();
    if (aheadNext < ahead.length) {
      if (!((scanning && !roomWaiter) || aheadUnacked >= AHEAD_UNACKED_BYTES)) scheduleAhead();
    } else if (ahead.length > 0) {
      port.postMessage({ aheadDone: aheadScanned } satisfies WorkerAheadReport);
      ahead = [];
    }
  });
}

/** Posts the scans ahead made since the last post. */
function postAhead(): void {
  if (aheadBatch.length === 0) return;
  const report = { aheadScans: aheadBatch, bytes: aheadBatchBytes, limits: AHEAD_LIMITS };
  port.postMessage(report satisfies WorkerAheadReport);
  aheadBatch = [];
  aheadBatchBytes = 0;
}

async function scanAll(): Promise<void> {
  scanning = true;
  try {
    for (let next = requests.shift(); next; next = requests.shift()) {
      if (next.aheadFingerprint !== undefined && sameAsAhead(next.request.path, next.aheadFingerprint)) {
        await enqueue({ id: next.id, sameAsAhead: true }, 64);
        continue;
      }
      const result = scanFileSync(next.request);
      if (next.request.serialize && result.status === 'scanned' && result.hash !== undefined) {
        // Serialized whole, before it is sliced; only a scan small enough to decode at once.
        const serialized = serialize(result.scan);
        if (serialized.length <= MAX_CACHED_SCAN_BYTES) result.serialized = serialized;
      }
      await queueScan(next.id, result);
    }
  } finally {
    scanning = false;
    scheduleAhead();
  }
}

/**
 * Whether the file at `path` is still the one scanned ahead with `fingerprint`: its stat
 * fingerprint (size, times, inode) is unchanged since that read. The stat is made now, after
 * the provider listed the tree and started watching it, so a file changed since the scan ahead
 * is read again; the same fingerprint is what lets a rescan skip reading a file (provider.ts).
 */
function sameAsAhead(path: string, fingerprint: string): boolean {
  let now: string;
  try {
    now = fingerprintOf(statSync(path));
  } catch {
    return false;
  }
  if (now !== fingerprint) return false;
  return true;
}

/** Queues a scan's output: its entries in slices of about BATCH_BYTES, then the result. */
async function queueScan(id: number, result: ScanResult): Promise<void> {
  if (result.status === 'scanned') {
    let slice: FileScan['entries'] = [];
    let bytes = 0;
    // Each entry's share of the text read: a pacing estimate, far cheaper than walking values.
    const entryBytes = Math.max(
      256,
      Math.ceil((result.bytes ?? 0) / Math.max(1, result.scan.entries.length)),
    );
    for (const entry of result.scan.entries) {
      slice.push(entry);
      bytes += entryBytes;
      if (bytes >= BATCH_BYTES || slice.length >= BATCH_ENTRIES) {
        await enqueue({ id, entries: slice }, bytes);
        slice = [];
        bytes = 0;
      }
    }
    result = { ...result, scan: { ...result.scan, entries: slice } };
    await enqueue({ id, result }, bytes + 256 + (result.serialized?.length ?? 0));
    return;
  }
  await enqueue({ id, result }, 64);
}

async function enqueue(item: WorkerItem, bytes: number): Promise<void> {
  outbox.push({ item, bytes });
  outboxBytes += bytes;
  send();
  while (outboxBytes >= OUTBOX_BYTES) await new Promise<void>((resolve) => (roomWaiter = resolve));
}

/** Posts the next message, if none awaits acknowledgement: queued items up to BATCH_BYTES. */
function send(): void {
  if (awaitingAck || outbox.length === 0) return;
  const items: WorkerItem[] = [];
  let bytes = 0;
  let count = 0;
  while (
    outbox.length > 0 &&
    (items.length === 0 || (bytes + outbox[0].bytes <= BATCH_BYTES && count < BATCH_ENTRIES))
  ) {
    const next = outbox.shift()!;
    items.push(next.item);
    bytes += next.bytes;
    count += entryCount(next.item);
  }
  outboxBytes -= bytes;
  awaitingAck = true;
  port.postMessage(items);
  if (outboxBytes < OUTBOX_BYTES && roomWaiter) {
    const wake = roomWaiter;
    roomWaiter = undefined;
    wake();
  }
}

function entryCount(item: WorkerItem): number {
  if ('entries' in item) return item.entries.length;
  if ('sameAsAhead' in item) return 1;
  return item.result.status === 'scanned' ? Math.max(1, item.result.scan.entries.length) : 1;
}
