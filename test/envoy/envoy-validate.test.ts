import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { translateFleet } from '../../src/envoy/translate';
import { GOLDEN_FLEETS, httpFleet, httpsFleetWithoutCatchAll, mixedFleet } from './fixtures';
import { envoyValidate, requireEnvoy, staticBootstrap } from './helpers';

/**
 * Every golden fleet's translation must be accepted by the real Envoy (`--mode validate`), as a
 * static bootstrap: route configurations inline, assignments as load_assignment, secrets static.
 * A missing binary is a failure with instructions, never a skip.
 */

describe('real Envoy accepts the translation', () => {
  test('envoy binary is present', () => {
    requireEnvoy();
  });

  for (const [name, build] of Object.entries(GOLDEN_FLEETS)) {
    test(name, () => {
      const run = envoyValidate(staticBootstrap(translateFleet(build(), { bindAddress: '127.0.0.1' })), name);
      assert.equal(run.status, 0, `envoy --mode validate rejected ${name}:\n${run.output}`);
    });
  }

  for (const [name, build] of Object.entries({ https: httpsFleetWithoutCatchAll, mixed: mixedFleet })) {
    test(`${name} in the SNI-dispatch layout (docs/xds.md §16)`, () => {
      const res = translateFleet(build(), { bindAddress: '127.0.0.1', listenerLayout: 'sni-dispatch' });
      const run = envoyValidate(staticBootstrap(res), `${name}-sni-dispatch`);
      assert.equal(run.status, 0, `envoy --mode validate rejected ${name}:\n${run.output}`);
    });
  }

  test('control: Envoy rejects a route to an unknown cluster (the check can fail)', () => {
    const res = translateFleet(httpFleet(), { bindAddress: '127.0.0.1' });
    res.clusters = res.clusters.filter((c) => c.name !== 'default/api-v2/8080');
    res.endpoints = res.endpoints.filter((e) => e.cluster_name !== 'default/api-v2/8080');
    const run = envoyValidate(staticBootstrap(res), 'control');
    assert.notEqual(run.status, 0);
    assert.match(run.output, /default\/api-v2\/8080/);
  });
});
