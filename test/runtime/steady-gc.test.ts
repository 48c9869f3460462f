import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HEAP_GROWING_FLAG, supportsGcTuning } from '../../src/runtime/gc-tuning';
import { busyCounterparts, QUIET_HEAP_GROWING_FLAG, startSteadyGcTuning } from '../../src/runtime/steady-gc';

/** Runs the event loop's thread without yielding for `ms`. */
function spin(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    /* busy */
  }
}

describe('steady GC limits', () => {
  test('each quiet flag is undone by its busy counterpart', () => {
    assert.deepEqual(
      busyCounterparts([QUIET_HEAP_GROWING_FLAG, '--memory-saver-mode', '--no-memory-reducer-favors-memory']),
      [HEAP_GROWING_FLAG, '--no-memory-saver-mode', '--memory-reducer-favors-memory'],
    );
  });

  // On a V8 without the growing-factor flag (Node 20) the tuning does nothing by design, so there is
  // no switch to wait for; the unit suite also runs on Node 24, where this test runs.
  const noTuning = supportsGcTuning() ? false : `V8 ${process.versions.v8} has no heap growing flag`;
  test('does nothing on a V8 without the flags', { skip: !noTuning }, async () => {
    const switches: boolean[] = [];
    const stop = startSteadyGcTuning({
      isReady: () => true,
      intervalMs: 5,
      onSwitch: (q) => switches.push(q),
    });
    // Ten quiet intervals: a tuning that ran would have switched to quiet by now.
    await new Promise((resolve) => setTimeout(resolve, 50));
    stop();
    assert.deepEqual(switches, []);
  });

  test(
    'switches to the quiet limits only once ready and idle, and back when the loop is busy',
    { skip: noTuning },
    async () => {
      let ready = false;
      const switches: boolean[] = [];
      const keepAlive = setInterval(() => undefined, 1000);
      let wake: (() => void) | undefined;
      const stop = startSteadyGcTuning({
        isReady: () => ready,
        intervalMs: 50,
        onSwitch: (quiet) => {
          switches.push(quiet);
          wake?.();
        },
      });
      const next = () => new Promise<void>((resolve) => (wake = resolve));
      try {
        // Not ready: idle intervals pass without a switch.
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.deepEqual(switches, []);
        ready = true;
        await next();
        assert.deepEqual(switches, [true]);
        const backToBusy = next();
        spin(200);
        await backToBusy;
        assert.deepEqual(switches, [true, false]);
      } finally {
        stop();
        clearInterval(keepAlive);
      }
    },
  );
});
