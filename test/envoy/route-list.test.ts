import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RouteConfiguration } from '../../src/generated/envoy/config/route/v3/RouteConfiguration';
import { RouteListReuse, assembleRoutes, type RouteSegment } from '../../src/envoy/translate/route-list';
import { rng } from '../support/rng';

/** A few names, so repeated names (kept once) and undefined elements both occur often. */
function randomSegments(next: () => number): (RouteConfiguration | undefined)[][] {
  return Array.from({ length: 1 + Math.floor(next() * 4) }, () =>
    Array.from({ length: Math.floor(next() * 12) }, () =>
      next() < 0.2 ? undefined : { name: `rc-${Math.floor(next() * 30)}` },
    ),
  );
}

describe('RouteListReuse (the full assembly as the oracle)', () => {
  test('random replacements, insertions and removals give exactly the full assembly', () => {
    const next = rng(7);
    const reuse = new RouteListReuse();
    const fleets = new Map<string, (RouteConfiguration | undefined)[][]>();
    for (const fleet of ['ns/a', 'ns/b']) fleets.set(fleet, randomSegments(next));
    let patchedSteps = 0;
    for (let step = 0; step < 3000; step++) {
      const fleet = next() < 0.5 ? 'ns/a' : 'ns/b';
      const segments = fleets.get(fleet)!.map((s) => s);
      const s = Math.floor(next() * segments.length);
      const seg = segments[s].slice();
      const i = Math.floor(next() * (seg.length + 1));
      const r = next();
      if (r < 0.45 && i < seg.length) {
        // Same name, new object: the usual change (a route edited).
        const old = seg[i];
        seg[i] = old ? { name: old.name, virtual_hosts: [{ name: `v${step}` }] } : undefined;
      } else if (r < 0.55 && i < seg.length) {
        seg[i] = next() < 0.3 ? undefined : { name: `rc-${Math.floor(next() * 30)}` };
      } else if (r < 0.65) {
        seg.splice(i, 0, { name: `rc-${Math.floor(next() * 30)}` });
      } else if (r < 0.72 && i < seg.length) {
        seg.splice(i, 1);
      } else if (r < 0.75) {
        reuse.forget(fleet);
      } else if (r < 0.78) {
        segments.push([{ name: `rc-${Math.floor(next() * 30)}` }]);
      }
      segments[s] = r < 0.85 ? seg : segments[s];
      fleets.set(fleet, segments);
      const lastOutput = reuse.assemble(fleet, segments);
      const want = assembleRoutes(segments as RouteSegment[]).output;
      assert.equal(lastOutput.length, want.length, `length at step ${step}`);
      for (let j = 0; j < want.length; j++)
        assert.equal(lastOutput[j], want[j], `element ${j} at step ${step}`);
      if (r < 0.45) patchedSteps++;
    }
    assert.ok(patchedSteps > 1000, 'most steps exercised the patched path');
  });

  test('a replaced configuration of the same name is patched into a copy of the last list', () => {
    const reuse = new RouteListReuse();
    const chains = Array.from({ length: 1000 }, (_, i) => ({ name: `rc-${i}` }));
    const http = [{ name: 'http-80' }];
    const first = reuse.assemble('ns/gw', [http, chains]);
    const edited = chains.map((rc, i) => (i === 500 ? { name: rc.name, virtual_hosts: [] } : rc));
    const second = reuse.assemble('ns/gw', [http, edited]);
    assert.notEqual(second, first, 'a new array: the last one is shared with its caller');
    assert.equal(second[501], edited[500]);
    assert.equal(second[500], chains[499]);
    assert.equal(first[501], chains[500], 'the last list is left as it was');
    const third = reuse.assemble('ns/gw', [http, edited]);
    assert.equal(third, second, 'nothing replaced: the very same list');
  });
});
