import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectStore } from '../../../src/store/store';
import { silentLogger } from '../../../src/observability/logger';
import { ConvoyMetrics } from '../../../src/observability/metrics';
import { KubernetesProvider } from '../../../src/providers/kubernetes/provider';
import { RESOURCE_TYPES, resourceForKind } from '../../../src/kubernetes/resources';
import type { ResourceType } from '../../../src/kubernetes/resources';
import { FakeApiServer } from '../../kubernetes/fake-apiserver';

const ROUTES = '/apis/gateway.networking.k8s.io/v1/httproutes';
const SECRETS = '/api/v1/secrets';
const LISTENERSETS = '/apis/gateway.networking.k8s.io/v1/listenersets';

function route(name: string, path = '/') {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: {
      name,
      namespace: 'default',
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': '{"huge":true}',
        'convoy.dev/x': 'y',
      },
      managedFields: [{ manager: 'kubectl' }],
      finalizers: ['x'],
    },
    spec: {
      parentRefs: [{ name: 'gw' }],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }] }],
    },
  };
}

/**
 * Polls until `check` holds. The deadline is generous on purpose: it only bounds a test that
 * is already failing, so a busy CPU never turns a slow event into a failure.
 */
async function until(
  check: () => boolean | Promise<boolean>,
  what = 'condition',
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** How many watch events of a type the provider has received (convoy_kubernetes_watch_events_total). */
async function watchEvents(metrics: ConvoyMetrics, type: string): Promise<number> {
  const m = await metrics.registry.getSingleMetric('convoy_kubernetes_watch_events_total')?.get();
  return (m?.values ?? []).filter((v) => v.labels.type === type).reduce((sum, v) => sum + v.value, 0);
}

const fast = {
  backoffBaseMs: 10,
  backoffMaxMs: 50,
  missingRetryMs: 50,
  watchTimeoutSeconds: [300, 300] as [number, number],
};

describe('KubernetesProvider against a fake API server', () => {
  let api: FakeApiServer;
  let store: ObjectStore;
  let provider: KubernetesProvider | undefined;
  let metrics: ConvoyMetrics;

  beforeEach(async () => {
    api = new FakeApiServer();
    await api.start();
    store = new ObjectStore();
    metrics = new ConvoyMetrics();
  });
  afterEach(async () => {
    await provider?.stop();
    provider = undefined;
    await api.stop();
  });

  function start(resources?: readonly ResourceType[], extra: Record<string, unknown> = {}) {
    provider = new KubernetesProvider({
      client: api.client(),
      store,
      logger: silentLogger(),
      metrics,
      resources,
      ...fast,
      ...extra,
    });
    return provider.start();
  }

  test('lists every watched kind, sets apiVersion/kind on list items, trims metadata, marks synced once', async () => {
    api.upsert(ROUTES, route('a'));
    let syncedCalls = 0;
    store.onSynced(() => syncedCalls++);
    await start();
    assert.equal(store.isSynced(), false, 'not synced before the lists complete');
    await until(() => store.isSynced(), 'sync');
    const r = store.get('HTTPRoute', 'default', 'a');
    assert.ok(r);
    assert.equal(r.apiVersion, 'gateway.networking.k8s.io/v1');
    assert.equal(r.kind, 'HTTPRoute');
    assert.deepEqual(r.metadata.annotations, { 'convoy.dev/x': 'y' });
    assert.equal((r.metadata as unknown as Record<string, unknown>).managedFields, undefined);
    assert.equal((r.metadata as unknown as Record<string, unknown>).finalizers, undefined);
    assert.ok(r.metadata.resourceVersion);
    assert.equal(syncedCalls, 1);
    const listed = new Set(api.requests.filter((q) => q.method === 'GET').map((q) => q.path));
    for (const res of RESOURCE_TYPES)
      assert.ok(
        [...listed].some((p) => p.endsWith('/' + res.plural)),
        res.plural,
      );
  });

  test('Secrets are listed and watched with type=kubernetes.io/tls; only tls.crt and tls.key are kept', async () => {
    api.upsert(SECRETS, {
      metadata: { name: 'cert', namespace: 'default' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': 'Y3J0', 'tls.key': 'a2V5', 'ca.crt': 'Y2E=', extra: 'eA==' },
    });
    api.upsert(SECRETS, {
      metadata: { name: 'opaque', namespace: 'default' },
      type: 'Opaque',
      data: { password: 'cA==' },
    });
    await start([resourceForKind('Secret')!]);
    // The store reports synced once the LIST is applied; the WATCH follows it, so wait for both.
    await until(() => store.isSynced() && api.watchCount === 1, 'sync and watch');
    assert.equal(store.get('Secret', 'default', 'opaque'), undefined);
    assert.deepEqual(store.get('Secret', 'default', 'cert')?.data, { 'tls.crt': 'Y3J0', 'tls.key': 'a2V5' });
    const secretRequests = api.requests.filter((q) => q.path === SECRETS);
    // Both the LIST and the WATCH carry the field selector.
    assert.deepEqual([...new Set(secretRequests.map((q) => q.method))].sort(), ['GET', 'WATCH']);
    for (const q of secretRequests) assert.equal(q.query.fieldSelector, 'type=kubernetes.io/tls');
    // A watch event for a new TLS Secret is trimmed the same way.
    api.upsert(SECRETS, {
      metadata: { name: 'cert2', namespace: 'x' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': 'MQ==', 'tls.key': 'Mg==', 'ca.crt': 'Mw==' },
    });
    await until(() => store.get('Secret', 'x', 'cert2') !== undefined);
    assert.deepEqual(store.get('Secret', 'x', 'cert2')?.data, { 'tls.crt': 'MQ==', 'tls.key': 'Mg==' });
  });

  test('paginates LISTs with limit/continue', async () => {
    for (let i = 0; i < 7; i++) api.upsert(ROUTES, route(`r${i}`));
    await start([resourceForKind('HTTPRoute')!], { pageSize: 3 });
    await until(() => store.isSynced());
    assert.equal(store.list('HTTPRoute').length, 7);
    const lists = api.requests.filter((q) => q.method === 'GET' && q.path === ROUTES);
    assert.equal(lists.length, 3);
    assert.deepEqual(
      lists.map((q) => q.query.continue),
      [undefined, '3', '6'],
    );
  });

  test('applies watch events: add, modify, delete; watches from the list resourceVersion with bookmarks', async () => {
    api.upsert(ROUTES, route('a'));
    await start([resourceForKind('HTTPRoute')!]);
    await until(() => store.isSynced() && api.watchCount === 1);
    const w = api.requests.find((q) => q.method === 'WATCH')!;
    assert.equal(w.query.allowWatchBookmarks, 'true');
    assert.ok(Number(w.query.resourceVersion) > 0);
    api.upsert(ROUTES, route('b'));
    await until(() => store.get('HTTPRoute', 'default', 'b') !== undefined, 'add');
    api.upsert(ROUTES, route('a', '/changed'));
    await until(
      () => JSON.stringify(store.get('HTTPRoute', 'default', 'a')?.spec).includes('/changed'),
      'modify',
    );
    api.remove(ROUTES, 'default', 'b');
    await until(() => store.get('HTTPRoute', 'default', 'b') === undefined, 'delete');
  });

  test('resumes a dropped watch from the last seen resourceVersion (including bookmarks) without relisting', async () => {
    await start([resourceForKind('HTTPRoute')!]);
    await until(() => api.watchCount === 1);
    api.upsert(ROUTES, route('a'));
    await until(() => store.get('HTTPRoute', 'default', 'a') !== undefined);
    // Unrelated progress, seen only through a bookmark.
    api.upsert('/api/v1/services', { metadata: { name: 's', namespace: 'default' }, spec: {} });
    api.bookmark(ROUTES);
    const bookmarkRv = api.get('/api/v1/services', 'default', 's')!.metadata.resourceVersion;
    await until(async () => (await watchEvents(metrics, 'BOOKMARK')) === 1, 'bookmark received');
    const listsBefore = api.requests.filter((q) => q.method === 'GET' && q.path === ROUTES).length;
    api.dropWatches();
    await until(() => api.watchCount === 1, 'rewatch');
    const watches = api.requests.filter((q) => q.method === 'WATCH');
    assert.equal(watches.at(-1)!.query.resourceVersion, bookmarkRv);
    assert.equal(api.requests.filter((q) => q.method === 'GET' && q.path === ROUTES).length, listsBefore);
  });

  test('410 Expired relists with replaceKind semantics: objects deleted while disconnected disappear', async () => {
    api.upsert(ROUTES, route('keep'));
    api.upsert(ROUTES, route('gone'));
    await start([resourceForKind('HTTPRoute')!]);
    await until(() => store.list('HTTPRoute').length === 2 && api.watchCount === 1);
    const deletes: string[] = [];
    store.onChange((c) => c.type === 'delete' && deletes.push(c.key));
    // An outage: the watch drops, changes happen, and the history is compacted meanwhile.
    api.failNext((q) => q.method === 'WATCH', 503, 2);
    api.dropWatches();
    api.remove(ROUTES, 'default', 'gone');
    api.upsert(ROUTES, route('new'));
    api.compact();
    await until(() => store.get('HTTPRoute', 'default', 'new') !== undefined, 'relist');
    assert.equal(store.get('HTTPRoute', 'default', 'gone'), undefined);
    assert.ok(store.get('HTTPRoute', 'default', 'keep'));
    assert.deepEqual(deletes, ['HTTPRoute/default/gone']);
    const lists = api.requests.filter((q) => q.method === 'GET' && q.path === ROUTES);
    assert.equal(lists.length, 2, 'one initial list and one relist');
  });

  test('an HTTP 410 on WATCH also relists', async () => {
    await start([resourceForKind('HTTPRoute')!]);
    await until(() => api.watchCount === 1);
    api.failNext((q) => q.method === 'WATCH', 410);
    api.dropWatches();
    await until(
      () => api.requests.filter((q) => q.method === 'GET' && q.path === ROUTES).length === 2,
      'relist',
    );
  });

  test('retries a failing LIST with backoff and only then marks synced', async () => {
    api.failNext((q) => q.method === 'GET' && q.path === ROUTES, 500, 3);
    api.upsert(ROUTES, route('a'));
    await start([resourceForKind('HTTPRoute')!]);
    await until(() => store.isSynced(), 'sync after retries');
    assert.ok(store.get('HTTPRoute', 'default', 'a'));
    assert.equal(api.requests.filter((q) => q.method === 'GET' && q.path === ROUTES).length, 4);
    assert.match(provider!.state()[0].lastError ?? '', /500/);
  });

  test('a Gateway API CRD that is not installed is skipped (synced), and picked up once installed', async () => {
    api.missing.add(LISTENERSETS);
    await start([resourceForKind('ListenerSet')!, resourceForKind('HTTPRoute')!]);
    await until(() => store.isSynced(), 'sync despite the missing CRD');
    // The informer re-lists a missing CRD every missingRetryMs, so its phase alternates between
    // 'missing' and a brief 'listing': wait for the phase rather than sampling it once.
    await until(
      () => provider!.state().find((s) => s.kind === 'ListenerSet')?.phase === 'missing',
      'ListenerSet reported missing',
    );
    api.missing.delete(LISTENERSETS);
    api.upsert(LISTENERSETS, {
      metadata: { name: 'ls', namespace: 'default' },
      spec: { parentRef: { name: 'gw' }, listeners: [] },
    });
    await until(() => store.get('ListenerSet', 'default', 'ls') !== undefined, 'ListenerSet after install');
    await until(() => provider!.state().find((s) => s.kind === 'ListenerSet')?.phase === 'watching');
  });

  test('a missing core kind is not skipped: sync waits', async () => {
    api.missing.add('/api/v1/services');
    await start([resourceForKind('Service')!]);
    // Two LISTs mean the first 404 was handled (and retried) without marking the store synced.
    await until(
      () => api.requests.filter((q) => q.method === 'GET' && q.path === '/api/v1/services').length >= 2,
      'a retried LIST',
    );
    assert.equal(store.isSynced(), false);
    api.missing.delete('/api/v1/services');
    await until(() => store.isSynced(), 'sync once Services exist');
  });

  test('stop() ends the watches', async () => {
    await start([resourceForKind('HTTPRoute')!, resourceForKind('Service')!]);
    await until(() => api.watchCount === 2);
    await provider!.stop();
    provider = undefined;
    await until(() => api.watchCount === 0, 'watches closed');
  });
});
