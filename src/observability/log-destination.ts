import SonicBoom from 'sonic-boom';

/**
 * Where `convoy serve` writes its JSON log lines: a file descriptor (stdout) written
 * asynchronously, so a reader that stops reading (a full pipe) or a destination that fails (a
 * full disk) never stalls the event loop that serves xDS and admin. Lines wait in a bounded
 * buffer while the descriptor cannot take them; beyond the bound new lines are dropped and
 * counted (convoy_log_lines_dropped_total, docs/security.md §8), and a write that failed is tried
 * again with the next line.
 */

export interface LogDestinationOptions {
  /** File descriptor to write to; default 1 (stdout). */
  fd?: number;
  /** Bytes of log lines held while the descriptor cannot take them; default 4 MiB. */
  maxBufferBytes?: number;
  /** Called with the number of lines each time lines are dropped. */
  onDropped?: (lines: number) => void;
  /** Called for each failed write (EAGAIN retries excluded), e.g. ENOSPC or EPIPE. */
  onWriteError?: (err: NodeJS.ErrnoException) => void;
}

export const DEFAULT_LOG_BUFFER_BYTES = 4 * 1024 * 1024;

/** How often flush() nudges a write that failed, and polls for completion. */
const FLUSH_POLL_MS = 20;

export class LogDestination {
  private readonly stream: SonicBoom;
  /** Bytes accepted and not yet written. */
  private pendingBytes = 0;
  private dropped = 0;
  private droppedByLastWrite = false;
  /** After close(): a write that would block is given up instead of retried on a timer. */
  private closing = false;

  constructor(private readonly options: LogDestinationOptions = {}) {
    const fd = options.fd ?? 1;
    // Node opens a pipe on stdout in non-blocking mode when process.stdout is first used: then a
    // full pipe answers EAGAIN (retried on a timer) instead of parking a thread-pool thread in
    // write(2) until someone reads, which would also keep the process from exiting.
    if (fd === 1) void process.stdout.writable;
    this.stream = new SonicBoom({
      fd,
      sync: false,
      minLength: 0,
      maxLength: options.maxBufferBytes ?? DEFAULT_LOG_BUFFER_BYTES,
      // EAGAIN (a full non-blocking pipe): sonic-boom retries on a 100 ms timer, never spinning.
      retryEAGAIN: () => !this.closing,
    });
    this.stream.on('drop', (data: string | Buffer) => {
      const lines = countLines(data);
      this.dropped += lines;
      this.droppedByLastWrite = true;
      options.onDropped?.(lines);
    });
    this.stream.on('write', (n: number) => {
      this.pendingBytes = Math.max(0, this.pendingBytes - n);
    });
    // Without a listener, the EventEmitter would throw the write error out of a callback.
    this.stream.on('error', (err: NodeJS.ErrnoException) => options.onWriteError?.(err));
  }

  /** Queues one log line (pino calls this); never blocks and never throws. */
  write(line: string): void {
    this.droppedByLastWrite = false;
    try {
      this.stream.write(line);
    } catch {
      // Only a destroyed stream throws; count the line as dropped rather than crash the caller.
      this.droppedByLastWrite = true;
      this.dropped += 1;
      this.options.onDropped?.(1);
    }
    if (!this.droppedByLastWrite) this.pendingBytes += Buffer.byteLength(line);
  }

  /** Lines dropped so far. */
  get droppedLines(): number {
    return this.dropped;
  }

  /** Bytes accepted and not yet written. */
  get bufferedBytes(): number {
    return this.pendingBytes;
  }

  /**
   * Waits until every accepted line is written or `timeoutMs` passed; resolves with true when
   * nothing is left. Bounded, so exiting never hangs on a reader that stopped reading.
   */
  async flush(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.pendingBytes > 0 && Date.now() < deadline) {
      // sonic-boom retries a failed write (ENOSPC, EPIPE) only when the next line arrives.
      this.stream.write('');
      await new Promise((resolve) => setTimeout(resolve, FLUSH_POLL_MS));
    }
    return this.pendingBytes === 0;
  }

  /**
   * Stops retrying writes that would block, so no retry timer keeps the process alive; lines
   * still accepted afterwards are written if the descriptor takes them at once.
   */
  close(): void {
    this.closing = true;
  }
}

function countLines(data: string | Buffer): number {
  const text = typeof data === 'string' ? data : data.toString('utf8');
  let lines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return Math.max(lines, 1);
}
