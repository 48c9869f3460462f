import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ListReuse } from '../../src/envoy/translate/list-reuse';
import { memoByNode } from '../../src/envoy/translate/common';
import { rng } from '../support/rng';

interface Node {
  readonly id: number;
}

describe('ListReuse (the full translation of every list as the oracle)', () => {
  test('random edits of several fleets’ lists translate exactly as mapping every node', () => {
    const next = rng(42);
    let translations = 0;
    const translate = memoByNode((n: Node) => {
      translations++;
      return { of: n.id };
    });
    const reuse = new ListReuse();
    const lists = new Map<string, Node[]>();
    let id = 0;
    for (const fleet of ['ns/a', 'ns/b']) {
      for (const key of ['secrets', 'clusters']) {
        lists.set(
          `${fleet} ${key}`,
          Array.from({ length: 30 }, () => ({ id: id++ })),
        );
      }
    }
    for (const list of lists.values()) for (const n of list) translate(n);
    for (let step = 0; step < 400; step++) {
      const which = [...lists.keys()][Math.floor(next() * lists.size)];
      const [fleet, key] = which.split(' ');
      let list = lists.get(which)!;
      const i = Math.floor(next() * list.length);
      const r = next();
      if (r < 0.4) list = list.map((n, j) => (j === i ? { id: id++ } : n));
      else if (r < 0.5) list = [...list.slice(0, i), { id: id++ }, ...list.slice(i)];
      else if (r < 0.6 && list.length > 1) list = list.filter((_, j) => j !== i);
      else if (r < 0.7) list = [...list.slice(i), ...list.slice(0, i)];
      else if (r < 0.75) reuse.forget(fleet);
      else if (r < 0.8) reuse.retain(fleet, new Set([key]));
      lists.set(which, list);
      const before = translations;
      const got = reuse.map(fleet, key, list, translate);
      const want = list.map((n) => translate(n));
      assert.equal(translations, before + (r < 0.5 ? 1 : 0), `translated only the new node, step ${step}`);
      assert.equal(got.length, want.length, `length at step ${step}`);
      for (let j = 0; j < want.length; j++) assert.equal(got[j], want[j], `element ${j} at step ${step}`);
    }
  });

  test('only the replaced nodes of a list are looked up again', () => {
    const seen: number[] = [];
    const translate = (n: Node) => {
      seen.push(n.id);
      return n.id * 2;
    };
    const reuse = new ListReuse();
    const first = Array.from({ length: 1000 }, (_, id) => ({ id }));
    assert.deepEqual(
      reuse.map('ns/gw', 'k', first, translate),
      first.map((n) => n.id * 2),
    );
    seen.length = 0;
    const second = first.map((n) => (n.id === 500 ? { id: 5000 } : n));
    const out = reuse.map('ns/gw', 'k', second, translate);
    assert.deepEqual(seen, [5000]);
    assert.equal(out[500], 10000);
    assert.equal(out[499], 998);
    seen.length = 0;
    reuse.map('ns/other', 'k', second, translate);
    assert.equal(seen.length, 1000, 'another fleet shares nothing');
  });
});
