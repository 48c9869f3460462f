import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanPool } from '../../../src/providers/files/parse-pool';
import type { ScanRequest, ScanResult } from '../../../src/providers/files/scan';

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
});
