/**
 * Scans one file: reads it within the size limit, and unless its content is the one scanned
 * last time, parses it and admits every entry the way the API server would. This is the
 * expensive part of a rescan and has no state, so it runs in a worker thread (parse-pool.ts);
 * the result is plain data that crosses to the main thread by structured clone.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

import type { KeyPairCheck } from '../../pki/keypair';
import { checkSecretKeyPair, rememberKeyPairCheck } from '../../gateway/secret-key-pair';
import type { Admission } from './apiserver';
import { admitEntry, generationFingerprint, rememberGenerationFingerprint } from './apiserver';
import type { RawEntry } from './parse';
import { parseFile } from './parse';
import type { FileProblem } from './problems';
import type { KubeObject } from '../../store/objects';

export interface ScanLimits {
  /** A larger file is not read. */
  maxFileBytes: number;
  /** A larger object is refused. */
  maxObjectBytes: number;
}

export interface ScanRequest {
  /** Absolute path to read. */
  path: string;
  /** Name in problems: the path relative to the provider's directory. */
  file: string;
  /** Content hash of the last scan of this file; an equal content answers `unchanged`. */
  previousHash?: string;
  limits: ScanLimits;
  /** Also answer the scan serialized, for the cache on disk (disk-cache.ts). */
  serialize?: boolean;
}

/** What one file yielded, before it is applied. */
export interface FileScan {
  /** Path relative to the provider's directory. */
  file: string;
  /** Problems with the file as a whole or its syntax (not with single objects). */
  problems: FileProblem[];
  /**
   * The file could not be read or did not parse completely. A broken file that served before
   * changes nothing; one never seen before contributes the documents that did parse.
   */
  broken: boolean;
  /**
   * `keyPair` is the key-pair check of an admitted TLS Secret, made here so the first build need
   * not (docs/architecture.md §10.4); absent for other objects, or when the check threw.
   * `fingerprint` is an admitted object's generation fingerprint (apiserver.ts), made here too.
   */
  entries: { document?: number; admission: Admission; keyPair?: KeyPairCheck; fingerprint?: string }[];
}

/**
 * `fingerprint` is the size, times and inode of the file as opened for this scan (see
 * fingerprintOf()); the provider compares it with later stats to tell whether to read again.
 */
export type ScanResult =
  | { status: 'gone' }
  | { status: 'unchanged'; fingerprint?: string }
  /**
   * `hash` is absent when the file could not be read; `bytes` is the length of the text read;
   * `serialized` is the scan as v8.serialize() writes it, when asked for and small enough.
   */
  | {
      status: 'scanned';
      hash?: string;
      fingerprint?: string;
      bytes?: number;
      serialized?: Uint8Array;
      scan: FileScan;
    };

/** What identifies one version of a file without reading it: size, times and inode. */
export function fingerprintOf(st: { size: number; mtimeMs: number; ctimeMs: number; ino: number }): string {
  return `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
}

/** Reads, parses and admits one file. Never throws: every failure is a problem of the file. */
export async function scanFile(req: ScanRequest): Promise<ScanResult> {
  const { file } = req;
  const failed = (message: string, fingerprint?: string): ScanResult => ({
    status: 'scanned',
    fingerprint,
    scan: { file, problems: [{ file, message }], broken: true, entries: [] },
  });
  let bytes: Buffer;
  let fingerprint: string;
  try {
    const read = readBounded(req.path, req.limits.maxFileBytes);
    fingerprint = read.fingerprint;
    if (read.tooLarge !== undefined) {
      return failed(
        `Too long: may not be more than ${req.limits.maxFileBytes} bytes (the file is ${read.tooLarge} bytes; ` +
          `not read)`,
        read.fingerprint,
      );
    }
    bytes = read.bytes;
  } catch (err) {
    // Deleted between listing and reading: the next event rescans; treat as gone.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'gone' };
    return failed(`cannot read file: ${(err as Error).message}`);
  }
  const hash = createHash('sha256').update(bytes).digest('hex');
  if (hash === req.previousHash) return { status: 'unchanged', fingerprint };
  let parsed;
  try {
    parsed = parseFile(file, bytes.toString('utf8'));
  } catch (err) {
    return failed(`cannot parse file: ${(err as Error).message}`, fingerprint);
  }
  const entries: FileScan['entries'] = parsed.entries.map((entry) => {
    const admission = admitSafely(entry, req.limits.maxObjectBytes);
    if (admission.kind !== 'ok') return { document: entry.document, admission };
    const fingerprint = generationFingerprint(admission.object);
    const keyPair = keyPairOf(admission.object);
    return keyPair
      ? { document: entry.document, admission, keyPair, fingerprint }
      : { document: entry.document, admission, fingerprint };
  });
  return {
    status: 'scanned',
    hash,
    fingerprint,
    bytes: bytes.length,
    scan: {
      file,
      problems: parsed.errors.map((e) => ({ file, document: e.document, message: e.message })),
      broken: parsed.errors.length > 0,
      entries,
    },
  };
}

/** admitEntry(), with anything it throws (say, on absurdly deep values) as a refusal. */
function admitSafely(entry: RawEntry, maxObjectBytes: number): Admission {
  try {
    return admitEntry(entry, maxObjectBytes);
  } catch (err) {
    return { kind: 'refused', message: `object could not be processed: ${(err as Error).message}` };
  }
}

/**
 * The key-pair check of an admitted Secret (secret-key-pair.ts), or undefined for another object
 * or when the check throws (the build then checks the Secret itself and meets the same problem).
 */
function keyPairOf(object: KubeObject): KeyPairCheck | undefined {
  if (object.kind !== 'Secret') return undefined;
  try {
    return checkSecretKeyPair(object);
  } catch {
    return undefined;
  }
}

/**
 * Hands what a worker computed ahead for `scan`'s objects to their users: key-pair checks to the
 * build (secret-key-pair.ts), generation fingerprints to the metadata assigner (apiserver.ts).
 * Runs on the main thread, on the objects that go into the store.
 */
export function rememberWorkAhead(scan: FileScan): void {
  for (const { admission, keyPair, fingerprint } of scan.entries) {
    if (admission.kind !== 'ok') continue;
    if (keyPair) rememberKeyPairCheck(admission.object, keyPair);
    if (fingerprint !== undefined) rememberGenerationFingerprint(admission.object, fingerprint);
  }
}

/** Read buffer reused from file to file; a scan is synchronous, so one is never shared. */
let scratch = Buffer.allocUnsafe(64 * 1024);
/** A read buffer grown past this is dropped after its file, so one huge file is not kept. */
const SCRATCH_KEEP_BYTES = 1024 * 1024;

/**
 * Reads at most `max` bytes of a regular file. A file that is (or grows) larger is reported
 * with its size instead of being read, so a huge file costs one stat. Opened non-blocking, so
 * a FIFO put in the file's place cannot hang the reader; it is refused as not a regular file.
 * Synchronous: it runs in a parse worker, which has nothing else to do meanwhile, and each
 * asynchronous step would cost a round trip through the thread pool (four per file).
 *
 * The bytes are read into one buffer reused from file to file (a fresh one per file, sized for
 * growth, was a tenth of a worker's time in allocation and collection), so the answer is a view
 * valid only until the next call: the caller hashes and decodes it at once.
 */
function readBounded(path: string, max: number): { bytes: Buffer; fingerprint: string; tooLarge?: number } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error('not a regular file');
    const fingerprint = fingerprintOf(st);
    if (st.size > max) return { bytes: Buffer.alloc(0), fingerprint, tooLarge: st.size };
    let length = 0;
    for (;;) {
      // Room for the whole file as stat saw it, plus some to notice growth (up to max + 1).
      const want = Math.min(max + 1, Math.max(st.size, length) + 4096);
      if (scratch.length < want) {
        const grown = Buffer.allocUnsafe(Math.min(max + 1, Math.max(want, scratch.length * 2)));
        scratch.copy(grown, 0, 0, length);
        scratch = grown;
      }
      const asked = Math.min(scratch.length, max + 1) - length;
      const bytesRead = readSync(fd, scratch, length, asked, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > max) return { bytes: Buffer.alloc(0), fingerprint, tooLarge: length };
      // A short read of a regular file that already gave all fstat saw is its end: no second
      // read only to be told so (one system call less per file in a cold start).
      if (bytesRead < asked && length >= st.size) break;
    }
    return { bytes: scratch.subarray(0, length), fingerprint };
  } finally {
    closeSync(fd);
    if (scratch.length > SCRATCH_KEEP_BYTES) scratch = Buffer.allocUnsafe(64 * 1024);
  }
}
