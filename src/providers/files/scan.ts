/**
 * Scans one file: reads it within the size limit, and unless its content is the one scanned
 * last time, parses it and admits every entry the way the API server would. This is the
 * expensive part of a rescan and has no state, so it runs in a worker thread (parse-pool.ts);
 * the result is plain data that crosses to the main thread by structured clone.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Admission } from './apiserver';
import { admitEntry } from './apiserver';
import type { RawEntry } from './parse';
import { parseFile } from './parse';
import type { FileProblem } from './problems';

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
  entries: { document?: number; admission: Admission }[];
}

export type ScanResult =
  | { status: 'gone' }
  | { status: 'unchanged' }
  /** `hash` is absent when the file could not be read. */
  | { status: 'scanned'; hash?: string; scan: FileScan };

/** Reads, parses and admits one file. Never throws: every failure is a problem of the file. */
export async function scanFile(req: ScanRequest): Promise<ScanResult> {
  const { file } = req;
  const failed = (message: string): ScanResult => ({
    status: 'scanned',
    scan: { file, problems: [{ file, message }], broken: true, entries: [] },
  });
  let bytes: Buffer;
  try {
    const read = await readBounded(req.path, req.limits.maxFileBytes);
    if (read.tooLarge !== undefined) {
      return failed(
        `Too long: may not be more than ${req.limits.maxFileBytes} bytes (the file is ${read.tooLarge} bytes; ` +
          `not read)`,
      );
    }
    bytes = read.bytes;
  } catch (err) {
    // Deleted between listing and reading: the next event rescans; treat as gone.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'gone' };
    return failed(`cannot read file: ${(err as Error).message}`);
  }
  const hash = createHash('sha256').update(bytes).digest('hex');
  if (hash === req.previousHash) return { status: 'unchanged' };
  let parsed;
  try {
    parsed = parseFile(file, bytes.toString('utf8'));
  } catch (err) {
    return failed(`cannot parse file: ${(err as Error).message}`);
  }
  const entries: FileScan['entries'] = parsed.entries.map((entry) => ({
    document: entry.document,
    admission: admitSafely(entry, req.limits.maxObjectBytes),
  }));
  return {
    status: 'scanned',
    hash,
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
 * Reads at most `max` bytes of a regular file. A file that is (or grows) larger is reported
 * with its size instead of being read, so a huge file costs one stat. Opened non-blocking, so
 * a FIFO put in the file's place cannot hang the reader; it is refused as not a regular file.
 */
async function readBounded(path: string, max: number): Promise<{ bytes: Buffer; tooLarge?: number }> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error('not a regular file');
    if (st.size > max) return { bytes: Buffer.alloc(0), tooLarge: st.size };
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(max + 1 - length, Math.max(st.size - length, 0) + 64 * 1024));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, length);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      length += bytesRead;
      if (length > max) return { bytes: Buffer.alloc(0), tooLarge: length };
    }
    return { bytes: Buffer.concat(chunks, length) };
  } finally {
    await handle.close();
  }
}
