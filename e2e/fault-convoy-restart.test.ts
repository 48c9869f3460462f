import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { World } from './support/world';
import type { Variant } from './support/world';
import { httpRouteDoc, killAndRestartUnderLoad, serveSite } from './support/faults';

/**
 * Fault matrix, file mode: `convoy serve` is killed (SIGKILL) and started again while clients send
 * requests through Envoy, for both ADS variants. Envoy serves its last configuration meanwhile,
 * so no request fails; the restarted Convoy rebuilds the same content with the same versions, so
 * nothing Envoy holds changes; changes made after the restart are served
 * (e2e/support/faults.ts killAndRestartUnderLoad). Kubernetes mode: e2e/k8s-restart.test.ts.
 */

for (const variant of ['delta', 'sotw'] as Variant[]) {
  describe(`Convoy killed and restarted under load, file mode (${variant})`, { timeout: 90_000 }, () => {
    let w: World;

    before(async () => {
      w = await World.create(variant);
      await serveSite(w, ['one', 'two']);
    });
    after(async () => {
      await w?.dispose();
    });

    test('no request fails, the versions Envoy holds do not change, later changes are served', async (t) => {
      const load = await killAndRestartUnderLoad({
        convoy: w.convoy,
        envoy: w.envoy,
        nodeId: `e2e-${variant}`,
        variant,
        port: w.ports.http,
        backends: ['one', 'two'],
        routeTo: async (backend) => w.write('02-route.yaml', [httpRouteDoc('site', backend)]),
      });
      t.diagnostic(load.describe());
      assert.equal(load.failed, 0, `no request failed: ${load.describe()}`);
    });
  });
}
