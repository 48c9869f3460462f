import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LoadGenerator, freePort, request, sleep, waitFor } from './harness';
import { GW_API, K8sWorld, cond } from './cluster/k8s-world';
import type { Condition, KObject } from './cluster/k8s-world';

/**
 * Test 4 (and the "API server down" row of the fault matrix): the API server stops and comes
 * back. Envoy keeps serving Convoy's last configuration throughout (concurrent clients, on kept-alive
 * and on new connections, see no failure); Convoy reconnects on its own, a change made just after
 * the restart reaches Envoy, and no status is lost — including the status of a route created just
 * before the outage.
 */

function route(name: string, target: string, hostnames?: string[]): KObject {
  return {
    apiVersion: GW_API,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'infra' },
    spec: {
      parentRefs: [{ name: 'gw' }],
      ...(hostnames ? { hostnames } : {}),
      rules: [
        { filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: target, statusCode: 302 } }] },
      ],
    },
  };
}

const acceptedAtGeneration = (s: Record<string, unknown>, o: KObject) =>
  (s.parents as { conditions: Condition[] }[] | undefined)?.some((p) => {
    const c = cond(p.conditions, 'Accepted');
    return c?.status === 'True' && c.observedGeneration === o.metadata.generation;
  }) ?? false;

describe('API server outage', { timeout: 300_000 }, () => {
  let w: K8sWorld;
  let port: number;

  before(async () => {
    w = await K8sWorld.create();
    await w.namespace('infra');
    port = await freePort();
    await w.apply({
      apiVersion: GW_API,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra' },
      spec: { gatewayClassName: 'convoy', listeners: [{ name: 'http', protocol: 'HTTP', port }] },
    });
    await w.apply(route('main', 'one.example.org'));
  });
  after(async () => {
    await w?.dispose();
  });

  test('Envoy keeps serving, Convoy reconverges after the restart, no status is lost', async (t) => {
    const convoy = await w.startConvoy();
    await w.startEnvoy(convoy, 'infra/gw');
    // The default request timeout (10 s): the steady client counts a timed-out request as a
    // failure, and a busy machine may be slow to answer without Envoy failing.
    const location = async (host = 'www.example.com') => {
      const r = await request({ port, host, path: '/p' });
      return r.status === 302 ? r.headers.location : `status ${r.status}`;
    };
    await waitFor(async () => (await location()) === `http://one.example.org:${port}/p`, {
      what: 'the first route through Envoy',
      timeoutMs: 30_000,
    });
    await w.waitStatus('HTTPRoute', 'infra', 'main', acceptedAtGeneration, 'main Accepted');

    // Load for the whole test: every answer must come from Envoy's configuration.
    const load = LoadGenerator.start({
      request: { port, host: 'www.example.com', path: '/p' },
      check: (r) => {
        const where = r.headers.location ?? '';
        return r.status === 302 && /^http:\/\/(one|two)\.example\.org:\d+\/p$/.test(where)
          ? undefined
          : `status ${r.status}, location ${where}`;
      },
      pauseMs: 50,
    });
    t.after(() => load.stop());
    await load.waitForSuccesses(10, 'before the outage');

    // A route created just before the outage: its status may still be unwritten when the API
    // server goes away.
    await w.apply(route('late', 'late.example.org', ['late.example.com']));
    load.phase('API server down');
    await w.cluster.stopApiServer();
    const outageStart = Date.now();
    // Long enough for Convoy's watches to fail and retry a few times.
    await sleep(6000);
    await load.waitForSuccesses(10, 'while the API server is down');
    assert.equal(load.failed, 0, `Envoy kept serving during the outage: ${load.describe()}`);
    assert.ok(convoy.running, 'Convoy survives the outage');

    load.phase('API server restarted');
    await w.cluster.startApiServer();
    t.diagnostic(
      `API server down for ${Date.now() - outageStart} ms (restart took ${w.cluster.apiserverStartMs} ms)`,
    );
    // A change made right after the restart is applied.
    const changed = await w.apply(route('main', 'two.example.org'));
    const restartedAt = Date.now();
    await waitFor(async () => (await location()) === `http://two.example.org:${port}/p`, {
      what: 'the change made after the restart reaches Envoy',
      timeoutMs: 45_000,
      context: () => convoy.logContext(20),
    });
    t.diagnostic(`change applied ${Date.now() - restartedAt} ms after the restart`);
    await w.waitStatus(
      'HTTPRoute',
      'infra',
      'main',
      (s, o) => o.metadata.generation === changed.metadata.generation && acceptedAtGeneration(s, o),
      'main status at the new generation',
      45_000,
    );
    await w.waitStatus(
      'HTTPRoute',
      'infra',
      'late',
      acceptedAtGeneration,
      'late route status written',
      45_000,
    );
    await waitFor(
      async () =>
        (await request({ port, host: 'late.example.com', path: '/p', timeoutMs: 2000 })).headers.location ===
        `http://late.example.org:${port}/p`,
      { what: 'the route created before the outage is served', timeoutMs: 30_000 },
    );
    await load.waitForSuccesses(10, 'after the API server returned');
    await load.stop();
    t.diagnostic(load.describe());
    assert.equal(load.failed, 0, `no failed request at any time: ${load.describe()}`);
    const metrics = (await convoy.get('/metrics')).body;
    assert.match(
      metrics,
      /^convoy_kubernetes_watch_errors_total\{kind="HTTPRoute"\} [1-9]/m,
      'the outage was noticed',
    );
  });
});
