import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { commonEnds } from '../../src/util/common-ends';

/** commonEnds against its definition: the longest common head and tail that do not overlap. */

describe('commonEnds', () => {
  test('head and tail are common, do not overlap, and cannot grow', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3 })),
        fc.array(fc.integer({ min: 0, max: 3 })),
        (was, now) => {
          const { head, tail } = commonEnds(was, now);
          const shorter = Math.min(was.length, now.length);
          assert.ok(head + tail <= shorter);
          for (let i = 0; i < head; i++) assert.equal(was[i], now[i]);
          for (let i = 1; i <= tail; i++) assert.equal(was[was.length - i], now[now.length - i]);
          // Maximal: the head stops at a difference or at the end; so does the tail, within what the head left.
          assert.ok(head === shorter || was[head] !== now[head]);
          assert.ok(head + tail === shorter || was[was.length - 1 - tail] !== now[now.length - 1 - tail]);
        },
      ),
    );
  });

  test('compares by identity, not by content', () => {
    const a = { n: 1 };
    assert.deepEqual(commonEnds([a, { n: 2 }], [a, { n: 2 }]), { head: 1, tail: 0 });
    assert.deepEqual(commonEnds([a], [a]), { head: 1, tail: 0 });
    assert.deepEqual(commonEnds([], [a]), { head: 0, tail: 0 });
  });
});
