import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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
