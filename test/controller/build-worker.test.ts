/**
 * The build thread (docs/architecture.md §14): a Controller in a worker thread, its snapshots
 * delivered as FleetDeltas into a MirrorCache, must give the ADS server exactly what the Controller
 * on the serving thread gives it (every name, version and byte), the same statuses (bad input
 * included), and keep serving the last snapshots when the thread dies.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { Controller } from '../../src/controller/controller';
import { BuildWorkerHost } from '../../src/controller/build-worker-host';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { silentLogger } from '../../src/observability/logger';
import { ObjectStore } from '../../src/store/store';
import type { KubeObject } from '../../src/store/objects';
import type { ObjectStatus } from '../../src/status/types';
import { StatusView } from '../../src/status/view';
import { XdsCache } from '../../src/xds/cache';
import { MirrorCache, type SnapshotSource } from '../../src/xds/mirror-cache';
import { PUSH_ORDER } from '../../src/xds/served-types';
import { TypeUrl } from '../../src/envoy/resources';
import {
  CONTROLLER,
  backendRef,
  backendService,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  httpsListener,
  listenerSet,
  parentRef,
  tlsSecret,
} from '../support/objects';

const ENTRY = path.join(__dirname, '..', '..', 'src', 'cli', 'build-thread.js');
const NOW = new Date('2026-01-02T03:04:05Z');

function world(): KubeObject[] {
  return [
    gatewayClass(),
    gateway('edge', [httpListener('http', 8080), httpsListener('https', 8443, 'a.example.com', 'a-cert')], {
      allowedListeners: { namespaces: { from: 'Same' } },
    }),
    tlsSecret('a-cert', { hostnames: ['a.example.com'] }),
    listenerSet('team-b', { name: 'edge' }, [httpsListener('b', 9443, 'b.example.com', 'b-cert')]),
    tlsSecret('b-cert', { hostnames: ['b.example.com'] }),
    ...backendService('app', 80, ['192.0.2.10', '192.0.2.11']),
    httpRoute('r1', [{ backendRefs: [backendRef('app', 80)] }], { parentRefs: [parentRef('edge')] }),
    httpRoute(
      'r2',
      [{ matches: [{ path: { type: 'PathPrefix', value: '/b' } }], backendRefs: [backendRef('app', 80)] }],
      {
        parentRefs: [parentRef('team-b', { kind: 'ListenerSet', sectionName: 'b' })],
      },
    ),
    // Bad input: a missing backend and a parent that does not exist get their conditions, nothing else.
    httpRoute('missing-backend', [{ backendRefs: [backendRef('nope', 80)] }], {
      parentRefs: [parentRef('edge')],
    }),
    httpRoute('no-parent', [{ backendRefs: [backendRef('app', 80)] }], { parentRefs: [parentRef('ghost')] }),
  ];
}

interface Side {
  store: ObjectStore;
  cache: SnapshotSource;
  metrics: ConvoyMetrics;
  statuses: () => ObjectStatus[];
  settle(): Promise<void>;
  stop(): unknown;
}

function mainSide(objects: KubeObject[]): Side {
  const store = new ObjectStore();
  for (const o of objects) store.put(o);
  store.registerSource('test');
  store.markSynced('test');
  const metrics = new ConvoyMetrics();
  const cache = new XdsCache({ logger: silentLogger(), metrics });
  let last: ObjectStatus[] = [];
  const controller = new Controller({
    store,
    cache,
    statusSinks: [new StatusView((s) => (last = s))],
    logger: silentLogger(),
    metrics,
    controllerName: CONTROLLER,
    translate: { bindAddress: '127.0.0.1' },
    debounceMs: 1,
    maxDelayMs: 5,
    now: () => NOW,
  });
  controller.start();
  return {
    store,
    cache,
    metrics,
    statuses: () => last,
    settle: () => controller.settle(),
    stop: () => controller.stop(),
  };
}

function workerSide(objects: KubeObject[]): Side & { host: BuildWorkerHost } {
  const store = new ObjectStore();
  for (const o of objects) store.put(o);
  store.registerSource('test');
  store.markSynced('test');
  const metrics = new ConvoyMetrics();
  const cache = new MirrorCache(silentLogger());
  let last: ObjectStatus[] = [];
  const host = new BuildWorkerHost({
    entry: ENTRY,
    init: {
      controller: { controllerName: CONTROLLER, debounceMs: 1, maxDelayMs: 5 },
      translate: { bindAddress: '127.0.0.1' },
      logLevel: 'silent',
      fleetModels: false,
    },
    store,
    cache,
    statusSinks: [new StatusView((s) => (last = s))],
    logger: silentLogger(),
    metrics,
    restartDelayMs: 10,
  });
  host.start();
  return {
    host,
    store,
    cache,
    metrics,
    statuses: () => last,
    settle: () => host.settle(),
    stop: () => host.stop(),
  };
}

/** Every fleet's every type: set version, and each resource's name, version and bytes (hex). */
function served(cache: SnapshotSource): unknown {
  return cache.fleets().map((fleet) => {
    const snap = cache.snapshot(fleet)!;
    return {
      fleet,
      eds: [...snap.clusterEds],
      types: PUSH_ORDER.map((t) => ({
        t,
        version: snap.types[t].version,
        entries: snap.types[t].sorted.map((e) => [e.name, e.version, e.bytes.toString('hex')]),
      })),
    };
  });
}

/** Statuses without their timestamps (each side stamps its own clock), sorted by object. */
function statusText(statuses: ObjectStatus[]): string[] {
  return statuses.map((s) => JSON.stringify(s).replace(/"lastTransitionTime":"[^"]*"/g, '')).sort();
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('build thread', () => {
  const sides: Side[] = [];
  after(async () => {
    for (const s of sides) await s.stop();
  });

  test('serves the same bytes, versions and statuses as the serving-thread Controller, through changes', async () => {
    const main = mainSide(world());
    const worker = workerSide(world());
    sides.push(main, worker);
    await until(() => worker.host.isReady(), 'the build thread to be ready');
    await main.settle();
    await worker.settle();
    const fleet = main.cache.snapshot(main.cache.fleets()[0])!;
    assert.equal(fleet.types[TypeUrl.Secret].entries.size, 2, 'both certificates are served');
    assert.ok(
      statusText(main.statuses()).some((s) => s.includes('BackendNotFound')),
      'bad input has its condition',
    );
    assert.deepEqual(served(worker.cache), served(main.cache));
    assert.deepEqual(statusText(worker.statuses()), statusText(main.statuses()));

    const changes: ((s: ObjectStore) => void)[] = [
      // route edit (fast path), certificate rotation, endpoints, a new ListenerSet, a deletion (full build)
      (s) =>
        s.put(
          httpRoute(
            'r1',
            [
              {
                matches: [{ path: { type: 'PathPrefix', value: '/v2' } }],
                backendRefs: [backendRef('app', 80)],
              },
            ],
            {
              parentRefs: [parentRef('edge')],
            },
          ),
        ),
      (s) => s.put(tlsSecret('b-cert', { hostnames: ['b.example.com', 'www.b.example.com'] })),
      (s) => {
        for (const o of backendService('app', 80, ['192.0.2.12'])) s.put(o);
      },
      (s) => {
        s.put(listenerSet('team-c', { name: 'edge' }, [httpsListener('c', 9444, 'c.example.com', 'c-cert')]));
        s.put(tlsSecret('c-cert', { hostnames: ['c.example.com'] }));
      },
      (s) => s.delete('ListenerSet', 'default', 'team-b'),
    ];
    for (const change of changes) {
      change(main.store);
      change(worker.store);
      await main.settle();
      await worker.settle();
      assert.deepEqual(served(worker.cache), served(main.cache));
      assert.deepEqual(statusText(worker.statuses()), statusText(main.statuses()));
    }
    // The build thread's metric updates reach this thread's registry.
    const builds = (m: ConvoyMetrics) =>
      m.registry
        .getSingleMetricAsString('convoy_builds_total')
        .then((t) => t.split('\n').filter((l) => !l.startsWith('#')));
    assert.deepEqual(await builds(worker.metrics), await builds(main.metrics));
  });

  test('a dead build thread leaves the snapshots in service and is restarted with the store', async () => {
    const worker = workerSide(world());
    sides.push(worker);
    await until(() => worker.host.isReady(), 'the build thread to be ready');
    await worker.settle();
    const before = served(worker.cache);
    const changes: string[] = [];
    worker.cache.onChange((c) => changes.push(c.fleet));
    await worker.host.terminateWorker();
    assert.deepEqual(served(worker.cache), before, 'the last snapshots stay');
    // Changed while the thread is down: the new thread gets the store as it is now.
    worker.store.put(
      httpRoute(
        'r1',
        [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/after' } }],
            backendRefs: [backendRef('app', 80)],
          },
        ],
        {
          parentRefs: [parentRef('edge')],
        },
      ),
    );
    await until(() => changes.length > 0, 'the restarted thread to publish the change');
    await worker.settle();
    const restarts = await worker.metrics.registry.getSingleMetricAsString(
      'convoy_build_worker_restarts_total',
    );
    assert.match(restarts, /convoy_build_worker_restarts_total 1/);
    const routes = worker.cache.snapshot(worker.cache.fleets()[0])!.types[TypeUrl.Route];
    assert.ok([...routes.entries.values()].some((e) => e.bytes.includes(Buffer.from('/after'))));
    // And it equals what a Controller on this thread builds from the same store.
    const main = mainSide(worker.store.kinds().flatMap((k) => worker.store.list(k)));
    sides.push(main);
    await main.settle();
    assert.deepEqual(served(worker.cache), served(main.cache));
  });
});
