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

  test('derive equals a snapshot built from scratch for few and many changes among thousands', () => {
    // Few changes take the binary-search path, many the merge (SPLICE_MAX_CHANGES): both must give
    // the full sort's order and version.
    let seed = 11;
    const r = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const start = new Map<string, ReturnType<typeof entry>>();
    for (let i = 0; i < 3000; i += 2) start.set(`rc-${i}`, entry(`rc-${i}`, `rc-${i}@0`));
    let prev = new TypeSnapshot(TypeUrl.Route, start);
    for (let step = 1; step <= 60; step++) {
      const entries = new Map(prev.entries);
      const changed = new Set<string>();
      const removed = new Set<string>();
      const count = step % 3 === 0 ? 100 + Math.floor(r() * 200) : Math.floor(r() * 70);
      for (let k = 0; k < count; k++) {
        const name = `rc-${Math.floor(r() * 3000)}`;
        if (changed.has(name) || removed.has(name)) continue;
        if (r() < 0.4 && entries.has(name)) {
          entries.delete(name);
          removed.add(name);
        } else {
          entries.set(name, entry(name, `${name}@${step}`));
          changed.add(name);
        }
      }
      const derived = TypeSnapshot.derive(prev, entries, [...changed], [...removed]);
      const fresh = new TypeSnapshot(TypeUrl.Route, entries);
      assert.deepEqual(derived.sorted, fresh.sorted, `step ${step}`);
      assert.equal(derived.version, fresh.version);
      prev = derived;
    }
  });
});
