import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/observability/logger';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { KubernetesStatusWriter, withSchemaDefaults } from '../../src/kubernetes/status-writer';
import type { ObjectStatus } from '../../src/status/types';
import { ObjectStore } from '../../src/store/store';
import { FakeApiServer } from './fake-apiserver';

/** Polls until `check` holds; the deadline only bounds a test that is already failing. */
async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const OURS = 'convoy.dev/gateway-controller';
const ROUTES = '/apis/gateway.networking.k8s.io/v1/httproutes';
const CLASSES = '/apis/gateway.networking.k8s.io/v1/gatewayclasses';
const GATEWAYS = '/apis/gateway.networking.k8s.io/v1/gateways';

function cond(type: string, status: 'True' | 'False', reason: string, t: string, generation = 1) {
  return { type, status, reason, message: '', observedGeneration: generation, lastTransitionTime: t };
}

function routeStatus(name: string, accepted: 'True' | 'False', t = '2026-01-01T00:00:00Z'): ObjectStatus {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { namespace: 'default', name, generation: 1 },
    status: {
      parents: [
        {
          parentRef: { name: 'gw' },
          controllerName: OURS,
          conditions: [
            cond('Accepted', accepted, accepted === 'True' ? 'Accepted' : 'NotAllowedByListeners', t),
          ],
        },
      ],
    },
  };
}

function classStatus(t: string, message = 'ok'): ObjectStatus {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'convoy', generation: 1 },
    status: { conditions: [{ ...cond('Accepted', 'True', 'Accepted', t), message }] },
  };
}

describe('KubernetesStatusWriter against a fake API server', () => {
  let api: FakeApiServer;
  let writer: KubernetesStatusWriter | undefined;
  let metrics: ConvoyMetrics;

  beforeEach(async () => {
    api = new FakeApiServer();
    await api.start();
    metrics = new ConvoyMetrics();
    api.upsert(ROUTES, {
      metadata: { name: 'r', namespace: 'default' },
      spec: { parentRefs: [{ name: 'gw' }] },
    });
    api.upsert(CLASSES, { metadata: { name: 'convoy' }, spec: { controllerName: OURS } });
  });
  afterEach(async () => {
    await writer?.stop();
    writer = undefined;
    await api.stop();
  });

  function make(extra: Partial<ConstructorParameters<typeof KubernetesStatusWriter>[0]> = {}) {
    writer = new KubernetesStatusWriter({
      client: api.client(),
      controllerName: OURS,
      logger: silentLogger(),
      metrics,
      backoffBaseMs: 10,
      backoffMaxMs: 50,
      ...extra,
    });
    return writer;
  }

  const puts = () => api.requests.filter((q) => q.method === 'PUT');

  async function writes(result: string): Promise<number> {
    const m = await metrics.statusWrites.get();
    return m.values.find((v) => v.labels.result === result)?.value ?? 0;
  }

  test('writes nothing until leader, then everything pending, on the status subresource', async () => {
    const w = make();
    w.publish([routeStatus('r', 'True'), classStatus('2026-01-01T00:00:00Z')]);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(puts().length, 0);
    w.setLeader(true);
    await w.idle();
    assert.deepEqual(
      puts()
        .map((q) => q.path)
        .sort(),
      [
        `${CLASSES}/convoy/status`,
        `${ROUTES.replace('/httproutes', '/namespaces/default/httproutes')}/r/status`,
      ].sort(),
    );
    const stored = api.get(ROUTES, 'default', 'r')!.status as { parents: Record<string, unknown>[] };
    // Schema defaults are filled in so that what we compare is what the API server stores.
    assert.deepEqual(stored.parents[0].parentRef, {
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      name: 'gw',
    });
    assert.equal(await writes('written'), 2);
  });

  test('every write carries the resourceVersion it read (optimistic concurrency)', async () => {
    const w = make();
    w.setLeader(true);
    w.publish([classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    const put = puts()[0];
    const get = api.requests.filter((q) => q.method === 'GET').at(-1)!;
    assert.equal(get.path, `${CLASSES}/convoy`);
    assert.ok((put.body as { metadata: { resourceVersion?: string } }).metadata.resourceVersion);
  });

  test('a write sends the identity, the resourceVersion and the status, not the spec', async () => {
    const store = new ObjectStore();
    const stored = api.upsert(GATEWAYS, {
      metadata: { name: 'g', namespace: 'default', labels: { a: 'b' } },
      spec: { gatewayClassName: 'convoy', listeners: [] },
    });
    store.put({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', ...stored } as never);
    const w = make({ store });
    w.setLeader(true);
    w.publish([gatewayStatus('g', 'Accepted')]);
    await w.idle();
    const body = puts()[0]!.body as Record<string, unknown> & { metadata: Record<string, unknown> };
    assert.deepEqual(Object.keys(body).sort(), ['apiVersion', 'kind', 'metadata', 'status']);
    assert.deepEqual(body.metadata, {
      name: 'g',
      namespace: 'default',
      resourceVersion: stored.metadata.resourceVersion,
    });
    // The API server keeps spec and labels as stored.
    assert.deepEqual(api.get(GATEWAYS, 'default', 'g')!.spec, { gatewayClassName: 'convoy', listeners: [] });
    assert.equal(storedReason('g'), 'Accepted');
  });

  test('keeps other controllers’ route parents and replaces only ours', async () => {
    const foreign = {
      parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'other' },
      controllerName: 'example.com/other',
      conditions: [cond('Accepted', 'True', 'Accepted', '2025-01-01T00:00:00Z')],
    };
    const staleOurs = {
      parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'old-gw' },
      controllerName: OURS,
      conditions: [cond('Accepted', 'True', 'Accepted', '2025-01-01T00:00:00Z')],
    };
    const existing = api.get(ROUTES, 'default', 'r')!;
    api.upsert(ROUTES, { ...existing, status: { parents: [foreign, staleOurs] } });
    const w = make();
    w.setLeader(true);
    w.publish([routeStatus('r', 'True')]);
    await w.idle();
    const parents = (api.get(ROUTES, 'default', 'r')!.status as { parents: Record<string, unknown>[] })
      .parents;
    assert.equal(parents.length, 2);
    assert.deepEqual(parents[0], foreign);
    assert.equal((parents[1].parentRef as { name: string }).name, 'gw');
    assert.equal(parents[1].controllerName, OURS);
  });

  test('BackendTLSPolicy: keeps other controllers’ ancestors, replaces ours, removes ours once it is not ours', async () => {
    const POLICIES = '/apis/gateway.networking.k8s.io/v1/backendtlspolicies';
    const foreign = {
      ancestorRef: {
        group: 'gateway.networking.k8s.io',
        kind: 'Gateway',
        namespace: 'default',
        name: 'other',
      },
      controllerName: 'example.com/other',
      conditions: [cond('Accepted', 'True', 'Accepted', '2025-01-01T00:00:00Z')],
    };
    api.upsert(POLICIES, {
      metadata: { name: 'p', namespace: 'default' },
      spec: {},
      status: { ancestors: [foreign] },
    });
    const policyStatus: ObjectStatus = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { namespace: 'default', name: 'p', generation: 1 },
      status: {
        ancestors: [
          {
            ancestorRef: {
              group: 'gateway.networking.k8s.io',
              kind: 'Gateway',
              namespace: 'default',
              name: 'gw',
            },
            controllerName: OURS,
            conditions: [cond('Accepted', 'True', 'Accepted', '2026-01-01T00:00:00Z')],
          },
        ],
      },
    };
    const w = make();
    w.setLeader(true);
    w.publish([policyStatus, classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    const ancestors = (api.get(POLICIES, 'default', 'p')!.status as { ancestors: Record<string, unknown>[] })
      .ancestors;
    assert.deepEqual(ancestors[0], foreign);
    assert.equal(ancestors[1].controllerName, OURS);
    w.publish([classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    assert.deepEqual(api.get(POLICIES, 'default', 'p')!.status, { ancestors: [foreign] });
  });

  test('skips the write when only lastTransitionTime differs, and keeps the stored time for unchanged conditions', async () => {
    const w = make();
    w.setLeader(true);
    w.publish([classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    assert.equal(puts().length, 1);
    // A rebuild computes a new time for the same condition: nothing is written.
    w.publish([classStatus('2026-02-02T00:00:00Z')]);
    await w.idle();
    assert.equal(puts().length, 1);
    // A real change is written, with the stored lastTransitionTime since status stayed True.
    w.publish([classStatus('2026-03-03T00:00:00Z', 'changed message')]);
    await w.idle();
    assert.equal(puts().length, 2);
    const c = (api.get(CLASSES, undefined, 'convoy')!.status as { conditions: Record<string, unknown>[] })
      .conditions[0];
    assert.equal(c.message, 'changed message');
    assert.equal(c.lastTransitionTime, '2026-01-01T00:00:00Z');
  });

  test('convoy.dev/EnvoyRejected is written while it holds, once, and removed when it clears', async () => {
    const rejected = (t: string): ObjectStatus => {
      const s = routeStatus('r', 'True', t);
      const parent = (s.status.parents as { conditions: unknown[] }[])[0];
      parent.conditions.push({
        ...cond('convoy.dev/EnvoyRejected', 'True', 'Rejected', t),
        message: 'Cluster default/web/80 rejected by 1 of 1 Envoys of the fleet: bad',
      });
      return s;
    };
    const stored = () =>
      (
        api.get(ROUTES, 'default', 'r')!.status as {
          parents: { conditions: { type: string; lastTransitionTime: string }[] }[];
        }
      ).parents[0].conditions;
    const w = make();
    w.setLeader(true);
    w.publish([rejected('2026-01-01T00:00:00Z')]);
    await w.idle();
    assert.deepEqual(
      stored().map((c) => c.type),
      ['Accepted', 'convoy.dev/EnvoyRejected'],
    );
    // Republished unchanged (a later overlay time): no write.
    w.publish([rejected('2026-01-01T00:05:00Z')]);
    await w.idle();
    assert.equal(puts().length, 1);
    // Cleared: the condition is Convoy's own type, so the merge drops it instead of keeping it.
    w.publish([routeStatus('r', 'True', '2026-01-01T00:10:00Z')]);
    await w.idle();
    assert.equal(puts().length, 2);
    assert.deepEqual(
      stored().map((c) => [c.type, c.lastTransitionTime]),
      [['Accepted', '2026-01-01T00:00:00Z']],
    );
  });

  test('a new leader does not rewrite a status that is already stored', async () => {
    const existing = api.get(CLASSES, undefined, 'convoy')!;
    api.upsert(CLASSES, { ...existing, status: classStatus('2025-05-05T00:00:00Z').status });
    const w = make();
    w.publish([classStatus('2026-01-01T00:00:00Z')]);
    w.setLeader(true);
    await w.idle();
    assert.equal(puts().length, 0);
    assert.equal(await writes('unchanged'), 1);
  });

  test('with the provider store, an unchanged observed status costs no request at all', async () => {
    const store = new ObjectStore();
    const w = make({ store });
    w.setLeader(true);
    w.publish([classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    const requestsAfterFirst = api.requests.length;
    // The provider sees the object as the API server now stores it.
    store.put({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      ...api.get(CLASSES, undefined, 'convoy')!,
    } as never);
    w.publish([classStatus('2026-01-09T00:00:00Z')]);
    await w.idle();
    assert.equal(api.requests.length, requestsAfterFirst);
    // Someone else overwrites our status; the next build notices through the store and repairs it.
    const obj = api.get(CLASSES, undefined, 'convoy')!;
    const tampered = api.upsert(CLASSES, { ...obj, status: { conditions: [] } });
    store.put({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', ...tampered } as never);
    w.publish([classStatus('2026-01-10T00:00:00Z')]);
    await w.idle();
    assert.equal(puts().length, 2);
  });

  test('retries on 409 Conflict by re-reading and re-merging', async () => {
    const w = make();
    w.setLeader(true);
    api.failNext((q) => q.method === 'PUT', 409, 2);
    w.publish([routeStatus('r', 'True')]);
    await w.idle();
    assert.equal(puts().length, 3);
    assert.equal(api.requests.filter((q) => q.method === 'GET').length, 3);
    assert.ok(api.get(ROUTES, 'default', 'r')!.status);
    assert.equal(await writes('conflict'), 2);
  });

  test('never writes when the object no longer exists', async () => {
    const w = make();
    w.setLeader(true);
    api.remove(ROUTES, 'default', 'r');
    w.publish([routeStatus('r', 'True')]);
    await w.idle();
    assert.equal(puts().length, 0);
    assert.equal(await writes('gone'), 1);
    assert.equal(api.get(ROUTES, 'default', 'r'), undefined);
  });

  test('transient errors are retried with backoff; the latest status wins', async () => {
    const w = make();
    w.setLeader(true);
    api.failNext((q) => q.method === 'GET', 503, 3);
    w.publish([routeStatus('r', 'False')]);
    await new Promise((r) => setTimeout(r, 5));
    w.publish([routeStatus('r', 'True')]);
    await w.idle();
    const parents = (
      api.get(ROUTES, 'default', 'r')!.status as { parents: { conditions: { status: string }[] }[] }
    ).parents;
    assert.equal(parents[0].conditions[0].status, 'True');
    assert.ok((await writes('error')) >= 1);
  });

  test('objects dropped from the published set are forgotten (not written)', async () => {
    const w = make();
    w.publish([routeStatus('r', 'True')]);
    w.publish([classStatus('2026-01-01T00:00:00Z')]);
    w.setLeader(true);
    await w.idle();
    assert.deepEqual(
      puts().map((q) => q.path),
      [`${CLASSES}/convoy/status`],
    );
  });

  test('a route that is no longer ours loses our parents once; other controllers’ entries stay', async () => {
    const foreign = {
      parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'other' },
      controllerName: 'example.com/other',
      conditions: [cond('Accepted', 'True', 'Accepted', '2025-01-01T00:00:00Z')],
    };
    const existing = api.get(ROUTES, 'default', 'r')!;
    api.upsert(ROUTES, { ...existing, status: { parents: [foreign] } });
    const w = make();
    w.setLeader(true);
    w.publish([routeStatus('r', 'True'), classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    assert.equal((api.get(ROUTES, 'default', 'r')!.status as { parents: unknown[] }).parents.length, 2);
    // The next build no longer contains the route (its parentRefs moved to another class).
    w.publish([classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    assert.deepEqual(api.get(ROUTES, 'default', 'r')!.status, { parents: [foreign] });
    const putsAfterCleanup = puts().length;
    // Later builds do not touch it again.
    w.publish([classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    assert.equal(puts().length, putsAfterCleanup);
    // A route whose only parent was ours ends with an empty parents list.
    api.upsert(ROUTES, { metadata: { name: 'bare', namespace: 'default' }, spec: {} });
    w.publish([routeStatus('bare', 'True'), classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    w.publish([classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    assert.deepEqual(api.get(ROUTES, 'default', 'bare')!.status, { parents: [] });
  });

  test('publishChanges: a changed status is written, a removed route loses our parents once, others stay', async () => {
    const foreign = {
      parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'other' },
      controllerName: 'example.com/other',
      conditions: [cond('Accepted', 'True', 'Accepted', '2025-01-01T00:00:00Z')],
    };
    const existing = api.get(ROUTES, 'default', 'r')!;
    api.upsert(ROUTES, { ...existing, status: { parents: [foreign] } });
    const w = make();
    w.setLeader(true);
    w.publish([routeStatus('r', 'True'), classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    const before = puts().length;
    // A fast path changes the class's status only: one write, of it.
    w.publishChanges([classStatus('2026-01-01T00:00:00Z', 'changed')], []);
    await w.idle();
    assert.deepEqual(
      puts()
        .slice(before)
        .map((q) => q.path),
      [`${CLASSES}/convoy/status`],
    );
    // The route is gone from Convoy's statuses: ours is removed, the foreign parent stays.
    w.publishChanges([], ['HTTPRoute/default/r']);
    await w.idle();
    assert.deepEqual(api.get(ROUTES, 'default', 'r')!.status, { parents: [foreign] });
    const afterCleanup = puts().length;
    w.publishChanges([], ['HTTPRoute/default/r']);
    await w.idle();
    assert.equal(puts().length, afterCleanup);
  });

  test('losing leadership stops writing; regaining it re-checks everything', async () => {
    const w = make();
    w.setLeader(true);
    w.publish([classStatus('2026-01-01T00:00:00Z')]);
    await w.idle();
    w.setLeader(false);
    w.publish([classStatus('2026-01-01T00:00:00Z', 'while follower')]);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(puts().length, 1);
    w.setLeader(true);
    await w.idle();
    assert.equal(puts().length, 2);
  });

  test('rate limits writes (qps/burst) without blocking publish', async () => {
    for (let i = 0; i < 6; i++) {
      api.upsert(GATEWAYS, { metadata: { name: `g${i}`, namespace: 'default' }, spec: {} });
    }
    const w = make({ qps: 20, burst: 2 });
    w.setLeader(true);
    const statuses: ObjectStatus[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { namespace: 'default', name: `g${i}` },
        status: { conditions: [cond('Accepted', 'True', 'Accepted', '2026-01-01T00:00:00Z')] },
      });
    }
    const t0 = Date.now();
    w.publish(statuses);
    // publish() only queues: it returns before the first write is even sent.
    assert.equal(w.pendingCount, 6, 'publish returns at once');
    assert.equal(puts().length, 0);
    await w.idle();
    // 2 from the burst, 4 more at 20/s: at least 200 ms. A busy CPU only makes this longer.
    assert.ok(Date.now() - t0 >= 150, `took ${Date.now() - t0} ms`);
    assert.equal(puts().length, 6);
  });

  function gatewayStatus(name: string, reason: string): ObjectStatus {
    return {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { namespace: 'default', name },
      status: { conditions: [cond('Accepted', 'True', reason, '2026-01-01T00:00:00Z')] },
    };
  }

  function storedReason(name: string): string | undefined {
    const stored = api.get(GATEWAYS, 'default', name)?.status as
      { conditions?: { reason: string }[] } | undefined;
    return stored?.conditions?.[0]?.reason;
  }

  test('writes several objects at once, never two writes of one object at once; the latest wins', async () => {
    for (let i = 0; i < 12; i++)
      api.upsert(GATEWAYS, { metadata: { name: `g${i}`, namespace: 'default' }, spec: {} });
    api.delayMs = 20;
    const w = make({ concurrency: 4 });
    w.setLeader(true);
    // Two writes start; two workers stay idle. Their answers are held until both requests have
    // reached the API server, so they are surely in flight (whatever the CPU load) when...
    api.holdAnswers();
    w.publish([gatewayStatus('g0', 'First'), gatewayStatus('g1', 'First')]);
    await until(() => api.inFlightNow === 2, 'the first two writes in flight');
    // ...every object gets a newer status: the idle workers must leave g0 and g1 alone until
    // their first writes end.
    w.publish(Array.from({ length: 12 }, (_, i) => gatewayStatus(`g${i}`, 'Second')));
    await until(() => api.inFlightNow === 4, 'the idle workers writing other objects');
    api.releaseHeld();
    await w.idle();
    for (let i = 0; i < 12; i++) assert.equal(storedReason(`g${i}`), 'Second', `g${i}`);
    assert.ok(api.maxInFlight > 1, `overlapping writes (max ${api.maxInFlight})`);
    assert.ok(api.maxInFlight <= 4, `at most 4 in flight (max ${api.maxInFlight})`);
    assert.equal(api.maxInFlightOnePath, 1, 'one request at a time per object');
  });

  test('late echoes of its writes shrink the write window, on-time ones grow it back; writes go on', async () => {
    for (let i = 0; i < 8; i++)
      api.upsert(GATEWAYS, { metadata: { name: `g${i}`, namespace: 'default' }, spec: {} });
    const w = make({ concurrency: 8, targetEchoLagMs: 50 });
    w.setLeader(true);
    assert.equal(w.writeWindow, 8);
    const rvOf = (name: string) => String(api.get(GATEWAYS, 'default', name)!.metadata.resourceVersion);
    w.publish(Array.from({ length: 8 }, (_, i) => gatewayStatus(`g${i}`, 'First')));
    await w.idle();
    // The echoes arrive late: one halving for the writes of this generation, not one per echo.
    await new Promise((r) => setTimeout(r, 120));
    for (let i = 0; i < 8; i++) w.observeEcho('Gateway', 'default', `g${i}`, rvOf(`g${i}`));
    assert.equal(w.writeWindow, 4);
    // An event that is not the echo (another resourceVersion, another object) changes nothing.
    w.observeEcho('Gateway', 'default', 'g0', '1');
    w.observeEcho('Gateway', 'default', 'nope', rvOf('g1'));
    assert.equal(w.writeWindow, 4);
    // With the smaller window every status is still written; echoes on time grow it again.
    w.publish(Array.from({ length: 8 }, (_, i) => gatewayStatus(`g${i}`, 'Second')));
    await w.idle();
    for (let i = 0; i < 8; i++) assert.equal(storedReason(`g${i}`), 'Second', `g${i}`);
    // 1 / 4 per echo makes 5 after four; 1 / 5 per echo after that, not yet 6 after four more.
    for (let i = 0; i < 8; i++) w.observeEcho('Gateway', 'default', `g${i}`, rvOf(`g${i}`));
    assert.equal(w.writeWindow, 5);
    const page = await metrics.registry.metrics();
    assert.match(page, /^convoy_status_write_window 5$/m);
    assert.match(page, /^convoy_status_echo_lag_seconds_count 16$/m);
  });

  test('while Convoy pushes to Envoys, writes wait but for one per busyWriteEveryMs; all go once the push is out', async () => {
    for (let i = 0; i < 4; i++)
      api.upsert(GATEWAYS, { metadata: { name: `g${i}`, namespace: 'default' }, spec: {} });
    let pushing = true;
    const w = make({ concurrency: 4, pushing: () => pushing, busyWriteEveryMs: 3_600_000 });
    w.setLeader(true);
    w.publish(Array.from({ length: 4 }, (_, i) => gatewayStatus(`g${i}`, 'First')));
    // The first write goes (status never stops); the others wait for the push.
    await until(() => puts().length === 1, 'the one write allowed during a push');
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(puts().length, 1, 'no other write starts while the push goes out');
    assert.equal(w.pendingCount, 3);
    pushing = false;
    await w.idle();
    assert.equal(puts().length, 4);
    for (let i = 0; i < 4; i++) assert.equal(storedReason(`g${i}`), 'First', `g${i}`);
  });

  test('with the provider store holding the object, a write is one PUT and no GET', async () => {
    const store = new ObjectStore();
    const stored = api.upsert(GATEWAYS, { metadata: { name: 'g', namespace: 'default' }, spec: {} });
    store.put({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', ...stored } as never);
    const w = make({ store });
    w.setLeader(true);
    w.publish([gatewayStatus('g', 'Accepted')]);
    await w.idle();
    assert.equal(storedReason('g'), 'Accepted');
    assert.equal(puts().length, 1);
    assert.equal(api.requests.filter((q) => q.method === 'GET').length, 0);
  });

  test('a stale store copy costs one 409, then a re-read and a write', async () => {
    const store = new ObjectStore();
    const old = api.upsert(GATEWAYS, { metadata: { name: 'g', namespace: 'default' }, spec: {} });
    store.put({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', ...old } as never);
    // The object changed on the API server; the provider has not seen it yet.
    api.upsert(GATEWAYS, { metadata: { name: 'g', namespace: 'default' }, spec: { changed: true } });
    const w = make({ store });
    w.setLeader(true);
    w.publish([gatewayStatus('g', 'Accepted')]);
    await w.idle();
    assert.equal(storedReason('g'), 'Accepted');
    assert.equal(puts().length, 2);
    assert.equal(api.requests.filter((q) => q.method === 'GET').length, 1);
    assert.equal(await writes('conflict'), 1);
  });

  test('a 429 pauses every worker for the time the API server names, then all is written', async () => {
    for (let i = 0; i < 4; i++)
      api.upsert(GATEWAYS, { metadata: { name: `g${i}`, namespace: 'default' }, spec: {} });
    api.failNext((q) => q.method === 'PUT', 429, 1, { retryAfterSeconds: 1 });
    const w = make({ concurrency: 4 });
    w.setLeader(true);
    w.publish([gatewayStatus('g0', 'Accepted')]);
    // The error count and the pause are set in the same turn of the event loop.
    while ((await writes('error')) < 1) await new Promise((r) => setTimeout(r, 5));
    const throttledAt = Date.now();
    const before = api.requests.length;
    w.publish([0, 1, 2, 3].map((i) => gatewayStatus(`g${i}`, 'Accepted')));
    await w.idle();
    for (let i = 0; i < 4; i++) assert.equal(storedReason(`g${i}`), 'Accepted', `g${i}`);
    const later = api.requests.slice(before);
    assert.ok(later.length >= 4);
    for (const q of later) assert.ok(q.at >= throttledAt + 900, `${q.method} ${q.path} waited`);
  });

  test('withSchemaDefaults fills the defaults the CRDs apply inside status', () => {
    assert.deepEqual(
      withSchemaDefaults({
        parents: [{ parentRef: { name: 'gw', kind: 'ListenerSet' } }],
        addresses: [{ value: '10.0.0.1' }],
        listeners: [{ name: 'l', supportedKinds: [{ kind: 'HTTPRoute' }] }],
      }),
      {
        parents: [{ parentRef: { group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: 'gw' } }],
        addresses: [{ type: 'IPAddress', value: '10.0.0.1' }],
        listeners: [
          { name: 'l', supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }] },
        ],
      },
    );
  });
});
