import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanPool } from '../../../src/providers/files/parse-pool';
import type { ScanRequest, ScanResult } from '../../../src/providers/files/scan';
import { DEFAULT_MAX_FILE_BYTES } from '../../../src/providers/files/scan';
import { MAX_OBJECT_BYTES } from '../../../src/providers/files/apiserver';
import { relativeName } from '../../../src/providers/files/walk';

let dir: string;
const limits = { maxFileBytes: 64 * 1024 * 1024, maxObjectBytes: 1024 * 1024 };

/** A Service whose labels map has `n` keys: slow to parse, though linear. */
function manyLabels(n: number): string {
  const lines = ['apiVersion: v1', 'kind: Service', 'metadata:', '  name: many', '  labels:'];
  for (let i = 0; i < n; i++) lines.push(`    k${i}: v`);
  return `${lines.join('\n')}\nspec:\n  ports:\n  - port: 80\n`;
}

async function request(name: string, content: string): Promise<ScanRequest> {
  const path = join(dir, name);
  await writeFile(path, content);
  return { path, file: name, limits };
}

function problems(r: ScanResult): string[] {
  return r.status === 'scanned' ? r.scan.problems.map((p) => p.message) : [];
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convoy-pool-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ScanPool', () => {
  test('idle workers beyond the first are ended, and files still get scanned afterwards', async () => {
    const pool = new ScanPool({ size: 3, idleMs: 50 });
    try {
      const svc = (i: number) => `apiVersion: v1\nkind: Service\nmetadata:\n  name: s${i}\n`;
      const reqs = await Promise.all(Array.from({ length: 12 }, (_, i) => request(`s${i}.yaml`, svc(i))));
      const first = await Promise.all(reqs.map((r) => pool.scan(r)));
      assert.ok(first.every((r) => r.status === 'scanned' && r.scan.problems.length === 0));
      // Not workers(): under load a worker done with its share may already be ended as idle.
      assert.equal(pool.workersStarted(), 3, 'a burst starts every worker');
      const deadline = Date.now() + 30_000;
      while (pool.workers() > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(pool.workers(), 1, 'one worker is kept for single-file changes');
      const again = await pool.scan(await request('late.yaml', svc(99)));
      assert.ok(again.status === 'scanned' && again.scan.entries.length === 1, JSON.stringify(again));
    } finally {
      await pool.close();
    }
  });

  test('the last worker is replaced by a fresh one once idle after a burst, and the fresh one scans', async () => {
    const pool = new ScanPool({ size: 2, idleMs: 50, recycleAfterFiles: 8 });
    try {
      const svc = (i: number) => `apiVersion: v1\nkind: Service\nmetadata:\n  name: r${i}\n`;
      const reqs = await Promise.all(Array.from({ length: 20 }, (_, i) => request(`r${i}.yaml`, svc(i))));
      const first = await Promise.all(reqs.map((r) => pool.scan(r)));
      assert.ok(first.every((r) => r.status === 'scanned' && r.scan.problems.length === 0));
      assert.equal(pool.workersStarted(), 2, 'a burst starts every worker');
      // Both scanned files; the second to go idle is the last one and, having answered at least
      // 8 files, is replaced: three workers started in all, one running.
      const deadline = Date.now() + 30_000;
      while (pool.workersStarted() < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(pool.workersStarted(), 3, 'the last worker was replaced');
      assert.equal(pool.workers(), 1, 'one worker is kept for single-file changes');
      const again = await pool.scan(await request('late-r.yaml', svc(99)));
      assert.ok(again.status === 'scanned' && again.scan.entries.length === 1, JSON.stringify(again));
      // A single file is below recycleAfterFiles: the fresh worker stays.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(pool.workersStarted(), 3, 'a worker that scanned one file is kept');
      assert.equal(pool.workers(), 1);
    } finally {
      await pool.close();
    }
  });

  test('parses in a worker: timers run on the main thread while a large file is parsed', async () => {
    const pool = new ScanPool({ size: 1 });
    try {
      const req = await request('many.yaml', manyLabels(60_000));
      let done = false;
      const scanning = pool.scan(req).then((r) => {
        done = true;
        return r;
      });
      let ticks = 0;
      while (ticks < 3) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        ticks++;
        if (done) break;
      }
      assert.equal(done, false, `the scan finished within ${ticks} timer ticks`);
      const r = await scanning;
      assert.equal(r.status, 'scanned');
      if (r.status !== 'scanned') return;
      assert.deepEqual(r.scan.problems, []);
      assert.equal(r.scan.entries.length, 1);
      assert.equal(r.scan.entries[0].admission.kind, 'ok');
      // The same content again: the worker answers from the hash without parsing.
      assert.equal((await pool.scan({ ...req, previousHash: r.hash })).status, 'unchanged');
    } finally {
      await pool.close();
    }
  });

  test('a file over the size limit is reported with its size and not read', async () => {
    const pool = new ScanPool({ size: 1 });
    try {
      const req = await request('big.yaml', 'a: b\n'.repeat(1000));
      const r = await pool.scan({ ...req, limits: { ...limits, maxFileBytes: 1000 } });
      assert.deepEqual(problems(r), [
        'Too long: may not be more than 1000 bytes (the file is 5000 bytes; not read)',
      ]);
    } finally {
      await pool.close();
    }
  });

  test('a scan over the deadline, or out of memory, fails only its file; the pool carries on', async () => {
    const small = await request('small.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n');
    const heavy = await request('heavy.yaml', manyLabels(200_000));

    const slow = new ScanPool({ size: 1, timeoutMs: 1 });
    try {
      assert.match(problems(await slow.scan(heavy)).join(), /took longer than/);
    } finally {
      await slow.close();
    }

    const tight = new ScanPool({ size: 1, maxHeapMb: 24 });
    try {
      assert.deepEqual(problems(await tight.scan(heavy)), [
        'parsing needs more than 24 MiB of memory; not applied',
      ]);
      const r = await tight.scan(small);
      assert.equal(r.status === 'scanned' && r.scan.entries[0].admission.kind, 'ok');
    } finally {
      await tight.close();
    }
  });

  test('close() answers queued and running scans', async () => {
    const pool = new ScanPool({ size: 1 });
    const req = await request('many2.yaml', manyLabels(50_000));
    const pending = [pool.scan(req), pool.scan(req)];
    await pool.close();
    for (const r of await Promise.all(pending)) assert.match(problems(r).join(), /stopping/);
    assert.match(problems(await pool.scan(req)).join(), /stopping/);
  });

  describe('scanning ahead', () => {
    const defaults = { maxFileBytes: DEFAULT_MAX_FILE_BYTES, maxObjectBytes: MAX_OBJECT_BYTES };
    const ports = 'spec:\n  ports:\n  - port: 80\n';
    /** A tree of 40 files in two folders: Services, one file of two documents, one broken file. */
    async function tree(): Promise<{ root: string; requests: ScanRequest[] }> {
      const root = await mkdtemp(join(dir, 'ahead-'));
      const paths: string[] = [];
      for (const folder of ['a', 'b']) {
        await mkdir(join(root, folder));
        for (let i = 0; i < 20; i++) {
          const path = join(root, folder, `s${i}.yaml`);
          let text = `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${folder}${i}\n  namespace: ns\n${ports}`;
          if (folder === 'a' && i === 3) text += `---\napiVersion: v1\nkind: Service\nmetadata:\n  name: second\n${ports}`;
          if (folder === 'b' && i === 7) text = `apiVersion: v1\nkind: Service\nmetadata: [unclosed\n`;
          await writeFile(path, text);
          paths.push(path);
        }
      }
      await writeFile(join(root, '.hidden.yaml'), 'not: read\n');
      return { root, requests: paths.map((path) => ({ path, file: relativeName(root, path), limits: defaults })) };
    }

    async function aheadFinished(pool: ScanPool, workers: number): Promise<number> {
      const deadline = Date.now() + 60_000;
      while (pool.aheadScanned().length < workers && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      return pool.aheadScanned().reduce((a, b) => a + b, 0);
    }

    async function freshScans(requests: ScanRequest[]): Promise<ScanResult[]> {
      const pool = new ScanPool({ size: 1 });
      try {
        return await Promise.all(requests.map((r) => pool.scan(r)));
      } finally {
        await pool.close();
      }
    }

    async function usedAhead(pool: ScanPool): Promise<number> {
      // Reported when the pool went idle after the requests: the workers drop their scans ahead.
      const deadline = Date.now() + 60_000;
      while (pool.aheadUsed() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      return pool.aheadUsed();
    }

    test('answers every file as a fresh scan would, broken file and documents included', async () => {
      const { root, requests } = await tree();
      const pool = new ScanPool({ size: 2 });
      try {
        pool.scanAhead(root, { maxEntries: 10_000, maxDepth: 16 });
        assert.equal(await aheadFinished(pool, 2), 40, 'every readable file scanned ahead once');
        const answered = await Promise.all(requests.map((r) => pool.scan(r)));
        assert.deepEqual(answered, await freshScans(requests));
        const broken = answered[20 + 7];
        assert.ok(broken.status === 'scanned' && broken.scan.broken);
        assert.equal(broken.scan.problems[0].file, 'b/s7.yaml');
        const two = answered[3];
        assert.ok(two.status === 'scanned');
        assert.deepEqual(two.scan.entries.map((e) => e.document), [0, 1]);
        assert.deepEqual(two.scan.entries.map((e) => e.admission.kind), ['ok', 'ok']);
        assert.equal(await usedAhead(pool), 40, 'every request answered from its scan ahead');
      } finally {
        await pool.close();
      }
    });

    test('reads again a file changed since it was scanned ahead, and one asked with other limits', async () => {
      const { root, requests } = await tree();
      const pool = new ScanPool({ size: 2 });
      try {
        pool.scanAhead(root, { maxEntries: 10_000, maxDepth: 16 });
        assert.equal(await aheadFinished(pool, 2), 40);
        const changed = requests[5];
        await writeFile(changed.path, `apiVersion: v1\nkind: Service\nmetadata:\n  name: renamed\n  namespace: ns\n${ports}`);
        const later = new Date(Date.now() + 5_000);
        await utimes(changed.path, later, later);
        const other = { ...requests[6], limits: { ...defaults, maxFileBytes: 8 } };
        const asked = requests.map((r, i) => (i === 6 ? other : r));
        const answered = await Promise.all(asked.map((r) => pool.scan(r)));
        assert.deepEqual(answered, await freshScans(asked));
        const renamed = answered[5];
        assert.ok(renamed.status === 'scanned' && renamed.scan.entries[0].admission.kind === 'ok');
        assert.equal(renamed.scan.entries[0].admission.object.metadata.name, 'renamed');
        assert.match(problems(answered[6]).join(), /Too long/);
        assert.equal(await usedAhead(pool), 38, 'all but the changed file and the other limits');
      } finally {
        await pool.close();
      }
    });
  });
});
