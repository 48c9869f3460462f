import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HEAP_GROWING_FLAG } from '../../src/runtime/gc-tuning';
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

  test('switches to the quiet limits only once ready and idle, and back when the loop is busy', async () => {
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
  });
});
