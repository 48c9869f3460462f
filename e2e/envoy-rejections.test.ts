import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { request, waitFor, type EchoResponse } from './harness';
import { GATEWAY, World, condition, gatewayDocs, listenerStatus, type Variant } from './support/world';
import type { ObjectStatusEntry } from './support/world';

/**
 * Issue 10 row 12 and issue 16: a listener whose port another process holds is rejected by Envoy
 * (it cannot bind), and the status says so instead of Programmed=True; the other listeners keep
 * serving; once the port is free and the Gateway is touched, Convoy offers the listener again and
 * the status recovers. Real Envoy, file mode, both ADS variants.
 */

const API = 'gateway.networking.k8s.io/v1';
const REJECTED = 'convoy.dev/EnvoyRejected';
/** Generous: an Envoy NACK, a debounce and a status publication, on a busy machine. */
const DEADLINE_MS = 60_000;

function worldDocs(w: World, labels: Record<string, string> = {}): object[] {
  return [
    ...gatewayDocs(
      [
        { name: 'http', protocol: 'HTTP', port: w.ports.http },
        { name: 'blocked', protocol: 'HTTP', port: w.ports.https },
      ],
      { labels },
    ),
    {
      apiVersion: API,
      kind: 'HTTPRoute',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        parentRefs: [{ name: GATEWAY.name }],
        hostnames: ['www.example.com'],
        rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
      },
    },
  ];
}

/** Holds 127.0.0.1:port (Envoy binds its listeners there in the World) until closed. */
async function occupy(port: number): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return server;
}

for (const variant of ['delta', 'sotw'] as Variant[]) {
  describe(`a listener Envoy rejects (${variant} ADS)`, { concurrency: false }, () => {
    let w: World;
    let squatter: net.Server | undefined;

    const gatewayStatus = async (predicate: (s: ObjectStatusEntry) => boolean, what: string) => {
      let last: ObjectStatusEntry | undefined;
      return waitFor(
        async () => {
          last = await w.statusOf('Gateway', GATEWAY.name);
          return last && predicate(last) ? last : undefined;
        },
        {
          what,
          timeoutMs: DEADLINE_MS,
          context: () => `last status: ${JSON.stringify(last, null, 1)}\n${w.convoy.logContext(20)}`,
        },
      );
    };
    const listenerCondition = (s: ObjectStatusEntry, listener: string, type: string) =>
      condition(listenerStatus(s, listener)?.conditions, type);
    const web = async (port: number) => {
      const r = await request({ port, host: 'www.example.com', path: '/' });
      return r.status === 200 ? r.json<EchoResponse>().backend : `status ${r.status}`;
    };

    before(async () => {
      w = await World.create(variant);
      await w.addBackend('web');
      squatter = await occupy(w.ports.https);
      w.write('00-gateway.yaml', worldDocs(w));
      w.write('01-services.yaml', w.serviceDocs('web'));
      await w.startConvoy();
      await w.startEnvoy();
    });

    after(async () => {
      await new Promise((r) => (squatter ? squatter.close(r) : r(undefined)));
      await w?.dispose();
    });

    test('the listener on a taken port is not programmed, says why, and the others serve', async () => {
      const gw = await gatewayStatus(
        (s) => listenerCondition(s, 'blocked', 'Programmed')?.status === 'False',
        'the blocked listener to be reported not programmed',
      );
      const programmed = listenerCondition(gw, 'blocked', 'Programmed')!;
      assert.equal(programmed.reason, 'Invalid');
      assert.match(
        programmed.message ?? '',
        /^rejected by 1 of 1 Envoys of the fleet: .*Address already in use/,
      );
      const rejected = listenerCondition(gw, 'blocked', REJECTED);
      assert.equal(rejected?.status, 'True');
      assert.match(
        rejected?.message ?? '',
        new RegExp(
          `^Listener http-${w.ports.https} rejected by 1 of 1 Envoys of the fleet: .*Address already in use`,
        ),
      );
      assert.equal(listenerCondition(gw, 'http', 'Programmed')?.status, 'True');
      assert.equal(listenerCondition(gw, 'http', REJECTED), undefined);
      // The Gateway tells, and stays programmed: its other listener serves.
      assert.equal(condition(gw.status.conditions, REJECTED)?.status, 'True');
      assert.equal(condition(gw.status.conditions, 'Programmed')?.status, 'True');

      assert.equal(
        await waitFor(async () => ((await web(w.ports.http)) === 'web' ? 'web' : undefined), {
          what: 'traffic on the other listener',
          timeoutMs: DEADLINE_MS,
          context: () => w.envoy.logContext(20),
        }),
        'web',
      );
      const metrics = (await w.convoy.get('/metrics')).body;
      assert.match(
        metrics,
        new RegExp(
          `convoy_xds_nacks_total\\{type="Listener",fleet="${GATEWAY.namespace}/${GATEWAY.name}"\\} [1-9]`,
        ),
      );
      const debug = await w.convoy.getJson<{
        rejections: { fleet: string; resources: { name: string }[] }[];
      }>('/debug/xds');
      assert.deepEqual(
        debug.rejections.map((f) => [f.fleet, f.resources.map((r) => r.name)]),
        [[`${GATEWAY.namespace}/${GATEWAY.name}`, [`http-${w.ports.https}`]]],
      );
    });

    test('once the port is free, touching the Gateway offers the listener again and it recovers', async () => {
      await new Promise((r) => squatter!.close(r));
      squatter = undefined;
      // Envoy never retries a rejected listener by itself; a change to its Gateway makes Convoy offer it again.
      w.write('00-gateway.yaml', worldDocs(w, { 'example.com/retry': '1' }));
      const gw = await gatewayStatus(
        (s) =>
          listenerCondition(s, 'blocked', 'Programmed')?.status === 'True' &&
          condition(s.status.conditions, REJECTED) === undefined,
        'the blocked listener to recover',
      );
      assert.equal(listenerCondition(gw, 'blocked', REJECTED), undefined);
      assert.equal(listenerCondition(gw, 'http', 'Programmed')?.status, 'True');
      assert.equal(
        await waitFor(async () => ((await web(w.ports.https)) === 'web' ? 'web' : undefined), {
          what: 'traffic on the recovered listener',
          timeoutMs: DEADLINE_MS,
          context: () => w.envoy.logContext(20),
        }),
        'web',
      );
      assert.equal(await web(w.ports.http), 'web');
    });
  });
}
