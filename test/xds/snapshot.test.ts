import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { TypeSnapshot, setVersion } from '../../src/xds/snapshot';
import type { CacheEntry } from '../../src/xds/snapshot';
import { TypeUrl } from '../../src/envoy/resources';

const entry = (name: string, content: string): CacheEntry => ({
  name,
  version: createHash('sha256').update(content).digest('base64url').slice(0, 22),
  bytes: Buffer.from(content),
});

describe('TypeSnapshot', () => {
  test('setVersion hashes the sorted name/version pairs', () => {
    const pairs = [entry('a', '1'), entry('b', '2')];
    const h = createHash('sha256');
    for (const e of pairs) h.update(e.name).update('\0').update(e.version).update('\n');
    assert.equal(setVersion(pairs), h.digest().subarray(0, 16).toString('base64url'));
  });

  test('derive equals a snapshot built from scratch (random edits)', () => {
    let seed = 7;
    const r = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    let prev = new TypeSnapshot(TypeUrl.Route, new Map());
    for (let step = 0; step < 300; step++) {
      const entries = new Map(prev.entries);
      const changed: string[] = [];
      const removed: string[] = [];
      for (let k = Math.floor(r() * 4); k >= 0; k--) {
        const name = `rc-${Math.floor(r() * 40)}`;
        if (r() < 0.3 && entries.has(name) && !changed.includes(name)) {
          entries.delete(name);
          removed.push(name);
        } else if (!removed.includes(name) && !changed.includes(name)) {
          entries.set(name, entry(name, `${name}@${step}`));
          changed.push(name);
        }
      }
      const derived = TypeSnapshot.derive(prev, entries, changed, removed);
      const fresh = new TypeSnapshot(TypeUrl.Route, entries);
      assert.deepEqual(
        derived.sorted.map((e) => e.name),
        fresh.sorted.map((e) => e.name),
        `step ${step}`,
      );
      assert.equal(derived.version, fresh.version);
      prev = derived;
    }
  });
});
