import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { XDS_CLUSTER_NAME } from '../src/envoy/bootstrap';
import { LoadGenerator, isListening, waitFor } from './harness';
import { World } from './support/world';
import type { Variant } from './support/world';
import { SITE, answeredBy, backendAt, envoyHolding, serveSite, waitControlPlane } from './support/faults';

/**
 * Fault matrix: an Envoy restarted while Convoy is down. Envoy persists no configuration, and the
 * bootstrap makes it wait for its first CDS and LDS without a deadline (docs/xds.md §9), so the
 * new process must serve nothing at all rather than something wrong: its listener port refuses
 * connections, /ready says it is not live, and it holds no listener or cluster. As soon as Convoy
 * is back it goes live and every answer is right. docs/operations.md §14 states this behaviour and
 * its mitigation (several Envoys, restarted one at a time).
 */

for (const variant of ['delta', 'sotw'] as Variant[]) {
  describe(`Envoy restarted while Convoy is down (${variant})`, { timeout: 90_000 }, () => {
    let w: World;

    before(async () => {
      w = await World.create(variant);
      await serveSite(w, ['one']);
    });
    after(async () => {
      await w?.dispose();
    });

    test('the new Envoy waits without serving, then serves correctly once Convoy is back', async (t) => {
      await w.convoy.stop('SIGKILL');
      await waitControlPlane(w.envoy, false);
      assert.equal(await backendAt(w.ports.http), 'one', 'the running Envoy serves its last configuration');
      await w.envoy.stop();

      // Every answer from now on is either a refused connection or the right backend.
      const probe = LoadGenerator.start({
        request: { port: w.ports.http, host: SITE, path: '/' },
        check: answeredBy(['one']),
        allowRefused: true,
        pauseMs: 50,
      });
      t.after(() => probe.stop());
      probe.phase('Envoy restarted, Convoy down');
      await w.startEnvoy();
      // Envoy tried to reach Convoy several times, and has been up for longer than Envoy's default
      // initial fetch timeout (15 s), after which it would go live empty without the bootstrap's 0s.
      const connectFailures = `cluster.${XDS_CLUSTER_NAME}.upstream_cx_connect_fail`;
      await waitFor(
        async () => {
          const s = await w.envoy.stats(`^(server\\.uptime|${connectFailures.replace(/\./g, '\\.')})$`);
          return Number(s.get(connectFailures)) >= 3 && Number(s.get('server.uptime')) >= 20;
        },
        {
          what: 'the new Envoy to try Convoy three times and be up for 20 s',
          timeoutMs: 60_000,
          intervalMs: 500,
          context: () => w.envoy.logContext(15),
        },
      );
      const ready = await w.envoy.admin('/ready');
      assert.equal(ready.status, 503, 'not ready');
      // PRE_INITIALIZING: still waiting for its first CDS answer (INITIALIZING would be LDS).
      assert.equal(ready.body.trim(), 'PRE_INITIALIZING');
      assert.equal(await isListening(w.ports.http), false, 'no listener bound');
      const holding = await envoyHolding(w.envoy);
      assert.deepEqual(
        [holding.versions.listeners, holding.versions.clusters, holding.versions.routes],
        [[], [], []],
        'no dynamic configuration',
      );
      assert.equal(probe.ok + probe.failed, 0, `nothing answered: ${probe.describe()}`);
      assert.ok(probe.refused > 0, 'clients were refused');

      probe.phase('Convoy back');
      await w.convoy.restart();
      await w.envoy.waitLive();
      await probe.waitForSuccesses(10, 'after Convoy returned');
      await probe.stop();
      t.diagnostic(probe.describe());
      assert.equal(probe.failed, 0, `no wrong answer at any time: ${probe.describe()}`);
    });
  });
}
