import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { FileProvider } from '../../../src/providers/files/provider';
import type { ScanPool } from '../../../src/providers/files/parse-pool';
import type { ScanRequest } from '../../../src/providers/files/scan';
import { DirectoryWatcher } from '../../../src/providers/files/watch';
import type { WatchReport } from '../../../src/providers/files/watch';
import { ObjectStore } from '../../../src/store/store';
import { silentLogger } from '../../../src/observability/logger';

const NS = (name: string, label = 'a') =>
  `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n  labels:\n    tier: ${label}\n`;

let dir: string;
let store: ObjectStore;
let provider: FileProvider | undefined;
/** Files the provider's workers were asked to read, by name relative to `dir`. */
let reads: string[];

/** Writes a file atomically: a hidden temporary file renamed into place. */
async function put(rel: string, content: string, old = false): Promise<void> {
  const p = join(dir, rel);
  await mkdir(dirname(p), { recursive: true });
  const tmp = join(dirname(p), `.${basename(p)}.tmp`);
  await writeFile(tmp, content);
  // Written long ago: start() reads it without waiting for a settle time.
  if (old) await utimes(tmp, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
  await rename(tmp, p);
}

/** A provider whose worker reads are recorded in `reads`. */
function newProvider(settleMs: number): FileProvider {
  provider = new FileProvider({
    dir,
    store,
    logger: silentLogger(),
    debounceMs: 20,
    pollIntervalMs: 0,
    settleMs,
  });
  const pool = (provider as unknown as { pool: ScanPool }).pool;
  const scan = pool.scan.bind(pool);
  pool.scan = (req: ScanRequest) => {
    reads.push(req.file);
    return scan(req);
  };
  return provider;
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function tier(name: string): unknown {
  return store.get('Namespace', '', name)?.metadata.labels?.tier;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convoy-files-changes-'));
  store = new ObjectStore();
  reads = [];
});

afterEach(async () => {
  await provider?.stop();
  provider = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('FileProvider change-driven reads', () => {
  test('an event reads only the file it names; a rescan with nothing changed reads nothing', async () => {
    for (let i = 0; i < 20; i++) await put(`ns/n${i}.yaml`, NS(`n${i}`));
    const p = newProvider(0);
    await p.start();
    assert.equal(reads.length, 20, 'the first scan reads every file once');
    reads = [];

    await put('ns/n7.yaml', NS('n7', 'b'));
    await waitFor('the edit applied', () => tier('n7') === 'b');
    assert.deepEqual([...new Set(reads)], ['ns/n7.yaml']);

    reads = [];
    await p.reload();
    assert.deepEqual(reads, [], 'a full rescan stats files and reads none whose fingerprint is the same');

    await unlink(join(dir, 'ns/n3.yaml'));
    await waitFor('the deletion applied', () => store.get('Namespace', '', 'n3') === undefined);
    assert.deepEqual(reads, []);
    assert.equal(store.list('Namespace').length, 19);
  });

  test('a file renamed into place is applied without waiting for the settle time', async () => {
    await put('a.yaml', NS('one'), true);
    const p = newProvider(600_000);
    await p.start();
    assert.equal(tier('one'), 'a');
    await put('a.yaml', NS('one', 'b'));
    await put('b.yaml', NS('two'));
    await waitFor('the replaced and the new file applied', () => tier('one') === 'b' && tier('two') === 'a');
  });

  test('a file written in place still waits for the settle time', async () => {
    await put('a.yaml', NS('one'), true);
    const p = newProvider(600_000);
    await p.start();
    await writeFile(join(dir, 'a.yaml'), NS('one', 'b'));
    // A rename elsewhere afterwards proves events were handled meanwhile.
    await put('b.yaml', NS('two'));
    await waitFor('the renamed file applied', () => tier('two') === 'a');
    await p.reload();
    assert.equal(tier('one'), 'a', 'the file written in place is not read before it settles');
    assert.deepEqual(p.problems(), []);
  });

  test('duplicates across files and last-good versions hold when only one file is reread', async () => {
    await put('a.yaml', `${NS('dup', 'from-a')}---\n${NS('only-a')}`);
    await put('b.yaml', NS('dup', 'from-b'));
    const p = newProvider(0);
    await p.start();
    assert.equal(tier('dup'), 'from-a');
    assert.match(p.problems()[0]?.message ?? '', /already defined in a\.yaml/);

    await put('a.yaml', 'kind: [broken\n');
    await waitFor('a.yaml reported broken', () => p.problems().some((x) => x.file === 'a.yaml'));
    assert.equal(tier('only-a'), 'a', 'a broken file keeps its last good objects');

    await unlink(join(dir, 'a.yaml'));
    await waitFor('a.yaml deleted', () => tier('only-a') === undefined);
    assert.equal(tier('dup'), 'from-b', 'b.yaml wins once a.yaml is gone');
    assert.deepEqual(p.problems(), []);
  });
});

describe('DirectoryWatcher reports', () => {
  test('names files, tells writes in place from renames, ignores hidden names', async () => {
    dir = await mkdtemp(join(tmpdir(), 'convoy-watch-report-'));
    const reports: WatchReport[] = [];
    const watcher = new DirectoryWatcher({
      logger: silentLogger(),
      debounceMs: 50,
      onChange: (r) => reports.push(r),
    });
    try {
      watcher.sync(new Set([dir]));
      await writeFile(join(dir, '.swap'), 'x');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(reports.length, 0, 'a hidden file alone is not reported');

      await put('a.yaml', NS('a'));
      await waitFor('a report', () => reports.length > 0);
      const renamed = reports.splice(0);
      assert.deepEqual(
        renamed.flatMap((r) => [...r.files]),
        [[join(dir, 'a.yaml'), { written: false }]],
      );
      assert.ok(renamed.every((r) => !r.full));

      await writeFile(join(dir, 'a.yaml'), NS('a', 'b'));
      await waitFor('a report', () => reports.length > 0);
      assert.equal(reports.splice(0)[0].files.get(join(dir, 'a.yaml'))?.written, true);

      await mkdir(join(dir, '..data'));
      await waitFor('a report', () => reports.length > 0);
      assert.equal(reports[0].full, true, 'a ConfigMap volume swap rescans everything');
    } finally {
      watcher.stop();
    }
  });
});
