import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { blockedVersion, patchedVersion } from '../../src/xds/set-version';
import type { BlockedVersion, VersionedName } from '../../src/xds/set-version';
import { compareStrings } from '../../src/util/compare';

const sortedOf = (m: Map<string, string>): VersionedName[] =>
  [...m].map(([name, version]) => ({ name, version })).sort((a, b) => compareStrings(a.name, b.name));

describe('set version by blocks', () => {
  test('patchedVersion equals blockedVersion after chains of random edits (blocks carried over)', () => {
    let seed = 23;
    const r = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (const universe of [30, 700, 6000]) {
      const m = new Map<string, string>();
      for (let i = 0; i < universe; i += 3) m.set(`ns-${i % 17}/name-${i}`, `v${i}`);
      let sorted = sortedOf(m);
      let prev: BlockedVersion = blockedVersion(sorted);
      for (let step = 0; step < 400; step++) {
        const touched = new Set<string>();
        // Mostly a few edits; sometimes a burst that empties or refills whole regions.
        const edits = r() < 0.05 ? Math.floor(r() * 200) : 1 + Math.floor(r() * 4);
        for (let k = 0; k < edits; k++) {
          const name = `ns-${Math.floor(r() * universe) % 17}/name-${Math.floor(r() * universe)}`;
          if (m.has(name) && r() < 0.4) m.delete(name);
          else m.set(name, `v${step}-${k}`);
          touched.add(name);
        }
        const next = sortedOf(m);
        const patched = patchedVersion(sorted, prev.blocks, next, [...touched]);
        const full = blockedVersion(next);
        assert.equal(patched.version, full.version, `universe ${universe} step ${step}`);
        assert.deepEqual(
          patched.blocks.map((b) => b.count),
          full.blocks.map((b) => b.count),
        );
        sorted = next;
        prev = patched;
      }
    }
  });

  test('the version depends on every name and version, and only on the set', () => {
    const m = new Map<string, string>();
    for (let i = 0; i < 2000; i++) m.set(`rc-${i}`, `v${i}`);
    const base = blockedVersion(sortedOf(m)).version;
    assert.ok(base.length === 22);
    const seen = new Set([base]);
    for (const i of [0, 999, 1999]) {
      const changed = new Map(m).set(`rc-${i}`, 'other');
      seen.add(blockedVersion(sortedOf(changed)).version);
      const without = new Map(m);
      without.delete(`rc-${i}`);
      seen.add(blockedVersion(sortedOf(without)).version);
    }
    assert.equal(seen.size, 7);
    // Built in another insertion order: the same version.
    const reversed = new Map([...m].reverse());
    assert.equal(blockedVersion(sortedOf(reversed)).version, base);
    assert.ok(blockedVersion(sortedOf(m)).blocks.length > 10, 'many blocks at this size');
    assert.equal(blockedVersion([]).version, blockedVersion([]).version);
  });
});
