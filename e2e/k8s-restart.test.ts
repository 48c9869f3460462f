import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startEchoBackend, waitFor } from './harness';
import type { Backend } from './harness';
import { GW_API, K8sWorld } from './cluster/k8s-world';
import type { KObject } from './cluster/k8s-world';
import { SITE, backendAt, killAndRestartUnderLoad } from './support/faults';

/**
 * Fault matrix, Kubernetes mode: `convoy serve` against a real API server is killed (SIGKILL)
 * and started again while clients send requests through Envoy. The restarted process lists
 * everything again before it publishes (docs/xds.md §9), so Envoy is never sent a partial world;
 * it serves throughout, holds the same versions afterwards, and later changes are served
 * (e2e/support/faults.ts killAndRestartUnderLoad). The backends are ExternalName Services, as in
 * e2e/k8s-traffic.test.ts, because the API server refuses loopback endpoints.
 */

function siteRoute(backend: Backend): KObject {
  return {
    apiVersion: GW_API,
    kind: 'HTTPRoute',
    metadata: { name: 'site', namespace: 'apps' },
    spec: {
      parentRefs: [{ name: 'gw' }],
      hostnames: [SITE],
      rules: [{ backendRefs: [{ name: backend.name, port: backend.port }] }],
    },
  };
}

describe('Convoy killed and restarted under load, Kubernetes mode', { timeout: 180_000 }, () => {
  let w: K8sWorld;
  const backends: Backend[] = [];
  let port: number;

  before(async () => {
    w = await K8sWorld.create();
    await w.namespace('apps');
    for (const name of ['one', 'two']) {
      const b = await startEchoBackend(name);
      backends.push(b);
      await w.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: 'apps' },
        spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'http', port: b.port }] },
      });
    }
    port = await freePort();
    await w.apply({
      apiVersion: GW_API,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'apps' },
      spec: { gatewayClassName: 'convoy', listeners: [{ name: 'http', protocol: 'HTTP', port }] },
    });
    await w.apply(siteRoute(backends[0]));
  });
  after(async () => {
    for (const b of backends) await b.close();
    await w?.dispose();
  });

  test('no request fails, the versions Envoy holds do not change, later changes are served', async (t) => {
    const convoy = await w.startConvoy('convoy', ['--enable-external-name-services']);
    const envoy = await w.startEnvoy(convoy, 'apps/gw', 'envoy');
    await waitFor(async () => (await backendAt(port)) === 'one', {
      what: 'the route answering through Envoy',
      timeoutMs: 30_000,
      context: () => `${envoy.logContext(15)}\n${convoy.logContext(15)}`,
    });
    const load = await killAndRestartUnderLoad({
      convoy,
      envoy,
      nodeId: 'envoy',
      variant: 'delta',
      port,
      backends: ['one', 'two'],
      routeTo: (name) => w.apply(siteRoute(backends.find((b) => b.name === name)!)),
    });
    t.diagnostic(load.describe());
    assert.equal(load.failed, 0, `no request failed: ${load.describe()}`);
  });
});
