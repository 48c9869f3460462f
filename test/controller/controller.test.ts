import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCounts, startController } from '../support/controller-oracle';
import type { Controller } from '../../src/controller/controller';
import type { XdsCache } from '../../src/xds/cache';
import { TypeUrl } from '../../src/envoy/resources';
import {
  backendService,
  endpointSlice,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  httpsListener,
  parentRef,
  backendRef,
  storeOf,
  tlsSecret,
} from '../support/objects';
import type { ObjectStore } from '../../src/store/store';

const FLEET = 'default/edge';

async function setup() {
  return startController(
    storeOf(
      gatewayClass(),
      gateway('edge', [httpListener('http', 8080), httpsListener('https', 8443, 'a.example.com', 'a-cert')]),
      tlsSecret('a-cert', { hostnames: ['a.example.com'] }),
      ...backendService('web', 80, ['10.0.0.1']),
      httpRoute('web', [{ backendRefs: [backendRef('web', 80)] }], { parentRefs: [parentRef('edge')] }),
    ),
  );
}

function versions(cache: XdsCache, type: TypeUrl): Map<string, string> {
  const snap = cache.snapshot(FLEET);
  assert.ok(snap, 'fleet snapshot exists');
  return new Map([...snap.types[type].entries].map(([name, e]) => [name, e.version]));
}

/** Applies a change and lets the controller build, as the debouncer would. */
async function change(controller: Controller, store: ObjectStore, f: () => void): Promise<void> {
  void store;
  f();
  await controller.settle();
}

describe('Controller', { concurrency: false }, () => {
  test('the first build publishes a snapshot and statuses, and makes the controller ready', async () => {
    const { cache, controller, published } = await setup();
    assert.ok(controller.isReady());
    assert.ok(cache.hasSnapshot(FLEET));
    assert.ok(published.at(-1)!.some((s) => s.kind === 'Gateway'));
  });

  test('changes to Secrets and Services nothing refers to do not trigger builds', async () => {
    const { store, metrics, controller } = await setup();
    const before = await buildCounts(metrics);
    await change(controller, store, () => {
      store.put(tlsSecret('unrelated', { hostnames: ['x.example.com'] }));
      for (const o of backendService('unused', 80, ['10.0.0.9'])) store.put(o);
    });
    assert.deepEqual(await buildCounts(metrics), before);
  });

  test('an endpoint change takes the fast path: only the load assignment changes', async () => {
    const { store, cache, metrics, controller } = await setup();
    const listenersBefore = versions(cache, TypeUrl.Listener);
    const routesBefore = versions(cache, TypeUrl.Route);
    const clustersBefore = versions(cache, TypeUrl.Cluster);
    const claBefore = versions(cache, TypeUrl.Endpoint);
    const before = await buildCounts(metrics);
    await change(controller, store, () =>
      store.put(
        endpointSlice(
          'web-1',
          'web',
          [{ name: 'http', port: 80 }],
          [{ addresses: ['10.0.0.1', '10.0.0.2'] }],
        ),
      ),
    );
    const after = await buildCounts(metrics);
    assert.equal(after.ok ?? 0, before.ok ?? 0, 'no full build');
    assert.equal((after.endpoints ?? 0) - (before.endpoints ?? 0), 1, 'one endpoint refresh');
    assert.deepEqual(versions(cache, TypeUrl.Listener), listenersBefore);
    assert.deepEqual(versions(cache, TypeUrl.Route), routesBefore);
    assert.deepEqual(versions(cache, TypeUrl.Cluster), clustersBefore);
    assert.notDeepEqual(versions(cache, TypeUrl.Endpoint), claBefore);
  });

  test('a valid rotation takes the certificate fast path; a bad certificate rebuilds and is never served, the last good one is', async () => {
    const { store, cache, metrics, controller, published } = await setup();
    const secretsBefore = versions(cache, TypeUrl.Secret);
    const before = await buildCounts(metrics);
    await change(controller, store, () =>
      store.put(tlsSecret('a-cert', { hostnames: ['a.example.com', 'www.a.example.com'] })),
    );
    const afterRotation = await buildCounts(metrics);
    assert.equal(afterRotation.ok, before.ok, 'no full build');
    assert.equal(afterRotation.secrets, (before.secrets ?? 0) + 1, 'certificate fast path');
    const rotated = versions(cache, TypeUrl.Secret);
    assert.deepEqual([...rotated.keys()], [...secretsBefore.keys()], 'same Secret names');
    assert.notDeepEqual(rotated, secretsBefore, 'rotation changed the Secret version');

    await change(controller, store, () =>
      store.put({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'a-cert', namespace: 'default' },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': Buffer.from('garbage').toString('base64'), 'tls.key': 'eA==' },
      }),
    );
    assert.equal((await buildCounts(metrics)).ok, (afterRotation.ok ?? 0) + 1, 'invalid: full build');
    const gw = published.at(-1)!.find((s) => s.kind === 'Gateway')!;
    const listener = (
      gw.status.listeners as { name: string; conditions: { type: string; reason: string }[] }[]
    ).find((l) => l.name === 'https')!;
    assert.equal(listener.conditions.find((c) => c.type === 'ResolvedRefs')?.reason, 'InvalidCertificateRef');
    assert.equal(
      listener.conditions.find((c) => c.type === 'convoy.dev/ServingLastGoodCertificate')?.reason,
      'LastGoodCertificate',
    );
    // The rotated (last good) version is still served, byte for byte: the bad one never is.
    assert.deepEqual(versions(cache, TypeUrl.Secret), rotated, 'the last good certificate is served');
    assert.ok(versions(cache, TypeUrl.Listener).has('http-8080'), 'the HTTP listener still serves');
  });

  test('a Service becomes relevant once a route refers to it', async () => {
    const { store, cache, controller } = await setup();
    await change(controller, store, () => {
      for (const o of backendService('api', 80, ['10.0.0.5'])) store.put(o);
    });
    assert.ok(!versions(cache, TypeUrl.Cluster).has('default/api/80'));
    await change(controller, store, () =>
      store.put(
        httpRoute('api', [{ backendRefs: [backendRef('api', 80)] }], { parentRefs: [parentRef('edge')] }),
      ),
    );
    assert.ok(versions(cache, TypeUrl.Cluster).has('default/api/80'));
    await change(controller, store, () =>
      store.put(endpointSlice('api-1', 'api', [{ name: 'http', port: 80 }], [{ addresses: ['10.0.0.6'] }])),
    );
    const cla = cache.snapshot(FLEET)!.types[TypeUrl.Endpoint].entries.get('default/api/80');
    assert.ok(cla && cla.bytes.includes(Buffer.from('10.0.0.6')), 'new endpoint served');
  });

  test('malformed objects never crash a build; the last good snapshot stays', async () => {
    const { store, cache, controller } = await setup();
    const listeners = versions(cache, TypeUrl.Listener);
    await change(controller, store, () =>
      store.put({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'junk', namespace: 'default' },
        spec: { parentRefs: 'not-a-list', rules: [{ matches: 7, backendRefs: [null] }] },
      }),
    );
    assert.ok(controller.isReady());
    assert.deepEqual(versions(cache, TypeUrl.Listener), listeners);
  });
  test('an endpoint turning loopback takes a full build: the route reports it and Envoy never gets it', async () => {
    const { store, cache, metrics, controller, published } = await setup();
    const resolvedRefs = () => {
      const route = published.at(-1)!.find((s) => s.kind === 'HTTPRoute' && s.metadata.name === 'web')!;
      const parents = route.status.parents as {
        conditions: { type: string; status: string; message: string }[];
      }[];
      return parents[0].conditions.find((c) => c.type === 'ResolvedRefs')!;
    };
    const served = (address: string) =>
      [...cache.snapshot(FLEET)!.types[TypeUrl.Endpoint].entries.values()].some((e) =>
        e.bytes.includes(Buffer.from(address)),
      );
    assert.equal(resolvedRefs().status, 'True');
    const before = await buildCounts(metrics);
    const slice = (address: string) =>
      endpointSlice('web-1', 'web', [{ name: 'http', port: 80 }], [{ addresses: [address] }]);
    await change(controller, store, () => store.put(slice('127.0.0.1')));
    assert.equal((await buildCounts(metrics)).ok - before.ok, 1, 'a full build, not the endpoint fast path');
    assert.equal(resolvedRefs().status, 'False');
    assert.match(resolvedRefs().message, /127\.0\.0\.1 is a loopback address/);
    assert.ok(!served('127.0.0.1') && !served('10.0.0.1'), 'the refused backend has no endpoints at all');
    await change(controller, store, () => store.put(slice('10.0.0.7')));
    assert.equal(resolvedRefs().status, 'True');
    assert.ok(served('10.0.0.7') && served('10.0.0.1'));
  });
});
