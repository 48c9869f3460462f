/**
 * Entry point of a parse worker thread (started by parse-pool.ts): scans the files it is sent
 * and posts each result back with the request's id.
 *
 * A scan's entries go first, in batches of about BATCH_BYTES, each sent only after the main
 * thread acknowledged the previous one. The main thread decodes all queued messages in one go
 * and acknowledges on its next turn, so however large a file is, the main thread never decodes
 * more than one batch per worker before serving timers and sockets again.
 */
import type { MessagePort } from 'node:worker_threads';
import { parentPort } from 'node:worker_threads';
import { storedSize } from './apiserver';
import type { FileScan, ScanRequest } from './scan';
import { scanFile } from './scan';

const BATCH_BYTES = 256 * 1024;
const BATCH_ENTRIES = 100;

const port: MessagePort = workerPort();

function workerPort(): MessagePort {
  if (!parentPort) throw new Error('parse-worker.js runs only as a worker thread');
  return parentPort;
}

/** The resolver of the batch awaiting acknowledgement, by request id. */
const awaitingAck = new Map<number, () => void>();

port.on('message', (message: { id: number; request: ScanRequest } | { ack: number }) => {
  if ('ack' in message) {
    awaitingAck.get(message.ack)?.();
    return;
  }
  void scan(message.id, message.request);
});

async function scan(id: number, request: ScanRequest): Promise<void> {
  let result = await scanFile(request);
  if (result.status === 'scanned') {
    let batch: FileScan['entries'] = [];
    let bytes = 0;
    for (const entry of result.scan.entries) {
      batch.push(entry);
      const a = entry.admission;
      bytes += a.kind === 'ok' ? storedSize(a.object, BATCH_BYTES) : 256;
      if (bytes >= BATCH_BYTES || batch.length >= BATCH_ENTRIES) {
        await sendBatch(id, batch);
        batch = [];
        bytes = 0;
      }
    }
    if (batch.length > 0) await sendBatch(id, batch);
    result = { ...result, scan: { ...result.scan, entries: [] } };
  }
  port.postMessage({ id, result });
}

function sendBatch(id: number, entries: FileScan['entries']): Promise<void> {
  return new Promise((resolve) => {
    awaitingAck.set(id, () => {
      awaitingAck.delete(id);
      resolve();
    });
    port.postMessage({ id, entries });
  });
}
