import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { memoByNode } from '../../src/envoy/translate/common';
import { rng } from '../support/rng';

interface Node {
  readonly id: number;
}

describe('memoByNode (src/envoy/translate/common.ts)', () => {
  test('random calls translate each (node, variant) once and return the same value after', () => {
    const next = rng(7);
    const calls = new Map<string, number>();
    const memo = memoByNode((n: Node, variant: string) => {
      const k = `${n.id}|${variant}`;
      calls.set(k, (calls.get(k) ?? 0) + 1);
      return { of: n.id, variant };
    });
    const nodes = Array.from({ length: 40 }, (_, id) => ({ id }));
    const variants = [undefined, '', 'a', '["x",1]', 'b'];
    /** The reference: the first value returned for each (node, variant); no variant is ''. */
    const first = new Map<string, { of: number; variant: string }>();
    for (let step = 0; step < 5000; step++) {
      const n = nodes[Math.floor(next() * nodes.length)]!;
      const v = variants[Math.floor(next() * variants.length)];
      const got = v === undefined ? memo(n) : memo(n, v);
      const k = `${n.id}|${v ?? ''}`;
      const want = first.get(k);
      if (want) assert.equal(got, want, `same instance at step ${step}`);
      else first.set(k, got);
      assert.deepEqual(got, { of: n.id, variant: v ?? '' });
    }
    for (const [k, count] of calls) assert.equal(count, 1, k);
  });

  test('a translation that gives undefined is not remembered (as before)', () => {
    let calls = 0;
    const memo = memoByNode((_: Node) => {
      calls++;
      return undefined;
    });
    const n = { id: 1 };
    memo(n);
    memo(n);
    memo(n, 'v');
    memo(n, 'v');
    assert.equal(calls, 4);
  });
});
