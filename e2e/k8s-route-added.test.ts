import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as https from 'node:https';
import * as path from 'node:path';
import {
  createCa,
  freePort,
  issueCert,
  request,
  startEchoBackend,
  waitFor,
  type Backend,
  type CaFiles,
} from './harness';
import type { ConvoyProcess } from './harness';
import { GW_API, K8sWorld, cond, convoyGateway, loopbackService, type KObject } from './cluster/k8s-world';

/**
 * A tenant's hostname added one object at a time against a real API server, as `kubectl apply`
 * of several files does: each object reaches Convoy in its own debounce window (the test waits
 * for Convoy to have handled one before it creates the next). Each window takes a fast path
 * (docs/architecture.md §8), so `convoy_full_builds_total` does not grow, and a real Envoy serves
 * the route: a Secret nothing refers to yet, then the ListenerSet (ListenerSet fast path), then
 * the HTTPRoute alone (route-creation fast path); and in the other order, the route first (it
 * names a ListenerSet that does not exist yet), whose set then attaches it when it arrives. A
 * ListenerSet created before its Secret is replaced when the Secret arrives, and a ListenerSet
 * deleted with its route and Secret is removed (the removal fast paths): its hostname is no
 * longer served while a kept-alive connection to another hostname stays up.
 */

const LS_REF = { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' };

describe('new routes and ListenerSets one object at a time, in Kubernetes mode', { timeout: 300_000 }, () => {
  let w: K8sWorld;
  let ca: CaFiles;
  let backend: Backend;
  let gwPort: number;
  let convoy: ConvoyProcess;

  /** The value of a counter series of Convoy's /metrics (0 when the series is absent). */
  const counter = async (name: string, label: string, value: string): Promise<number> => {
    const page = (await convoy.get('/metrics')).body;
    const m = page.match(new RegExp(`^${name}\\{${label}="${value}"\\} (\\d+)`, 'm'));
    return m ? Number(m[1]) : 0;
  };
  /** Every convoy_full_builds_total series, as `reason=count` (the fallbacks and their reasons). */
  const fullBuilds = async (): Promise<string[]> => {
    const page = (await convoy.get('/metrics')).body;
    return [...page.matchAll(/^convoy_full_builds_total\{reason="([^"]+)"\} (\d+)/gm)].map(
      (m) => `${m[1]}=${m[2]}`,
    );
  };

  const secret = (name: string, host: string): KObject => {
    const leaf = issueCert(ca, { name, dnsNames: [host] });
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: 'infra' },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from(leaf.cert).toString('base64'),
        'tls.key': Buffer.from(leaf.key).toString('base64'),
      },
    } as KObject;
  };
  const listenerSet = (name: string, host: string): KObject => ({
    apiVersion: GW_API,
    kind: 'ListenerSet',
    metadata: { name, namespace: 'infra' },
    spec: {
      parentRef: { name: 'gw' },
      listeners: [
        {
          name: 'https',
          protocol: 'HTTPS',
          port: gwPort,
          hostname: host,
          tls: { mode: 'Terminate', certificateRefs: [{ name: `${name}-cert` }] },
        },
      ],
    },
  });
  const route = (name: string, set: string, prefix: string): KObject => ({
    apiVersion: GW_API,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'infra' },
    spec: {
      parentRefs: [{ ...LS_REF, name: set }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: prefix } }],
          backendRefs: [{ name: 'tenant', port: backend.port }],
        },
      ],
    },
  });

  /** Waits until the real Envoy answers `prefix` on `host` (SNI and Host) from the backend. */
  const served = async (host: string, prefix: string): Promise<void> => {
    let last = '';
    await waitFor(
      async () => {
        const r = await request({
          port: gwPort,
          host,
          path: `${prefix}/x`,
          tls: { servername: host },
          timeoutMs: 2_000,
        }).catch((e: unknown) => ({ status: 0, body: String(e) }) as const);
        last = `${r.status} ${r.body.slice(0, 100)}`;
        return r.status === 200;
      },
      {
        what: `${host}${prefix} served`,
        timeoutMs: 60_000,
        intervalMs: 200,
        context: () => `last answer: ${last}\n${convoy.logContext(20)}`,
      },
    );
  };

  /** Resolves whether a TLS handshake for SNI `host` on the Gateway port completes. */
  const handshakes = (host: string): Promise<boolean> =>
    request({ port: gwPort, host, path: '/', tls: { servername: host }, timeoutMs: 2_000 }).then(
      () => true,
      () => false,
    );

  /** Waits until the ListenerSet's listener counts `routes` attached routes (Convoy built it). */
  const attached = (set: string, routes: number) =>
    w.waitStatus(
      'ListenerSet',
      'infra',
      set,
      (s) =>
        cond(s.conditions, 'Accepted')?.status === 'True' &&
        ((s.listeners as { attachedRoutes: number }[] | undefined) ?? [])[0]?.attachedRoutes === routes,
      `ListenerSet ${set} accepted with ${routes} route(s)`,
      60_000,
    );

  before(async () => {
    w = await K8sWorld.create();
    ca = createCa(path.join(w.dir, 'pki'));
    await w.namespace('infra');
    backend = await startEchoBackend('tenant');
    gwPort = await freePort();
    await w.apply(loopbackService('tenant', 'infra', backend.port));
    await w.apply(secret('gw-cert', 'gw.example.com'));
    await w.apply(
      convoyGateway('gw', 'infra', [
        {
          name: 'https',
          protocol: 'HTTPS',
          port: gwPort,
          hostname: 'gw.example.com',
          tls: { mode: 'Terminate', certificateRefs: [{ name: 'gw-cert' }] },
        },
      ]),
    );
    convoy = await w.startConvoy('convoy', ['--enable-external-name-services']);
    await w.startEnvoy(convoy, 'infra/gw');
    await w.waitStatus(
      'Gateway',
      'infra',
      'gw',
      (s) => cond(s.conditions, 'Programmed')?.status === 'True',
      'Gateway programmed',
      60_000,
    );
  });
  after(async () => {
    await backend?.close();
    await w?.dispose();
  });

  test('Secret, then ListenerSet, then HTTPRoute: each its own fast path, served, no full build', async () => {
    const builds = await fullBuilds();
    const created = await counter('convoy_builds_total', 'result', 'route_created');
    await w.apply(secret('one-cert', 'one.example.com'));
    // The Secret is referenced by nothing yet: Convoy ignores it. The set takes its fast path.
    await w.apply(listenerSet('one', 'one.example.com'));
    await attached('one', 0);
    await w.apply(route('one', 'one', '/one'));
    await attached('one', 1);
    await served('one.example.com', '/one');
    assert.deepEqual(await fullBuilds(), builds, 'no fallback to a full build');
    assert.equal(await counter('convoy_builds_total', 'result', 'route_created'), created + 1);
    const status = (await w.get('HTTPRoute', 'infra', 'one'))!.status as {
      parents: { conditions: unknown }[];
    };
    assert.equal(cond(status.parents[0].conditions, 'Accepted')?.status, 'True');
  });

  test('a second route on an existing listener, alone: route-creation fast path, served', async () => {
    const builds = await fullBuilds();
    await w.apply(route('one-more', 'one', '/more'));
    await attached('one', 2);
    await served('one.example.com', '/more');
    assert.deepEqual(await fullBuilds(), builds, 'no fallback to a full build');
  });

  test('HTTPRoute first, naming a ListenerSet not created yet: the set attaches it on its fast path', async () => {
    const builds = await fullBuilds();
    const sets = await counter('convoy_builds_total', 'result', 'listenerset');
    const created = await counter('convoy_builds_total', 'result', 'route_created');
    await w.apply(route('two', 'two', '/two'));
    // It names nothing of Convoy's yet: the route-creation fast path records it and changes nothing.
    await waitFor(async () => (await counter('convoy_builds_total', 'result', 'route_created')) > created, {
      what: 'the route handled on its own',
      timeoutMs: 30_000,
    });
    await w.apply(secret('two-cert', 'two.example.com'));
    await w.apply(listenerSet('two', 'two.example.com'));
    await attached('two', 1);
    await served('two.example.com', '/two');
    assert.deepEqual(await fullBuilds(), builds, 'no fallback to a full build');
    assert.ok(
      (await counter('convoy_builds_total', 'result', 'listenerset')) > sets,
      'ListenerSet fast path',
    );
  });

  test('ListenerSet first, its Secret last: the set is replaced when the Secret arrives, served', async () => {
    // A set created in the same second as `two` sorts before it (by name), which no fast path
    // appends (test/controller/full-build-reasons.test.ts): that, not load, gave the fallbacks this
    // case was once seen to take. `three` is created in a later second than `two`.
    const two = await w.get('ListenerSet', 'infra', 'two');
    const createdTwo = Date.parse(String(two?.metadata.creationTimestamp));
    while (Date.now() < createdTwo + 1_100) await new Promise((r) => setTimeout(r, 100));
    const builds = await fullBuilds();
    const fast = async () =>
      (await counter('convoy_builds_total', 'result', 'listenerset_replaced')) +
      (await counter('convoy_builds_total', 'result', 'mixed'));
    const before = await fast();
    await w.apply(listenerSet('three', 'three.example.com'));
    await w.waitStatus(
      'ListenerSet',
      'infra',
      'three',
      (s) => cond(s.conditions, 'Accepted')?.status === 'False',
      'ListenerSet three not accepted (its certificate is missing)',
      60_000,
    );
    // The route and the Secret land in one debounce window or in two, depending on load: either
    // way the fast paths take them (a mixed window runs them in turn: docs/architecture.md §8).
    await w.apply(route('three', 'three', '/three'));
    await w.apply(secret('three-cert', 'three.example.com'));
    await attached('three', 1);
    await served('three.example.com', '/three');
    assert.deepEqual(await fullBuilds(), builds, 'no fallback to a full build');
    assert.ok((await fast()) > before, 'the replacement fast path, alone or in a mixed window');
  });

  test('a ListenerSet deleted with its route and Secret: refused, while another connection stays up', async () => {
    const builds = await fullBuilds();
    const removed = await counter('convoy_builds_total', 'result', 'listenerset_removed');
    // A kept-alive connection to one.example.com, opened before the deletion.
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = https.get(
          {
            host: '127.0.0.1',
            port: gwPort,
            path: '/one/x',
            servername: 'one.example.com',
            headers: { host: 'one.example.com' },
            rejectUnauthorized: false,
            agent,
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
          },
        );
        req.on('error', reject);
      });
    try {
      assert.equal((await get()).status, 200);
      await w.delete('HTTPRoute', 'infra', 'three');
      await w.delete('ListenerSet', 'infra', 'three');
      await w.delete('Secret', 'infra', 'three-cert');
      // Refused for its SNI while Envoy answers another hostname (no mere timeout under load).
      await waitFor(
        async () => !(await handshakes('three.example.com')) && (await handshakes('two.example.com')),
        {
          what: 'three.example.com no longer served',
          timeoutMs: 60_000,
          intervalMs: 200,
          context: () => convoy.logContext(20),
        },
      );
      const after = await get();
      assert.deepEqual(after, { status: 200, reused: true }, "the other hostname's connection stayed up");
      await served('two.example.com', '/two');
      assert.deepEqual(await fullBuilds(), builds, 'no fallback to a full build');
      assert.ok((await counter('convoy_builds_total', 'result', 'listenerset_removed')) > removed);
    } finally {
      agent.destroy();
    }
  });
});
