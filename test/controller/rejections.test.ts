import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startController } from '../support/controller-oracle';
import { Controller } from '../../src/controller/controller';
import { mapRejections } from '../../src/controller/rejections';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { silentLogger } from '../../src/observability/logger';
import { XdsCache } from '../../src/xds/cache';
import { TypeUrl } from '../../src/envoy/resources';
import { buildGateways } from '../../src/gateway/build';
import type { Condition, ObjectStatus } from '../../src/status/types';
import { StatusView } from '../../src/status/view';
import type { FleetRejections, RejectedResource, RejectionFeed } from '../../src/xds/rejections';
import {
  CONTROLLER,
  OPTS,
  backendRef,
  backendService,
  condSummary,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  httpsListener,
  parentRef,
  routeParents,
  storeOf,
  tlsSecret,
} from '../support/objects';

const FLEET = 'default/edge';
const BIND = "cannot bind '0.0.0.0:8443': Address already in use";

function objects() {
  return [
    gatewayClass(),
    gateway('edge', [httpListener('http', 8080), httpsListener('https', 8443, 'a.example.com', 'a-cert')]),
    tlsSecret('a-cert', { hostnames: ['a.example.com'] }),
    ...backendService('web', 80, ['10.0.0.1']),
    httpRoute('web', [{ backendRefs: [backendRef('web', 80)] }], { parentRefs: [parentRef('edge')] }),
  ];
}

const rejected = (typeUrl: string, name: string, nodes = ['envoy-1'], message = BIND): RejectedResource => ({
  typeUrl,
  name,
  version: 'v1',
  nodes,
  message,
});

describe('mapping rejections to objects (src/controller/rejections.ts)', () => {
  const result = buildGateways(storeOf(...objects()), OPTS);
  const fleets = new Map(result.fleets.map((f) => [f.fleet, f]));
  const byPort = () =>
    new Map([
      [8080, ['Gateway/default/edge/http']],
      [8443, ['Gateway/default/edge/https']],
    ]);

  test('each rejected resource becomes a note on its owners, and their change offers it again', () => {
    const { notes, reofferOn } = mapRejections(
      [
        {
          fleet: FLEET,
          envoys: 3,
          resources: [
            rejected(TypeUrl.Listener, 'https-8443', ['a', 'b']),
            rejected(TypeUrl.Secret, 'default/a-cert', ['a'], 'bad key'),
            rejected(TypeUrl.Cluster, 'default/web/80', ['c'], 'bad cluster'),
            rejected(TypeUrl.Cluster, 'default/gone/1', ['c'], 'who?'),
          ],
        },
        // A fleet no longer served: nothing to tell.
        { fleet: 'default/gone', envoys: 1, resources: [rejected(TypeUrl.Listener, 'http-80')] },
      ],
      fleets,
      byPort,
    );
    assert.deepEqual([...notes.listeners.keys()], ['Gateway/default/edge']);
    assert.deepEqual(notes.listeners.get('Gateway/default/edge')!.get('https'), [
      { resource: 'Listener https-8443', rejectedBy: 2, envoys: 3, message: BIND },
      { resource: 'Secret default/a-cert', rejectedBy: 1, envoys: 3, message: 'bad key' },
    ]);
    const routes = notes.routes.get('HTTPRoute/default/web')!;
    assert.deepEqual(
      routes.map((g) => [[...g.parents], g.notes.map((n) => n.resource)]),
      [[['Gateway/default/edge'], ['Cluster default/web/80']]],
    );
    assert.deepEqual(
      notes.objects.get('Gateway/default/edge')!.map((n) => n.resource),
      ['Cluster default/gone/1'],
    );
    assert.deepEqual(
      reofferOn.get('Gateway/default/edge')!.map((r) => r.name),
      ['https-8443', 'default/a-cert', 'default/web/80', 'default/gone/1'],
    );
    assert.deepEqual(
      reofferOn.get('HTTPRoute/default/web')!.map((r) => r.name),
      ['default/web/80'],
    );
  });
});

/** A RejectionFeed the test drives: it delivers the views it is given and records reoffers. */
class FakeFeed implements RejectionFeed {
  private readonly views = new Map<string, FleetRejections>();
  private readonly listeners = new Set<(v: FleetRejections) => void>();
  readonly reoffers: { fleet: string; names: string[] }[] = [];

  rejections(): FleetRejections[] {
    return [...this.views.values()];
  }
  onRejectionsChange(listener: (v: FleetRejections) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  reoffer(fleet: string, resources: readonly { typeUrl: string; name: string }[]): void {
    this.reoffers.push({ fleet, names: resources.map((r) => r.name) });
  }
  deliver(view: FleetRejections): void {
    if (view.resources.length) this.views.set(view.fleet, view);
    else this.views.delete(view.fleet);
    for (const l of this.listeners) l(view);
  }
}

async function setup() {
  const feed = new FakeFeed();
  const { store, controller, published } = await startController(storeOf(...objects()), { rejections: feed });
  return { store, controller, published, feed };
}

const gatewayOf = (statuses: ObjectStatus[]) => statuses.find((s) => s.kind === 'Gateway')!;
const listenerConditions = (s: ObjectStatus, name: string) =>
  (s.status.listeners as { name: string; conditions: Condition[] }[]).find((l) => l.name === name)!
    .conditions;

describe('Controller and Envoy rejections', { concurrency: false }, () => {
  test('a rejection is published on its listener, survives rebuilds, reoffers on change, and clears', async () => {
    const { store, controller, published, feed } = await setup();
    const before = published.length;
    const view: FleetRejections = {
      fleet: FLEET,
      envoys: 2,
      resources: [rejected(TypeUrl.Listener, 'https-8443')],
    };
    feed.deliver(view);
    assert.equal(published.length, before + 1, 'published again at once');
    let gw = gatewayOf(published.at(-1)!);
    assert.deepEqual(condSummary(listenerConditions(gw, 'https')), [
      'Accepted=True/Accepted',
      'Programmed=False/Invalid',
      'ResolvedRefs=True/ResolvedRefs',
      'Conflicted=False/NoConflicts',
      'convoy.dev/EnvoyRejected=True/Rejected',
    ]);
    assert.equal(
      listenerConditions(gw, 'https').find((c) => c.type === 'Programmed')!.message,
      `rejected by 1 of 2 Envoys of the fleet: ${BIND}`,
    );
    assert.deepEqual(
      condSummary(listenerConditions(gw, 'http')).filter((c) => c.startsWith('Programmed')),
      ['Programmed=True/Programmed'],
    );

    // The same view again changes nothing: nothing is published.
    feed.deliver({ ...view });
    assert.equal(published.length, before + 1, 'no status churn');

    // A full build (a new route) keeps the rejection while it holds.
    store.put(
      httpRoute('more', [{ backendRefs: [backendRef('web', 80)] }], { parentRefs: [parentRef('edge')] }),
    );
    await controller.settle();
    assert.ok(routeParents(published.at(-1)!, 'HTTPRoute', 'more'), 'the build was published');
    gw = gatewayOf(published.at(-1)!);
    assert.ok(listenerConditions(gw, 'https').some((c) => c.type === 'convoy.dev/EnvoyRejected'));
    assert.equal(feed.reoffers.length, 0, 'a route that owns nothing rejected reoffers nothing');

    // Changing the Gateway (its labels) offers the rejected listener again.
    const edge = store.get('Gateway', 'default', 'edge')!;
    store.put({ ...edge, metadata: { ...edge.metadata, labels: { retry: '1' } } });
    await controller.settle();
    assert.deepEqual(feed.reoffers, [{ fleet: FLEET, names: ['https-8443'] }]);

    // The fleet accepted it: the listener is programmed again, without the Convoy condition.
    const ltt = listenerConditions(gw, 'http').find((c) => c.type === 'Programmed')!.lastTransitionTime;
    feed.deliver({ fleet: FLEET, envoys: 2, resources: [] });
    gw = gatewayOf(published.at(-1)!);
    assert.deepEqual(condSummary(listenerConditions(gw, 'https')), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
      'ResolvedRefs=True/ResolvedRefs',
      'Conflicted=False/NoConflicts',
    ]);
    assert.ok(
      !gw.status.conditions ||
        !(gw.status.conditions as Condition[]).some((c) => c.type === 'convoy.dev/EnvoyRejected'),
    );
    assert.equal(
      listenerConditions(gw, 'http').find((c) => c.type === 'Programmed')!.lastTransitionTime,
      ltt,
      'an untouched listener keeps its transition time',
    );
    controller.stop();
  });

  test('rejections known when the controller starts are on the first statuses', async () => {
    const store = storeOf(...objects());
    store.registerSource('test');
    store.markSynced('test');
    const feed = new FakeFeed();
    feed.deliver({
      fleet: FLEET,
      envoys: 1,
      resources: [rejected(TypeUrl.Secret, 'default/a-cert', ['e'], 'bad key')],
    });
    const published: ObjectStatus[][] = [];
    const metrics = new ConvoyMetrics();
    const controller = new Controller({
      store,
      cache: new XdsCache({ logger: silentLogger(), metrics }),
      statusSinks: [new StatusView((s) => published.push(s))],
      logger: silentLogger(),
      metrics,
      controllerName: CONTROLLER,
      debounceMs: 1,
      maxDelayMs: 5,
      rejections: feed,
    });
    controller.start();
    await controller.settle();
    const https = listenerConditions(gatewayOf(published.at(-1)!), 'https');
    assert.equal(
      https.find((c) => c.type === 'convoy.dev/EnvoyRejected')!.message,
      'Secret default/a-cert rejected by 1 of 1 Envoys of the fleet: bad key',
    );
    controller.stop();
  });
});
