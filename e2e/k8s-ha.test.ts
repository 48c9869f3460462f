import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LoadGenerator, freePort, request, waitFor } from './harness';
import type { ConvoyProcess } from './harness';
import { GW_API, K8sWorld, cond } from './cluster/k8s-world';
import type { Condition, KObject } from './cluster/k8s-world';

/**
 * Test 3: two Convoy replicas against one API server. Both serve xDS (an Envoy on each gets
 * its configuration); only the replica holding the convoy-leader Lease writes status; when the
 * leader is killed, the other takes over within the lease duration and writes what changed. This
 * is also the "leader lost" row of the fault matrix: requests through both Envoys, the one whose
 * replica died included, never fail during the failover.
 */

const LEASE_DURATION_MS = 15_000;
const RETRY_PERIOD_MS = 2_000;

/** Sum of convoy_status_writes_total over the given results, from a replica's /metrics. */
async function statusWrites(
  c: ConvoyProcess,
  results = ['written', 'unchanged', 'conflict', 'gone', 'error'],
) {
  const text = (await c.get('/metrics')).body;
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^convoy_status_writes_total\{result="([a-z]+)"\} (\d+)/.exec(line);
    if (m && results.includes(m[1])) sum += Number(m[2]);
  }
  return sum;
}

function redirectRoute(name: string, gateway: string, host: string, hostnames?: string[]): KObject {
  return {
    apiVersion: GW_API,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'infra' },
    spec: {
      parentRefs: [{ name: gateway }],
      ...(hostnames ? { hostnames } : {}),
      rules: [
        { filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: host, statusCode: 302 } }] },
      ],
    },
  };
}

const accepted = (s: Record<string, unknown>, o: KObject) =>
  (s.parents as { conditions: Condition[] }[] | undefined)?.some(
    (p) =>
      cond(p.conditions, 'Accepted')?.status === 'True' &&
      cond(p.conditions, 'Accepted')?.observedGeneration === o.metadata.generation,
  ) ?? false;

describe('two Convoy replicas: both serve xDS, only the leader writes status', { timeout: 300_000 }, () => {
  let w: K8sWorld;
  const ports: Record<string, number> = {};

  before(async () => {
    w = await K8sWorld.create();
    await w.namespace('infra');
    ports.gw1 = await freePort();
    ports.gw2 = await freePort();
    for (const gw of ['gw1', 'gw2']) {
      await w.apply({
        apiVersion: GW_API,
        kind: 'Gateway',
        metadata: { name: gw, namespace: 'infra' },
        spec: {
          gatewayClassName: 'convoy',
          listeners: [{ name: 'http', protocol: 'HTTP', port: ports[gw] }],
        },
      });
      await w.apply(redirectRoute(`to-${gw}`, gw, `${gw}.example.org`));
    }
  });
  after(async () => {
    await w?.dispose();
  });

  test('leader election, status by the leader only, failover within the lease duration', async (t) => {
    const a = await w.startConvoy('replica-a');
    const b = await w.startConvoy('replica-b');
    const identity = (c: ConvoyProcess) => new RegExp(`_${c.pid}$`);
    const holder = async () =>
      (
        (await w.get('Lease', 'convoy-system', 'convoy-leader'))?.spec as
          { holderIdentity?: string } | undefined
      )?.holderIdentity ?? '';
    const leaderId = await waitFor(async () => (await holder()) || undefined, { what: 'a Lease holder' });
    const [leader, follower] = identity(a).test(leaderId) ? [a, b] : [b, a];
    assert.match(leaderId, identity(leader));

    // Every replica serves xDS: an Envoy of fleet gw1 on the leader, one of gw2 on the follower.
    await w.startEnvoy(leader, 'infra/gw1', 'envoy-gw1');
    await w.startEnvoy(follower, 'infra/gw2', 'envoy-gw2');
    for (const gw of ['gw1', 'gw2']) {
      await waitFor(
        async () => {
          const r = await request({ port: ports[gw], path: '/x', timeoutMs: 2000 });
          // No port in the redirect: Envoy keeps the listener's port (Gateway API rule).
          return r.status === 302 && r.headers.location === `http://${gw}.example.org:${ports[gw]}/x`;
        },
        { what: `${gw} redirect through its Envoy`, timeoutMs: 30_000 },
      );
    }

    // Status is written, and only by the leader: the follower sends no status request at all.
    for (const gw of ['gw1', 'gw2']) {
      await w.waitStatus('HTTPRoute', 'infra', `to-${gw}`, accepted, `route to-${gw} Accepted`);
    }
    await w.waitStatus(
      'Gateway',
      'infra',
      'gw2',
      (s) => cond(s.conditions, 'Programmed')?.status === 'True',
      'gw2 Programmed',
    );
    assert.ok((await statusWrites(leader, ['written'])) > 0, 'the leader wrote status');
    assert.equal(await statusWrites(follower), 0, 'the follower made no status request');
    const leaderMetric = (await leader.get('/metrics')).body;
    assert.match(leaderMetric, /^convoy_leader\{[^}]*\} 1$/m);
    assert.match((await follower.get('/metrics')).body, /^convoy_leader\{[^}]*\} 0$/m);

    // Load through both Envoys across the failover: each must answer with its Gateway's redirect.
    const loads = ['gw1', 'gw2'].map((gw) =>
      LoadGenerator.start({
        request: { port: ports[gw], path: '/z' },
        check: (r) =>
          r.status === 302 && r.headers.location === `http://${gw}.example.org:${ports[gw]}/z`
            ? undefined
            : `status ${r.status}, location ${r.headers.location}`,
        pauseMs: 50,
      }),
    );
    t.after(() => Promise.all(loads.map((l) => l.stop())));
    for (const l of loads) await l.waitForSuccesses(10, 'before the leader dies');

    // The leader dies without releasing the Lease.
    for (const l of loads) l.phase('leader killed');
    await leader.stop('SIGKILL');
    const killedAt = Date.now();
    // The standby retries right when the Lease it watches expires: leaseDuration after it last
    // saw a renewal, which is at most one retry period before or after the kill. The deadline
    // leaves a busy machine room for slow requests; the time taken is reported, not asserted.
    await waitFor(async () => identity(follower).test(await holder()), {
      what: 'the follower takes over the Lease',
      timeoutMs: 2 * LEASE_DURATION_MS + 4 * RETRY_PERIOD_MS,
      intervalMs: 200,
    });
    const took = Date.now() - killedAt;
    t.diagnostic(`the follower took over ${took} ms after the leader was killed`);

    for (const l of loads) l.phase('follower leads');
    // The new leader writes what changes from now on.
    await w.apply(redirectRoute('after-failover', 'gw2', 'moved.example.org', ['later.example.org']));
    await w.waitStatus('HTTPRoute', 'infra', 'after-failover', accepted, 'status written by the new leader');
    assert.ok((await statusWrites(follower, ['written'])) > 0);
    // …and the Envoy on the surviving replica gets the new route.
    await waitFor(
      async () => {
        const r = await request({ port: ports.gw2, path: '/y', host: 'later.example.org', timeoutMs: 2000 });
        return r.status === 302 && r.headers.location === `http://moved.example.org:${ports.gw2}/y`;
      },
      { what: 'the surviving replica serves the new route', timeoutMs: 30_000 },
    );
    for (const l of loads) await l.waitForSuccesses(10, 'after the failover');
    for (const [i, l] of loads.entries()) {
      await l.stop();
      t.diagnostic(`gw${i + 1}: ${l.describe()}`);
      assert.equal(l.failed, 0, `no request through the gw${i + 1} Envoy failed: ${l.describe()}`);
    }
  });
});
