import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rememberAppended, sortsLast } from '../../src/gateway/incremental/precedence';
import { compareListenerSets } from '../../src/gateway/listenersets';
import type { ResolvedListenerSet } from '../../src/gateway/resolved';
import type { KubeObject } from '../../src/store/objects';
import { rng } from '../support/rng';

/** Timestamps: equal instants in different text, unparsable ones, and plain ones. */
const TIMES = [
  '2026-01-01T00:00:00Z',
  '2026-01-01T00:00:00.000Z',
  '2026-01-01T00:00:01Z',
  '2026-01-01T00:00:02Z',
  '2026-01-02T00:00:00Z',
  'not a time',
  '',
];

function listenerSet(r: () => number, parsable: boolean): KubeObject {
  const times = parsable ? TIMES.slice(0, 5) : TIMES;
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'ListenerSet',
    metadata: {
      namespace: `ns-${Math.floor(r() * 3)}`,
      name: `ls-${Math.floor(r() * 4)}`,
      creationTimestamp: times[Math.floor(r() * times.length)],
    },
  } as KubeObject;
}

const resolved = (object: KubeObject): ResolvedListenerSet => ({ object }) as ResolvedListenerSet;

/** What the fast path checked before: every timestamp parses and `ls` sorts after each set. */
function byComparingEach(sets: readonly ResolvedListenerSet[], ls: KubeObject): boolean {
  return sets.every(
    (s) =>
      !Number.isNaN(Date.parse(s.object.metadata.creationTimestamp ?? '')) &&
      compareListenerSets(s.object, ls) < 0,
  );
}

describe('sortsLast', () => {
  test('equals comparing with every set, on sorted, unsorted and appended lists (300 seeds)', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const parsable = r() < 0.6;
      let sets = Array.from({ length: Math.floor(r() * 6) }, () => resolved(listenerSet(r, parsable)));
      if (r() < 0.7) sets.sort((a, b) => compareListenerSets(a.object, b.object));
      for (let step = 0; step < 12; step++) {
        const ls = listenerSet(r, true);
        const want = byComparingEach(sets, ls);
        assert.equal(sortsLast(sets, ls), want, `seed ${seed} step ${step}`);
        if (want) {
          const appended = [...sets, resolved(ls)];
          rememberAppended(sets, appended);
          sets = appended;
        }
      }
    }
  });
});
