/**
 * A Gateway that was accepted and turns invalid keeps serving its last accepted configuration
 * (controller/fleet-hold.ts, docs/gateway-api.md §3): the snapshot stays, the managed model stays
 * for the provisioner, and the status says so; deletion or another controller's class lets it go.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startController } from '../support/controller-oracle';
import type { Controller } from '../../src/controller/controller';
import type { XdsCache } from '../../src/xds/cache';
import { TypeUrl } from '../../src/envoy/resources';
import type { FleetModel } from '../../src/model/fleet';
import type { Condition, ObjectStatus } from '../../src/status/types';
import type { KubeObject } from '../../src/store/objects';
import type { ObjectStore } from '../../src/store/store';
import {
  backendRef,
  backendService,
  condSummary,
  endpointSlice,
  envoyFleet,
  fleetRef,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  parentRef,
  storeOf,
} from '../support/objects';

const FLEET = 'default/edge';

function edge(
  generation: number,
  extra: {
    ref?: string;
    listeners?: ReturnType<typeof httpListener>[];
    className?: string;
    uid?: string;
  } = {},
): KubeObject {
  const gw = gateway('edge', extra.listeners ?? [httpListener('http', 8080)], {
    generation,
    ...(extra.className ? { className: extra.className } : {}),
    ...(extra.ref ? { spec: { infrastructure: { parametersRef: fleetRef(extra.ref) } } } : {}),
  });
  if (extra.uid) gw.metadata.uid = extra.uid;
  return gw;
}

interface Running {
  store: ObjectStore;
  cache: XdsCache;
  controller: Controller;
  published: ObjectStatus[][];
  fleets: { models: readonly FleetModel[]; untouched: readonly string[] }[];
}

async function run(...objects: KubeObject[]): Promise<Running> {
  const store = storeOf(
    gatewayClass(),
    gatewayClass('other', 'example.com/another-controller'),
    envoyFleet('small', { workload: { replicas: 1 } }),
    ...backendService('web', 80, ['10.0.0.1']),
    httpRoute('web', [{ backendRefs: [backendRef('web', 80)] }], { parentRefs: [parentRef('edge')] }),
    ...objects,
  );
  const fleets: Running['fleets'] = [];
  const started = await startController(store, {
    managedFleets: true,
    onFleets: (models, untouched) => fleets.push({ models, untouched }),
  });
  return { ...started, fleets };
}

async function put(r: Running, ...objects: KubeObject[]): Promise<void> {
  for (const o of objects) r.store.put(o);
  await r.controller.settle();
}

function listeners(r: Running): Map<string, string> {
  const snap = r.cache.snapshot(FLEET);
  assert.ok(snap, 'the fleet has a snapshot');
  return new Map([...snap.types[TypeUrl.Listener].entries].map(([n, e]) => [n, e.version]));
}

function gatewayStatus(r: Running): { conditions: Condition[]; addresses?: unknown[] } {
  const s = r.published.at(-1)!.find((o) => o.kind === 'Gateway' && o.metadata.name === 'edge');
  assert.ok(s, 'the Gateway has a status');
  return s.status as { conditions: Condition[] };
}

function lastFleets(r: Running): { models: readonly FleetModel[]; untouched: readonly string[] } {
  const f = r.fleets.at(-1);
  assert.ok(f, 'onFleets was called');
  return f;
}

describe(
  'Holding the last good configuration of a Gateway that turns invalid',
  { concurrency: false },
  () => {
    test('a missing EnvoyFleet keeps the served listeners and managed model; fixing it resumes updates', async () => {
      const r = await run(edge(1, { ref: 'small' }));
      const served = listeners(r);
      assert.deepEqual([...served.keys()], ['http-8080']);
      assert.equal(lastFleets(r).models[0].managed?.workload.replicas, 1);

      await put(
        r,
        edge(2, { ref: 'missing', listeners: [httpListener('http', 8080), httpListener('more', 9090)] }),
      );
      assert.deepEqual(listeners(r), served, 'Envoy sees no change');
      const held = gatewayStatus(r);
      assert.deepEqual(condSummary(held.conditions), [
        'Accepted=False/InvalidParameters',
        'Programmed=False/Invalid',
        'convoy.dev/ServingLastGoodConfiguration=True/LastGoodConfiguration',
      ]);
      const note = held.conditions.find((c) => c.type === 'convoy.dev/ServingLastGoodConfiguration')!;
      assert.match(note.message, /generation 1\b/);
      assert.equal(note.observedGeneration, 2);
      assert.equal(lastFleets(r).models[0].managed?.workload.replicas, 1, 'the provisioner keeps the fleet');
      assert.deepEqual(lastFleets(r).untouched, []);

      await put(r, envoyFleet('missing', { workload: { replicas: 3 } }));
      assert.deepEqual([...listeners(r).keys()], ['http-8080', 'http-9090'], 'the fixed Gateway is served');
      assert.deepEqual(condSummary(gatewayStatus(r).conditions), [
        'Accepted=True/Accepted',
        'Programmed=False/AddressNotAssigned',
        'convoy.dev/Routability=True/Public',
      ]);
      assert.equal(lastFleets(r).models[0].managed?.workload.replicas, 3);
      r.controller.stop();
    });

    test('a Gateway whose listeners all turn invalid is held, and its endpoints still follow', async () => {
      const r = await run(edge(1));
      const served = listeners(r);
      await put(r, edge(2, { listeners: [httpListener('sctp', 8080, undefined, { protocol: 'SCTP' })] }));
      assert.deepEqual(listeners(r), served);
      assert.deepEqual(condSummary(gatewayStatus(r).conditions).slice(0, 2), [
        'Accepted=False/ListenersNotValid',
        'Programmed=False/Invalid',
      ]);
      // A backend moves while the Gateway is held: the held configuration follows it.
      await put(
        r,
        endpointSlice('web-abc12', 'web', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.9'] }]),
      );
      const cla = r.cache.snapshot(FLEET)!.types[TypeUrl.Endpoint].entries.get('default/web/80');
      assert.ok(
        cla && Buffer.from(cla.bytes).includes(Buffer.from('10.0.0.9')),
        'the held fleet has the new endpoint',
      );
      // A route edit while held takes the full build, which keeps the hold.
      await put(
        r,
        httpRoute(
          'web',
          [
            {
              backendRefs: [backendRef('web', 80)],
              matches: [{ path: { type: 'PathPrefix', value: '/x' } }],
            },
          ],
          { parentRefs: [parentRef('edge')], generation: 2 },
        ),
      );
      assert.deepEqual([...listeners(r).keys()], ['http-8080']);
      r.controller.stop();
    });

    test('deleting the Gateway, or moving it to another controller, removes its fleet', async () => {
      for (const leave of ['delete', 'other-class'] as const) {
        const r = await run(edge(1, { ref: 'small' }));
        await put(r, edge(2, { ref: 'missing' }));
        assert.ok(r.cache.hasSnapshot(FLEET), 'held');
        if (leave === 'delete') r.store.delete('Gateway', 'default', 'edge');
        else r.store.put(edge(3, { ref: 'missing', className: 'other' }));
        await r.controller.settle();
        assert.equal(r.cache.hasSnapshot(FLEET), false, `${leave}: the snapshot is gone`);
        assert.deepEqual(lastFleets(r).models, [], `${leave}: the provisioner lets the fleet go`);
        assert.deepEqual(lastFleets(r).untouched, []);
        r.controller.stop();
      }
    });

    test('a Gateway with nothing to hold (invalid from the start, or after a restart) gets no snapshot and is left alone', async () => {
      const r = await run(edge(1, { ref: 'missing' }));
      assert.equal(r.cache.hasSnapshot(FLEET), false);
      assert.deepEqual(lastFleets(r).untouched, [FLEET]);
      assert.deepEqual(condSummary(gatewayStatus(r).conditions), [
        'Accepted=False/InvalidParameters',
        'Programmed=False/Invalid',
      ]);
      // Recreated (a new uid) while invalid: the old object's configuration is not brought back.
      const s = await run(edge(1, { ref: 'small' }));
      await put(s, edge(1, { ref: 'missing', uid: 'uid-recreated' }));
      assert.equal(s.cache.hasSnapshot(FLEET), false);
      assert.deepEqual(lastFleets(s).untouched, [FLEET]);
      r.controller.stop();
      s.controller.stop();
    });
  },
);
