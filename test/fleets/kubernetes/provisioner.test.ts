import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeClient } from '../../../src/kubernetes/client';
import { KubernetesFleetProvisioner } from '../../../src/fleets/kubernetes/provisioner';
import { silentLogger } from '../../../src/observability/logger';

/**
 * A fake API server for the provisioner: every owned-kind LIST returns one owned Deployment for
 * the Deployment collection and nothing else, watches wait until aborted, and every other request
 * is recorded (the test reads the DELETEs).
 */
function fakeClient(requests: string[]): KubeClient {
  const client = {
    request: async (method: string, path: string) => {
      if (method === 'GET') {
        const items = path.includes('/deployments')
          ? [{ metadata: { name: 'convoy-gw', namespace: 'team', resourceVersion: '7' } }]
          : [];
        return { items, metadata: { resourceVersion: '10' } };
      }
      requests.push(`${method} ${path}`);
      return {};
    },
    watch: (_path: string, _onEvent: unknown, opts: { signal: AbortSignal }) =>
      new Promise<void>((resolve) => opts.signal.addEventListener('abort', () => resolve())),
  };
  return client as unknown as KubeClient;
}

describe('KubernetesFleetProvisioner', () => {
  test('a leader prunes nothing before the first build has handed over its fleets', async () => {
    const requests: string[] = [];
    const provisioner = new KubernetesFleetProvisioner({
      client: fakeClient(requests),
      logger: silentLogger(),
      settings: {} as never,
      certificates: (() => Promise.reject(new Error('no fleet renders in this test'))) as never,
      debounceMs: 1,
    });
    try {
      provisioner.start();
      provisioner.setLeader(true);
      // Several debounce periods with the watches listed and no build: nothing is deleted.
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(requests, []);
      assert.equal(provisioner.passes, 0);
      // The first build says no fleet wants the Deployment: now it is pruned.
      provisioner.update([]);
      const deadline = Date.now() + 30_000;
      while (requests.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(requests, ['DELETE /apis/apps/v1/namespaces/team/deployments/convoy-gw']);
    } finally {
      await provisioner.stop();
    }
  });
});
