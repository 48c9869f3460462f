import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startQuietCollector } from '../../src/runtime/quiet-gc';

describe('quiet garbage collection', () => {
  test('collects once the loop is idle after enough was allocated, freeing unreachable objects', async () => {
    let dropped: object | undefined = { payload: 'x'.repeat(1024) };
    const ref = new WeakRef(dropped);
    const kept: Buffer[] = [];
    const collected = await new Promise<{ ms: number; freed: number }>((resolve) => {
      // The collector's timer does not hold the process open; this one does, until it fires.
      const keepAlive = setInterval(() => undefined, 1000);
      const stop = startQuietCollector({
        intervalMs: 50,
        minGrowthBytes: 16 * 1024 * 1024,
        onCollect: (ms, freed) => {
          stop();
          clearInterval(keepAlive);
          resolve({ ms, freed });
        },
      });
      // Growth above the threshold after the collector took its baseline (kept until it ran, so
      // that no collection of V8's own frees it first), and one object no one holds.
      kept.push(...Array.from({ length: 24 }, (_, i) => Buffer.alloc(1 << 20, i)));
      dropped = undefined;
    });
    assert.ok(collected.ms >= 0);
    assert.equal(kept.length, 24);
    assert.equal(ref.deref(), undefined, 'a full collection ran');
  });
});
