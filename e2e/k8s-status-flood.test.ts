import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, request, startEchoBackend, waitFor, type Backend } from './harness';
import type { ConvoyProcess } from './harness';
import { collectionPath, resourceForKind } from '../src/kubernetes/resources';
import { GW_API, K8sWorld, cond, convoyGateway, loopbackService, type KObject } from './cluster/k8s-world';

/**
 * A route edited while Convoy is still writing the statuses of a cold start (docs/gateway-api.md
 * §16, "Watch lag"). Each status write is an event on the HTTPRoute watch stream ahead of the
 * edit; the status writer keeps its writes in flight few enough that the API server's watch
 * cache keeps up with their echoes (kubernetes/write-window.ts), and an echo changes nothing in
 * Convoy's store (no build). The edit must still arrive, take the route fast path (no full
 * build), be served by a real Envoy, and get its status for the new generation; the writer must
 * have timed its echoes (convoy_status_echo_lag_seconds) and written every status once.
 */

const ROUTES = 600;

describe(
  'a route edited while the cold start statuses are written, in Kubernetes mode',
  { timeout: 600_000 },
  () => {
    let w: K8sWorld;
    let backend: Backend;
    let gwPort: number;
    let convoy: ConvoyProcess;

    const page = async (): Promise<string> => (await convoy.get('/metrics')).body;
    /** The value of a metric line of Convoy's /metrics that starts with `series ` (0 when absent). */
    const value = (text: string, series: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line ? Number(line.slice(series.length + 1)) : 0;
    };
    const fullBuilds = (text: string): string[] =>
      [...text.matchAll(/^convoy_full_builds_total\{reason="([^"]+)"\} (\d+)/gm)].map(
        (m) => `${m[1]}=${m[2]}`,
      );

    const route = (i: number, extraRules: object[] = []): KObject => ({
      apiVersion: GW_API,
      kind: 'HTTPRoute',
      metadata: { name: `route-${i}`, namespace: 'infra' },
      spec: {
        parentRefs: [{ name: 'gw' }],
        hostnames: [`r${i}.example.com`],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/' } }],
            backendRefs: [{ name: 'echo', port: backend.port }],
          },
          ...extraRules,
        ],
      },
    });

    before(async () => {
      w = await K8sWorld.create();
      await w.namespace('infra');
      backend = await startEchoBackend('echo');
      gwPort = await freePort();
      await w.apply(loopbackService('echo', 'infra', backend.port));
      await w.apply(convoyGateway('gw', 'infra', [{ name: 'http', protocol: 'HTTP', port: gwPort }]));
      // Created before Convoy starts, so its first build has all of their statuses to write.
      const r = resourceForKind('HTTPRoute')!;
      let next = 0;
      const worker = async () => {
        while (next < ROUTES) {
          const o = route(next++);
          await w.admin.request('POST', collectionPath(r, 'infra'), { body: o });
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
    });
    after(async () => {
      await backend?.close();
      await w?.dispose();
    });

    test('the edit is served by Envoy on the route fast path, and every status is written', async () => {
      convoy = await w.startConvoy('convoy', ['--enable-external-name-services']);
      await w.startEnvoy(convoy, 'infra/gw');
      const before = await page();
      const writtenAtEdit = value(before, 'convoy_status_writes_total{result="written"}');
      const routeBuilds = value(before, 'convoy_builds_total{result="route"}');
      // The edit goes in while statuses are still being written (precondition of this test).
      const edited = route(7, [
        {
          matches: [{ path: { type: 'Exact', value: '/moved' } }],
          filters: [
            {
              type: 'RequestRedirect',
              requestRedirect: { hostname: 'elsewhere.example.com', statusCode: 302 },
            },
          ],
        },
      ]);
      await w.apply(edited);
      assert.ok(
        writtenAtEdit < ROUTES,
        `the edit was made while statuses were written (${writtenAtEdit} written)`,
      );

      let last = '';
      await waitFor(
        async () => {
          const res = await request({
            port: gwPort,
            host: 'r7.example.com',
            path: '/moved',
            timeoutMs: 2_000,
          }).catch((e: unknown) => ({ status: 0, headers: { location: undefined }, body: String(e) }));
          last = `${res.status} ${JSON.stringify(res.headers)}`;
          return res.status === 302 && String(res.headers.location ?? '').includes('elsewhere.example.com');
        },
        {
          what: 'the edited route served by Envoy',
          timeoutMs: 120_000,
          intervalMs: 100,
          context: () => last,
        },
      );
      const afterEdit = await page();
      assert.deepEqual(fullBuilds(afterEdit), fullBuilds(before), 'no full build for the edit or the echoes');
      assert.ok(
        value(afterEdit, 'convoy_builds_total{result="route"}') > routeBuilds,
        'the route fast path ran',
      );

      // The spec edit was not taken for an echo: its status follows the new generation.
      await w.waitStatus(
        'HTTPRoute',
        'infra',
        'route-7',
        (s, o) => {
          const parent = (s.parents as { conditions: unknown }[] | undefined)?.[0];
          return cond(parent?.conditions, 'Accepted')?.observedGeneration === o.metadata.generation;
        },
        'route-7 status for its new generation',
        300_000,
      );
      // Every route's status is written, and the writer timed its writes' echoes.
      await waitFor(
        async () => value(await page(), 'convoy_status_writes_total{result="written"}') >= ROUTES + 2,
        { what: 'every status written', timeoutMs: 300_000, intervalMs: 1_000 },
      );
      const end = await page();
      assert.ok(value(end, 'convoy_status_echo_lag_seconds_count') >= ROUTES, 'echoes timed');
      const window = value(end, 'convoy_status_write_window');
      assert.ok(window >= 1 && window <= 32, `write window ${window} within [1, 32]`);
      assert.deepEqual(fullBuilds(end), fullBuilds(before), 'no full build from the echoes');
    });
  },
);
