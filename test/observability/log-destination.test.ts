import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LogDestination } from '../../src/observability/log-destination';

/** `count` numbered lines of about 100 bytes. */
function lines(count: number, from = 0): string[] {
  return Array.from(
    { length: count },
    (_, i) => `line ${String(from + i).padStart(6, '0')} ${'x'.repeat(86)}\n`,
  );
}

describe('LogDestination', () => {
  test('a destination that fails (ENOSPC on /dev/full) costs a bounded buffer; the rest is dropped and counted', async () => {
    const fd = fs.openSync('/dev/full', 'w');
    let droppedReported = 0;
    const errors: string[] = [];
    const dest = new LogDestination({
      fd,
      maxBufferBytes: 16 * 1024,
      onDropped: (n) => (droppedReported += n),
      onWriteError: (err) => errors.push(String(err.code)),
    });
    try {
      for (const line of lines(1000)) dest.write(line);
      assert.ok(dest.bufferedBytes <= 16 * 1024, `buffered ${dest.bufferedBytes}`);
      // Kept: what fits the buffer, give or take the lines of the write in flight.
      const kept = 1000 - dest.droppedLines;
      assert.ok(kept > 100 && kept <= (16 * 1024) / 100 + 2, `kept ${kept}`);
      assert.equal(droppedReported, dest.droppedLines);
      assert.equal(await dest.flush(200), false, 'flush gives up at its deadline');
      assert.ok(errors.length > 0 && errors.every((c) => c === 'ENOSPC'), errors.join());
    } finally {
      dest.close();
      fs.closeSync(fd);
    }
  });

  test('a full pipe nobody reads: lines wait, then drop; once read, every kept line arrives whole and in order', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-logpipe-'));
    const fifo = path.join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const writer = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    const dest = new LogDestination({ fd: writer, maxBufferBytes: 16 * 1024 });
    const written = lines(3000);
    try {
      // 300 kB: the pipe takes 64 kB, the buffer 16 kB, the rest is dropped, and no call blocks.
      for (const line of written) dest.write(line);
      assert.ok(dest.droppedLines > 0, 'lines dropped while the pipe is full');
      assert.ok(dest.bufferedBytes > 0, 'lines waiting for the pipe');

      // Now read, as a log collector that catches up would; the destination drains by itself.
      let received = '';
      const chunk = Buffer.alloc(64 * 1024);
      const drained = dest.flush(30_000);
      let done = false;
      void drained.then(() => (done = true));
      while (!done) {
        try {
          const n = fs.readSync(reader, chunk);
          received += chunk.toString('utf8', 0, n);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      assert.equal(await drained, true);
      for (;;) {
        try {
          const n = fs.readSync(reader, chunk);
          if (n === 0) break;
          received += chunk.toString('utf8', 0, n);
        } catch {
          break;
        }
      }
      const got = received.split('\n').slice(0, -1);
      assert.equal(got.length + dest.droppedLines, written.length);
      let last = -1;
      for (const line of got) {
        const m = /^line (\d{6}) x{86}$/.exec(line);
        assert.ok(m, `a whole line: ${line.slice(0, 40)}`);
        assert.ok(Number(m[1]) > last, 'in order');
        last = Number(m[1]);
      }

      // With a reader, nothing more is dropped.
      const dropped = dest.droppedLines;
      dest.write(lines(1, 5000)[0]);
      const more = dest.flush(30_000);
      let tail = '';
      while (!tail.includes('line 005000')) {
        try {
          const n = fs.readSync(reader, chunk);
          tail += chunk.toString('utf8', 0, n);
        } catch {
          await new Promise((r) => setTimeout(r, 5));
        }
      }
      assert.equal(await more, true);
      assert.equal(dest.droppedLines, dropped);
    } finally {
      dest.close();
      fs.closeSync(writer);
      fs.closeSync(reader);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
