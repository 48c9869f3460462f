import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TypeUrl } from '../src/envoy/resources';
import type { XdsDebugState } from '../src/xds/debug-state';
import { MAX_INFLIGHT } from '../src/xds/stream';
import type { AdsClient } from '../test/support/ads-client';
import { LoadGenerator, StallingProxy, connectAdsClient, dumpedVersions, request, waitFor } from './harness';
import type { EchoResponse } from './harness';
import { World } from './support/world';
import { SITE, answeredBy, httpGatewayDocs, httpRouteDoc, streamOf, waitSynced } from './support/faults';

/**
 * Fault matrix: Envoys that misbehave on their ADS stream must not slow the others. Beside a real
 * Envoy and three well-behaved simulated Envoys, two test clients join the fleet: one never ACKs
 * anything, one stops reading its socket entirely (a StallingProxy freezes its connection, as a
 * hung process would). Route edits then reach the real Envoy and the simulated ones as usual,
 * with requests flowing through Envoy all along; Convoy holds at most MAX_INFLIGHT unflushed
 * responses for the frozen stream, however many edits happen, and closes it once keepalive finds
 * the connection dead (docs/xds.md §11).
 */

const RDS = TypeUrl.Route;
const FILLER_ROUTES = 150;
const EDITS = 8;

/** The route `site` to backend one, with a request header naming the edit. */
function siteRoute(edit: number): object {
  const doc = httpRouteDoc('site', 'one') as { spec: { rules: Record<string, unknown>[] } };
  doc.spec.rules[0].filters = [
    {
      type: 'RequestHeaderModifier',
      requestHeaderModifier: { set: [{ name: 'x-edit', value: String(edit) }] },
    },
  ];
  return doc;
}

describe(
  'an Envoy that never ACKs and one that stops reading do not slow the others',
  { timeout: 90_000 },
  () => {
    let w: World;
    let proxy: StallingProxy;
    const clients: AdsClient[] = [];

    before(async () => {
      w = await World.create('delta');
      await w.addBackend('one');
      w.write('00-gateway.yaml', httpGatewayDocs(w));
      w.write('01-services.yaml', w.serviceDocs('one'));
      // Many virtual hosts, so that a few route responses overflow a stream's flow-control window.
      w.write(
        '02-fillers.yaml',
        Array.from({ length: FILLER_ROUTES }, (_, i) =>
          httpRouteDoc(`filler-${i}`, 'one', [`filler-${i}.a-longer-hostname.example.com`]),
        ),
      );
      w.write('03-site.yaml', [siteRoute(0)]);
      await w.startConvoy();
      await w.startEnvoy();
      await waitSynced(w.convoy, 'e2e-delta', 4);
      const [port] = w.convoy.xdsAddress.split(':').reverse();
      proxy = await StallingProxy.start({ host: '127.0.0.1', port: Number(port) });
    });
    after(async () => {
      for (const c of clients) c.cancel();
      await proxy?.close();
      await w?.dispose();
    });

    test('edits reach everyone else; the frozen stream stays bounded and is closed', async (t) => {
      const fleet = 'default/edge';
      const dump = dumpedVersions(await w.envoy.configDump('?include_eds'));
      const clusters = dump.clusters.map((c) => c.name);
      const routes = dump.routes.map((r) => r.name);
      const subscribeLikeEnvoy = (c: AdsClient) => {
        c.subscribe(TypeUrl.Cluster, []);
        c.subscribe(TypeUrl.Endpoint, clusters);
        c.subscribe(TypeUrl.Listener, []);
        c.subscribe(RDS, routes);
      };
      const connect = async (
        nodeId: string,
        variant: 'sotw' | 'delta',
        extra: { autoAck?: boolean; address?: string },
      ) => {
        const c = await connectAdsClient(w.convoy, {
          fleet,
          nodeId,
          variant,
          keepResponses: false,
          ...extra,
        });
        clients.push(c);
        subscribeLikeEnvoy(c);
        return c;
      };
      const healthy = [
        await connect('healthy-sotw', 'sotw', {}),
        await connect('healthy-delta-1', 'delta', {}),
        await connect('healthy-delta-2', 'delta', {}),
      ];
      await connect('never-acks', 'sotw', { autoAck: false });
      const frozen = await connect('frozen', 'delta', { address: proxy.address });
      for (const id of ['healthy-sotw', 'healthy-delta-1', 'healthy-delta-2', 'frozen'])
        await waitSynced(w.convoy, id, 4);
      proxy.stall();

      const fleetRdsVersion = async () => {
        const state = await w.convoy.getJson<XdsDebugState>('/debug/xds');
        return state.fleets.find((f) => f.fleet === fleet)!.types[RDS].version;
      };
      const editServed = async (edit: number) => {
        const r = await request({ port: w.ports.http, host: SITE, path: '/', timeoutMs: 5000 });
        return r.status === 200 && r.json<EchoResponse>().headers['x-edit'] === String(edit);
      };
      const load = LoadGenerator.start({
        request: { port: w.ports.http, host: SITE, path: '/' },
        check: answeredBy(['one']),
      });
      t.after(() => load.stop());
      let frozenMaxUnflushed = 0;
      let frozenSeenStalled = false;
      const watchFrozen = async () => {
        const s = await streamOf(w.convoy, 'frozen');
        if (!s) return false;
        frozenMaxUnflushed = Math.max(frozenMaxUnflushed, s.unflushed.responses);
        frozenSeenStalled ||= s.stalled;
        return true;
      };

      for (let edit = 1; edit <= EDITS; edit++) {
        load.phase(`edit ${edit}`);
        w.write('03-site.yaml', [siteRoute(edit)]);
        await waitFor(() => editServed(edit), {
          what: `edit ${edit} served by the real Envoy`,
          timeoutMs: 30_000,
          context: () => w.convoy.logContext(20),
        });
        const version = await fleetRdsVersion();
        await waitFor(() => healthy.every((c) => c.latest.get(RDS)?.version === version), {
          what: `edit ${edit} received by every well-behaved simulated Envoy`,
          timeoutMs: 30_000,
          context: () => healthy.map((c) => c.latest.get(RDS)?.version).join(', '),
        });
        await watchFrozen();
      }
      assert.ok(frozen.received > 0);
      const neverAcks = await streamOf(w.convoy, 'never-acks');
      assert.ok(neverAcks, 'the client that never ACKs is still connected');
      assert.ok(
        Object.values(neverAcks.types).some((ty) => ty.state === 'stale'),
        'Convoy reports the client that never ACKs as not in sync',
      );

      // Convoy's keepalive pings go unanswered on the frozen connection: it is closed, and nothing
      // it held stays behind.
      load.phase('waiting for keepalive to close the frozen stream');
      await waitFor(async () => !(await watchFrozen()), {
        what: 'Convoy to close the frozen stream',
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      t.diagnostic(
        `frozen stream: at most ${frozenMaxUnflushed} unflushed responses, stalled seen: ${frozenSeenStalled}`,
      );
      assert.ok(frozenMaxUnflushed <= MAX_INFLIGHT, `${frozenMaxUnflushed} unflushed responses`);
      const metrics = (await w.convoy.get('/metrics')).body;
      assert.match(metrics, /^convoy_xds_stalled_streams 0$/m);
      const state = await w.convoy.getJson<XdsDebugState>('/debug/xds');
      assert.equal(state.sendBudget.inflightBytes, 0, 'no send budget held');

      await load.waitForSuccesses(10, 'after the frozen stream was closed');
      await load.stop();
      t.diagnostic(load.describe());
      assert.equal(load.failed, 0, `no request failed: ${load.describe()}`);
    });
  },
);
