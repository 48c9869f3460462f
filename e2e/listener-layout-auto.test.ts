import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import { request, waitFor, type EchoResponse } from './harness';
import { GATEWAY, GATEWAY_API, World, gatewayDocs, httpsListener, type Variant } from './support/world';

/**
 * The `auto` listener layout (`convoy serve --listener-layout auto`, docs/xds.md §16) through a
 * real Envoy in file mode, for both ADS variants, with a threshold of 3 TLS listeners: a port with
 * two hostnames keeps the chains layout; a third hostname switches it to SNI dispatch; removing it
 * switches it back. Before and after each switch every hostname is served by its own backend with
 * its own certificate. What a switch costs is measured, not hidden: the port's filter chains are
 * replaced, so Envoy drains the connections they carry (drain time 5 s here), and the test
 * asserts that a kept-alive connection opened before the switch is closed by the drain, while new
 * connections are served throughout.
 */

const API = GATEWAY_API;
const THRESHOLD = 3;

for (const variant of ['delta', 'sotw'] as Variant[]) {
  describe(`auto listener layout through real Envoy (${variant} ADS)`, { concurrency: false }, () => {
    let w: World;
    const hostnames = ['one.example.net', 'two.example.net', 'three.example.net'];
    const backendOf = (h: string) => h.split('.')[0];
    const listenerOf = (h: string) => httpsListener(backendOf(h), h, w.ports.https, `cert-${backendOf(h)}`);

    /** Asks `hostname` on a new TLS connection; its backend and certificate, or why it failed. */
    const ask = async (hostname: string, agent?: https.Agent) => {
      try {
        const r = await request({
          port: w.ports.https,
          host: hostname,
          path: '/',
          tls: { servername: hostname },
          ...(agent ? { agent } : {}),
        });
        return {
          backend: r.status === 200 ? r.json<EchoResponse>().backend : `status ${r.status}`,
          certificate: r.peerCertificate?.subjectAltName ?? '',
          connection: String(r.headers.connection ?? ''),
        };
      } catch (err) {
        return { backend: `error ${(err as Error).message}`, certificate: '', connection: '' };
      }
    };

    /** Asserts each hostname is served by its backend with its own certificate. */
    const assertServed = async (names: string[], when: string) => {
      for (const h of names) {
        const r = await ask(h);
        assert.equal(r.backend, backendOf(h), `${when}: ${h} served by its backend`);
        assert.ok(
          r.certificate.includes(`DNS:${h}`),
          `${when}: ${h} presents its certificate: ${r.certificate}`,
        );
      }
    };

    /** The port's internal listeners in Envoy (SNI dispatch), by name. */
    const internalListeners = async (): Promise<string[]> =>
      (await w.envoy.admin('/listeners')).body
        .split('\n')
        .filter((l) => l.startsWith(`https-${w.ports.https}/`))
        .map((l) => l.split('::')[0]);

    const listenerSetDocs = (hostname: string) => {
      const name = backendOf(hostname);
      return [
        w.tlsSecretDoc(`cert-${name}`, hostname),
        {
          apiVersion: API,
          kind: 'ListenerSet',
          metadata: { name, namespace: 'default' },
          spec: {
            parentRef: { name: GATEWAY.name },
            listeners: [httpsListener('https', hostname, w.ports.https, `cert-${name}`)],
          },
        },
        {
          apiVersion: API,
          kind: 'HTTPRoute',
          metadata: { name, namespace: 'default' },
          spec: {
            parentRefs: [{ name, kind: 'ListenerSet', sectionName: 'https' }],
            rules: [{ backendRefs: [{ name, port: 80 }] }],
          },
        },
      ];
    };

    /**
     * Keeps one connection to `hostname` alive; returns a promise that settles when Envoy closes it
     * (with the time from `since()`), and the agent to reuse it.
     */
    const keptAlive = async (hostname: string) => {
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
      const sockets: Socket[] = [];
      agent.on('free', (s: Socket) => {
        if (!sockets.includes(s)) sockets.push(s);
      });
      const first = await ask(hostname, agent);
      assert.equal(first.backend, backendOf(hostname));
      assert.equal(sockets.length, 1, 'the connection is kept alive');
      const closed = new Promise<void>((resolve) => sockets[0].once('close', () => resolve()));
      return { agent, sockets, closed };
    };

    /**
     * Sends requests to `hostname`, one new connection after the other, until `stop` resolves;
     * returns how many were served and the answers that were not.
     */
    /** What a client sees when Envoy resets its connection (see the switch tests). */
    const RESET =
      /^error (?:(?:read|write) ECONNRESET|socket hang up|Client network socket disconnected before secure TLS connection was established)$/;

    const traffic = (hostname: string, stop: Promise<unknown>) => {
      let done = false;
      void stop.then(() => (done = true));
      return (async () => {
        let served = 0;
        const failed: string[] = [];
        while (!done) {
          const r = await ask(hostname);
          if (r.backend === backendOf(hostname)) served++;
          else failed.push(r.backend);
        }
        return { served, failed };
      })();
    };

    const drainStats = async () => {
      const s = await w.envoy.stats('listener_manager');
      return {
        inPlaceUpdated: Number(s.get('listener_manager.listener_in_place_updated') ?? 0),
        added: Number(s.get('listener_manager.listener_added') ?? 0),
        removed: Number(s.get('listener_manager.listener_removed') ?? 0),
      };
    };

    before(async () => {
      w = await World.create(variant);
      for (const h of hostnames) await w.addBackend(backendOf(h));
      w.write('00-gateway.yaml', gatewayDocs(hostnames.slice(0, 2).map(listenerOf), { listenerSets: true }));
      w.write(
        '01-secrets.yaml',
        hostnames.slice(0, 2).map((h) => w.tlsSecretDoc(`cert-${backendOf(h)}`, h)),
      );
      w.write(
        '02-services.yaml',
        hostnames.flatMap((h) => w.serviceDocs(backendOf(h))),
      );
      w.write(
        '03-routes.yaml',
        hostnames.slice(0, 2).map((h) => ({
          apiVersion: API,
          kind: 'HTTPRoute',
          metadata: { name: backendOf(h), namespace: 'default' },
          spec: {
            parentRefs: [{ name: GATEWAY.name, sectionName: backendOf(h) }],
            rules: [{ backendRefs: [{ name: backendOf(h), port: 80 }] }],
          },
        })),
      );
      await w.startConvoy(['--listener-layout', 'auto', '--listener-layout-threshold', String(THRESHOLD)]);
      await w.startEnvoy();
      let last: unknown;
      await waitFor(async () => (last = (await ask(hostnames[0])).backend) === 'one', {
        what: 'the first hostname served',
        timeoutMs: 30_000,
        context: () => `last answer: ${String(last)}\n${w.envoy.logContext(5)}\n${w.convoy.logContext(20)}`,
      });
    });

    after(async () => {
      await w?.dispose();
    });

    test('below the threshold the port keeps its chains, and each hostname is served with its certificate', async () => {
      await w.waitEnvoySynced('the first configuration applied');
      assert.deepEqual(await internalListeners(), [], 'no internal listener below the threshold');
      await assertServed(hostnames.slice(0, 2), 'chains');
    });

    for (const [direction, change, expectInternal] of [
      ['up', (): void => w.write('04-three.yaml', listenerSetDocs(hostnames[2])), THRESHOLD],
      ['down', (): void => w.remove('04-three.yaml'), 0],
    ] as const) {
      test(`crossing the threshold ${direction}: every hostname served before and after; the switch drains the port's open connections`, async (t) => {
        const served = direction === 'up' ? hostnames.slice(0, 2) : hostnames;
        const after = direction === 'up' ? hostnames : hostnames.slice(0, 2);
        await assertServed(served, `before switching ${direction}`);
        const held = await keptAlive(hostnames[0]);
        const before = await drainStats();
        let switched!: () => void;
        const switchedAt = new Promise<void>((resolve) => (switched = resolve));
        const during = traffic(hostnames[1], switchedAt);
        const startedAt = Date.now();
        try {
          change();
          let seen: string[] = [];
          await waitFor(async () => (seen = await internalListeners()).length === expectInternal, {
            what: `Envoy switched the port ${direction}`,
            timeoutMs: 30_000,
            context: () => `internal listeners: ${seen.join(', ')}`,
          });
          await w.waitEnvoySynced(`the switch ${direction} applied`);
          switched();
          const load = await during;
          await assertServed(after, `after switching ${direction}`);
          // The kept-alive connection of a hostname that did not change is drained by the switch.
          await waitFor(async () => (held.sockets[0].destroyed ? true : undefined), {
            what: 'the drain closes the connection opened before the switch',
            timeoutMs: 60_000,
          });
          await held.closed;
          const closedAfterMs = Date.now() - startedAt;
          const stats = await drainStats();
          t.diagnostic(
            `switch ${direction}: kept-alive connection closed ${closedAfterMs} ms after the change; ` +
              `listeners in-place updated +${stats.inPlaceUpdated - before.inPlaceUpdated}, ` +
              `added +${stats.added - before.added}, removed +${stats.removed - before.removed}; ` +
              `requests on new connections during the switch: ${load.served} served, ` +
              `${load.failed.length} not (${[...new Set(load.failed)].join('; ')})`,
          );
          assert.equal(
            stats.inPlaceUpdated - before.inPlaceUpdated,
            1,
            "the port's Listener was updated in place",
          );
          // A switch may reset a new connection that arrives while Envoy still warms the internal
          // listeners the new front chains forward to (seen under load, delta and SotW: 1 of 19–23; docs/xds.md
          // §16). It must never answer from the wrong backend or with another hostname's
          // certificate, and most requests during the switch are served.
          assert.deepEqual(
            load.failed.filter((f) => !RESET.test(f)),
            [],
            'a request on a new connection during the switch was answered wrongly',
          );
          assert.ok(load.served > load.failed.length, `only ${load.served} served during the switch`);
          // A new connection after the switch is served again (the agent opens one).
          assert.equal((await ask(hostnames[0], held.agent)).backend, 'one');
        } finally {
          switched();
          held.agent.destroy();
        }
      });
    }

    test('a hostname removed below the threshold keeps the chains layout and no connection of another hostname is closed', async () => {
      // Back at two hostnames: removing one more stays below the threshold of 3.
      const held = await keptAlive(hostnames[1]);
      try {
        w.write('00-gateway.yaml', gatewayDocs([hostnames[1]].map(listenerOf), { listenerSets: true }));
        await waitFor(async () => ((await ask(hostnames[0])).backend === 'one' ? undefined : true), {
          what: 'the first hostname removed',
          timeoutMs: 30_000,
        });
        await w.waitEnvoySynced('the removal applied');
        assert.deepEqual(await internalListeners(), []);
        assert.equal((await ask(hostnames[1], held.agent)).backend, 'two');
        assert.equal(held.sockets.length, 1, 'the other hostname kept its connection');
      } finally {
        held.agent.destroy();
      }
    });
  });
}
