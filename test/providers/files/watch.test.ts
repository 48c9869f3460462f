import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { DirectoryWatcher } from '../../../src/providers/files/watch';

test('a directory that cannot be watched is warned about once and asks for no rescan', async () => {
  const lines: string[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  const dir = await mkdtemp(join(tmpdir(), 'convoy-watch-'));
  let changes = 0;
  const watcher = new DirectoryWatcher({ logger, debounceMs: 5, onChange: () => changes++ });
  try {
    const missing = join(dir, 'missing');
    // As successive rescans would: the first sync sets up watches, later ones keep them.
    watcher.sync(new Set([dir, missing]));
    watcher.sync(new Set([dir, missing]));
    watcher.sync(new Set([dir, missing]));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(changes, 0, 'a failed watch must not trigger rescans');
    assert.equal(lines.filter((l) => l.includes('cannot watch directory')).length, 1);

    // The directory that is watched still reports changes.
    await writeFile(join(dir, 'a.yaml'), 'kind: Namespace\n');
    const deadline = Date.now() + 10_000;
    while (changes === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(changes > 0, 'a change in a watched directory asks for a rescan');
  } finally {
    watcher.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a burst of files renamed into place is reported without waiting out a long debounce', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'convoy-watch-'));
  const reports: string[][] = [];
  // A debounce no test would outwait: only the short quiet time for renames can report in time.
  const watcher = new DirectoryWatcher({
    logger: pino({ level: 'silent' }),
    debounceMs: 3_600_000,
    onChange: (r) => reports.push([...r.files.keys()].sort()),
  });
  try {
    watcher.sync(new Set([dir]));
    for (const name of ['a.yaml', 'b.yaml']) {
      await writeFile(join(dir, `.${name}.tmp`), 'kind: Namespace\n');
      await rename(join(dir, `.${name}.tmp`), join(dir, name));
    }
    const deadline = Date.now() + 30_000;
    const both = () => ['a.yaml', 'b.yaml'].every((n) => reports.some((r) => r.includes(join(dir, n))));
    while (!both() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(both(), `both renames are reported: ${JSON.stringify(reports)}`);
  } finally {
    watcher.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
