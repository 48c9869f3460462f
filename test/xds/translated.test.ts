import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { translateFleet } from '../../src/envoy/translate';
import { silentLogger } from '../../src/observability/logger';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { XdsCache } from '../../src/xds/cache';
import { PUSH_ORDER } from '../../src/xds/served-types';
import { GOLDEN_FLEETS } from '../envoy/fixtures';

/** The translators' output (the golden fleets of test/envoy) passes the cache's consistency check. */
describe('translated fleets in the xDS cache', () => {
  for (const [name, build] of Object.entries(GOLDEN_FLEETS)) {
    test(name, () => {
      const cache = new XdsCache({ logger: silentLogger(), metrics: new ConvoyMetrics() });
      const result = cache.setFleet(`golden/${name}`, translateFleet(build()));
      assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
      const snap = cache.snapshot(`golden/${name}`)!;
      assert.ok(PUSH_ORDER.some((t) => snap.types[t].entries.size > 0));
      // Translating the same model again changes nothing.
      assert.deepEqual(cache.setFleet(`golden/${name}`, translateFleet(build())), {
        ok: true,
        changed: {},
        removed: {},
      });
    });
  }
});
