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
import type { MessagePort } from 'node:worker_threads';
import { serialize } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { MAX_CACHED_SCAN_BYTES } from './disk-cache';
import type { FileScan, ScanRequest, ScanResult } from './scan';
import { scanFile } from './scan';

const BATCH_BYTES = 256 * 1024;
const BATCH_ENTRIES = 100;
/** Output scanned ahead of the main thread's acknowledgements, at most. */
const OUTBOX_BYTES = 4 * BATCH_BYTES;

/** One item of a message: a slice of a scan's entries, or a scan's result (closing its id). */
export type WorkerItem = { id: number; entries: FileScan['entries'] } | { id: number; result: ScanResult };
export type WorkerRequest = { scans: { id: number; request: ScanRequest }[] } | { ack: true };

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

port.on('message', (message: WorkerRequest) => {
  if ('ack' in message) {
    awaitingAck = false;
    send();
    return;
  }
  for (const scan of message.scans) requests.push(scan);
  if (!scanning) void scanAll();
});

async function scanAll(): Promise<void> {
  scanning = true;
  try {
    for (let next = requests.shift(); next; next = requests.shift()) {
      const result = await scanFile(next.request);
      if (next.request.serialize && result.status === 'scanned' && result.hash !== undefined) {
        // Serialized whole, before it is sliced; only a scan small enough to decode at once.
        const serialized = serialize(result.scan);
        if (serialized.length <= MAX_CACHED_SCAN_BYTES) result.serialized = serialized;
      }
      await queueScan(next.id, result);
    }
  } finally {
    scanning = false;
  }
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
  return item.result.status === 'scanned' ? Math.max(1, item.result.scan.entries.length) : 1;
}
