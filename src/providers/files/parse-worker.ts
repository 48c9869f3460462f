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
import { deserialize, serialize } from 'node:v8';
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
  /** A whole result scanned ahead, as v8.serialize() wrote it (see `held`). */
  | { id: number; packed: Uint8Array; entryCount: number };
export type WorkerRequest =
  | { scans: { id: number; request: ScanRequest }[] }
  | { ack: true }
  | { ahead: AheadRequest }
  | { dropAhead: true };
/**
 * Reports on scanning ahead: once a worker scanned (or was asked for) every file of its share,
 * how many it scanned; when it drops what it scanned ahead, how many requests it answered from it.
 */
export type WorkerAheadReport = { aheadDone: number } | { aheadUsed: number };

/** The limits a scan ahead uses: the provider's defaults (a request with others is scanned again). */
const AHEAD_LIMITS: ScanLimits = { maxFileBytes: DEFAULT_MAX_FILE_BYTES, maxObjectBytes: MAX_OBJECT_BYTES };
/**
 * Text held in scans ahead that the provider has not asked for yet, at most; scanning ahead
 * pauses there, so a huge tree never piles up in a worker before the provider starts.
 */
const AHEAD_HELD_BYTES = 32 * 1024 * 1024;
/** A scan ahead larger than this serialized is not kept (the file is scanned again when asked for). */
const AHEAD_PACKED_MAX_BYTES = BATCH_BYTES;

const port: MessagePort = workerPort();

function workerPort(): MessagePort {
  if (!parentPort) throw new Error('parse-worker.js runs only as a worker thread');
  return parentPort;
}

const requests: { id: number; request: ScanRequest }[] = [];
const outbox: { item: WorkerItem; bytes: number }[] = [];
let outboxBytes = 0;
let awaitingAck = false;
let scanning = false;
/** Resolves when the outbox has room again. */
let roomWaiter: (() => void) | undefined;

/**
 * Scanning ahead (scan-ahead.ts): the files of this worker's share not scanned or asked for yet,
 * from `aheadNext` on; the scans made and not yet asked for, by path; the paths asked for.
 * A scan ahead is kept serialized (v8.serialize, the encoding a message uses): as live objects,
 * thousands of scans held for a second survived every scavenge and were copied and marked again
 * and again, which cost the workers more than the time they gained; serialized once, a held scan
 * is one buffer, and posting it costs no second encoding.
 */
let ahead: { path: string; file: string }[] = [];
let aheadNext = 0;
let aheadScanned = 0;
let aheadUsed = 0;
let aheadScheduled = false;
interface HeldScan {
  file: string;
  hash: string;
  fingerprint: string;
  packed: Uint8Array;
  entryCount: number;
}
const held = new Map<string, HeldScan>();
let heldBytes = 0;
const asked = new Set<string>();

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
  if ('dropAhead' in message) {
    port.postMessage({ aheadUsed } satisfies WorkerAheadReport);
    ahead = [];
    held.clear();
    heldBytes = 0;
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
 * Scans the next file of the share ahead, one per event-loop turn so requests and
 * acknowledgements are never kept waiting for more than one file: only while no request is
 * being scanned (or the scan waits for the main thread's acknowledgement), and only up to
 * AHEAD_HELD_BYTES held.
 */
function scheduleAhead(): void {
  if (aheadScheduled || aheadNext >= ahead.length) return;
  aheadScheduled = true;
  setImmediate(() => {
    aheadScheduled = false;
    if ((scanning && !roomWaiter) || heldBytes >= AHEAD_HELD_BYTES) return;
    while (aheadNext < ahead.length && asked.has(ahead[aheadNext].path)) aheadNext++;
    const next = ahead[aheadNext++];
    if (next) {
      const result = scanFileSync({ path: next.path, file: next.file, limits: AHEAD_LIMITS });
      aheadScanned++;
      // Kept only when read completely: a read failure is retried when the file is asked for.
      if (result.status === 'scanned' && result.hash !== undefined && result.fingerprint !== undefined) {
        const packed = serialize(result);
        if (packed.length <= AHEAD_PACKED_MAX_BYTES) {
          const { file } = next;
          const { hash, fingerprint } = result;
          held.set(next.path, { file, hash, fingerprint, packed, entryCount: result.scan.entries.length });
          heldBytes += packed.length;
        }
      }
    }
    if (aheadNext < ahead.length) scheduleAhead();
    else if (ahead.length > 0) {
      port.postMessage({ aheadDone: aheadScanned } satisfies WorkerAheadReport);
      ahead = [];
    }
  });
}

async function scanAll(): Promise<void> {
  scanning = true;
  try {
    for (let next = requests.shift(); next; next = requests.shift()) {
      const ahead = scannedAhead(next.request);
      if (ahead && 'packed' in ahead) {
        await enqueue({ id: next.id, ...ahead }, ahead.packed.length);
        continue;
      }
      const result = ahead?.result ?? scanFileSync(next.request);
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
 * The scan made ahead of `request`, when it is provably the file as it is now: the same name and
 * limits, read completely, and the file's stat fingerprint (size, times, inode) unchanged since
 * that read. The stat is made now, after the provider listed the tree and started watching it,
 * so a file changed since the scan ahead is read again; the same fingerprint is what lets a
 * rescan skip reading a file (provider.ts). Undefined: scan the file now.
 */
function scannedAhead(
  request: ScanRequest,
): { packed: Uint8Array; entryCount: number } | { result: ScanResult } | undefined {
  const kept = held.get(request.path);
  if (!kept) return undefined;
  held.delete(request.path);
  heldBytes -= kept.packed.length;
  scheduleAhead();
  if (kept.file !== request.file) return undefined;
  const { maxFileBytes, maxObjectBytes } = request.limits;
  if (maxFileBytes !== AHEAD_LIMITS.maxFileBytes || maxObjectBytes !== AHEAD_LIMITS.maxObjectBytes) return undefined;
  let now: string;
  try {
    now = fingerprintOf(statSync(request.path));
  } catch {
    return undefined;
  }
  if (now !== kept.fingerprint) return undefined;
  aheadUsed++;
  if (request.previousHash === kept.hash) return { result: { status: 'unchanged', fingerprint: now } };
  // The cache on disk wants the scan serialized alone (scanAll()): decode it to go that way.
  if (request.serialize) return { result: deserialize(kept.packed) as ScanResult };
  return { packed: kept.packed, entryCount: kept.entryCount };
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
  if ('packed' in item) return Math.max(1, item.entryCount);
  return item.result.status === 'scanned' ? Math.max(1, item.result.scan.entries.length) : 1;
}
