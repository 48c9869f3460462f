import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SettleGate } from '../../../src/providers/files/settle';

function gate(settleMs: number) {
  const clock = { wallMs: 1_000_000, monoMs: 50 };
  const g = new SettleGate(settleMs, { wall: () => clock.wallMs, monotonic: () => clock.monoMs });
  const advance = (ms: number) => {
    clock.wallMs += ms;
    clock.monoMs += ms;
  };
  return { g, clock, advance };
}

test('a file modified long enough ago is read at once', () => {
  const { g, clock } = gate(500);
  assert.deepEqual(g.check('a.yaml', 'fp1', clock.wallMs - 500), { ready: true });
  assert.deepEqual(g.check('b.yaml', 'fp1', clock.wallMs - 10_000), { ready: true });
});

test('a file modified just now waits for the rest of the settle time; a new write starts it again', () => {
  const { g, clock, advance } = gate(500);
  const written = clock.wallMs - 100;
  assert.deepEqual(g.check('a.yaml', 'fp1', written), { ready: false, waitMs: 400 });
  advance(300);
  assert.deepEqual(g.check('a.yaml', 'fp1', written), { ready: false, waitMs: 100 });
  // A second write: newer mtime, new fingerprint.
  assert.deepEqual(g.check('a.yaml', 'fp2', clock.wallMs), { ready: false, waitMs: 500 });
  advance(500);
  assert.deepEqual(g.check('a.yaml', 'fp2', clock.wallMs - 500), { ready: true });
});

test('a modification time in the future (another clock) settles by our own observation', () => {
  const { g, clock, advance } = gate(500);
  const future = clock.wallMs + 3_600_000;
  assert.deepEqual(g.check('a.yaml', 'fp1', future), { ready: false, waitMs: 500 });
  advance(200);
  assert.deepEqual(g.check('a.yaml', 'fp1', future), { ready: false, waitMs: 300 });
  advance(300);
  assert.deepEqual(g.check('a.yaml', 'fp1', future), { ready: true });
});

test('a settle time of 0 reads everything at once; retain() forgets what is no longer there', () => {
  assert.deepEqual(gate(0).g.check('a.yaml', 'fp', Date.now()), { ready: true });
  const { g, clock, advance } = gate(500);
  const future = clock.wallMs + 60_000;
  g.check('a.yaml', 'fp1', future);
  advance(400);
  g.retain((file) => file === 'b.yaml');
  assert.deepEqual(g.check('a.yaml', 'fp1', future), { ready: false, waitMs: 500 });
});
