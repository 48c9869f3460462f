import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { LocalCluster } from './cluster/cluster';
import { waitFor, sleep } from './harness/util';
import { ObjectStore } from '../src/store/store';
import { silentLogger } from '../src/observability/logger';
import { ConvoyMetrics } from '../src/observability/metrics';
import { KubeClient, loadKubeConfig, KubeApiError } from '../src/kubernetes/client';
import { KubernetesProvider } from '../src/providers/kubernetes/provider';
import { KubernetesStatusWriter } from '../src/kubernetes/status-writer';
import { LeaderElector } from '../src/kubernetes/lease';
import type { ObjectStatus } from '../src/status/types';

/**
 * The provider, the status writer and the leader election against a real kube-apiserver and
 * etcd, authenticated as Convoy's ServiceAccount with only the RBAC of deploy/01-rbac.yaml.
 */

const GW = '/apis/gateway.networking.k8s.io/v1';
const OURS = 'convoy.dev/gateway-controller';

interface Obj {
  apiVersion?: string;
  kind?: string;
  metadata: Record<string, unknown> & { name: string; namespace?: string; resourceVersion?: string };
  spec?: unknown;
  status?: Record<string, unknown>;
  [k: string]: unknown;
}

let cluster: LocalCluster;
let admin: KubeClient;

async function create(collection: string, obj: Obj): Promise<Obj> {
  return admin.request<Obj>('POST', collection, { body: obj });
}

function cond(
  type: string,
  status: 'True' | 'False',
  reason: string,
  t = new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
) {
  return { type, status, reason, message: '', observedGeneration: 1, lastTransitionTime: t };
}

describe('Kubernetes modules against a real API server', { timeout: 240_000 }, () => {
  before(async () => {
    cluster = await LocalCluster.start();
    admin = cluster.admin;
    await create('/api/v1/namespaces', { metadata: { name: 'apps' } });
  });
  after(async () => {
    await cluster?.teardown();
  });

  test('Convoy’s RBAC: reads what it needs, cannot touch spec or Secrets', async () => {
    const convoy = new KubeClient(loadKubeConfig(cluster.convoyKubeconfig));
    try {
      await convoy.request('GET', `${GW}/httproutes`);
      await convoy.request('GET', '/api/v1/secrets', { query: { fieldSelector: 'type=kubernetes.io/tls' } });
      await convoy.request('GET', '/apis/discovery.k8s.io/v1/endpointslices');
      const denied = async (method: string, p: string, body?: unknown) => {
        const err = await convoy.request(method, p, { body }).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(err instanceof KubeApiError && err.statusCode === 403, `${method} ${p} must be forbidden`);
      };
      await denied('POST', `${GW}/namespaces/apps/httproutes`, {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'nope' },
        spec: {},
      });
      await denied('POST', '/api/v1/namespaces/apps/secrets', { metadata: { name: 'nope' } });
      // ConfigMaps are read (CA bundles of BackendTLSPolicies and of client certificate
      // validation, docs/gateway-api.md §24–25), never written.
      await convoy.request('GET', '/api/v1/configmaps');
      await denied('POST', '/api/v1/namespaces/apps/configmaps', { metadata: { name: 'nope' } });
      await denied('GET', '/api/v1/namespaces/apps/pods');
      await denied('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases');
    } finally {
      convoy.close();
    }
  });

  test('provider: fills the store, filters Secrets, follows changes, survives an API server restart', async () => {
    const store = new ObjectStore();
    const provider = new KubernetesProvider({
      kubeconfig: cluster.convoyKubeconfig,
      store,
      logger: silentLogger(),
      metrics: new ConvoyMetrics(),
      backoffBaseMs: 100,
      backoffMaxMs: 1000,
    });
    await create(`${GW}/gatewayclasses`, {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'prov', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } },
      spec: { controllerName: OURS },
    });
    await create('/api/v1/namespaces/apps/secrets', {
      metadata: { name: 'tls' },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from('crt').toString('base64'),
        'tls.key': Buffer.from('key').toString('base64'),
        'ca.crt': 'Y2E=',
      },
    });
    await create('/api/v1/namespaces/apps/secrets', {
      metadata: { name: 'opaque' },
      type: 'Opaque',
      data: { p: 'cA==' },
    });
    try {
      await provider.start();
      await waitFor(() => store.isSynced(), { what: 'initial sync' });
      const gc = store.get('GatewayClass', '', 'prov');
      assert.ok(gc);
      assert.equal(gc.apiVersion, 'gateway.networking.k8s.io/v1');
      assert.equal(gc.kind, 'GatewayClass');
      assert.equal(gc.metadata.annotations, undefined);
      assert.equal((gc.metadata as unknown as Record<string, unknown>).managedFields, undefined);
      assert.deepEqual(store.get('Secret', 'apps', 'tls')?.data, {
        'tls.crt': Buffer.from('crt').toString('base64'),
        'tls.key': Buffer.from('key').toString('base64'),
      });
      assert.equal(store.get('Secret', 'apps', 'opaque'), undefined);
      assert.ok(store.get('Namespace', '', 'apps'));

      // A watch event.
      await create(`${GW}/namespaces/apps/httproutes`, {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'r1' },
        spec: { parentRefs: [{ name: 'gw' }] },
      });
      await waitFor(() => store.get('HTTPRoute', 'apps', 'r1'), { what: 'HTTPRoute via watch' });

      // API server outage: the store keeps its content; changes after the restart arrive and a
      // deletion is seen.
      await cluster.stopApiServer();
      await sleep(1500);
      assert.ok(store.get('HTTPRoute', 'apps', 'r1'), 'the store keeps the last state during the outage');
      await cluster.startApiServer();
      await admin.request('DELETE', `${GW}/namespaces/apps/httproutes/r1`);
      await create(`${GW}/namespaces/apps/httproutes`, {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'r2' },
        spec: { parentRefs: [{ name: 'gw' }] },
      });
      await waitFor(() => store.get('HTTPRoute', 'apps', 'r2') && !store.get('HTTPRoute', 'apps', 'r1'), {
        what: 'changes made after the API server restart',
        timeoutMs: 45_000,
      });
      assert.ok(provider.state().every((s) => s.synced));
    } finally {
      await provider.stop();
    }
  });

  test('status writer: writes as leader only, keeps other controllers’ parents, skips no-op writes', async () => {
    await create(`${GW}/namespaces/apps/httproutes`, {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'shared' },
      spec: { parentRefs: [{ name: 'gw' }, { name: 'other-gw' }] },
    });
    // Another controller has already written its parent status.
    const foreign = {
      parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'other-gw' },
      controllerName: 'example.com/other',
      conditions: [cond('Accepted', 'True', 'Accepted', '2025-01-01T00:00:00Z')],
    };
    const current = await admin.request<Obj>('GET', `${GW}/namespaces/apps/httproutes/shared`);
    await admin.request('PUT', `${GW}/namespaces/apps/httproutes/shared/status`, {
      body: { ...current, status: { parents: [foreign] } },
    });

    const metrics = new ConvoyMetrics();
    const writer = new KubernetesStatusWriter({
      kubeconfig: cluster.convoyKubeconfig,
      controllerName: OURS,
      logger: silentLogger(),
      metrics,
    });
    const status = (accepted: 'True' | 'False'): ObjectStatus => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { namespace: 'apps', name: 'shared', generation: 1 },
      status: {
        parents: [
          {
            parentRef: { name: 'gw' },
            controllerName: OURS,
            conditions: [
              cond('Accepted', accepted, accepted === 'True' ? 'Accepted' : 'NoMatchingParent'),
              cond('ResolvedRefs', 'True', 'ResolvedRefs'),
            ],
          },
        ],
      },
    });
    try {
      writer.publish([status('False')]);
      await sleep(300);
      let stored = await admin.request<Obj>('GET', `${GW}/namespaces/apps/httproutes/shared`);
      assert.deepEqual(stored.status, { parents: [foreign] }, 'a follower writes nothing');

      writer.setLeader(true);
      await writer.idle();
      stored = await admin.request<Obj>('GET', `${GW}/namespaces/apps/httproutes/shared`);
      const parents = stored.status!.parents as Record<string, unknown>[];
      assert.equal(parents.length, 2);
      assert.deepEqual(parents[0], foreign, 'the other controller’s entry is untouched');
      assert.equal(parents[1].controllerName, OURS);
      const managers = (stored.metadata.managedFields as { manager: string; subresource?: string }[]).filter(
        (m) => m.subresource === 'status',
      );
      assert.ok(managers.length >= 1);

      // Same status with a newer lastTransitionTime: no write, resourceVersion unchanged.
      const rv = stored.metadata.resourceVersion;
      await sleep(1100);
      writer.publish([status('False')]);
      await writer.idle();
      stored = await admin.request<Obj>('GET', `${GW}/namespaces/apps/httproutes/shared`);
      assert.equal(stored.metadata.resourceVersion, rv);

      // A change is written; ResolvedRefs keeps its lastTransitionTime, Accepted gets a new one.
      const before = (parents[1].conditions as { type: string; lastTransitionTime: string }[]).find(
        (c) => c.type === 'ResolvedRefs',
      )!.lastTransitionTime;
      writer.publish([status('True')]);
      await writer.idle();
      stored = await admin.request<Obj>('GET', `${GW}/namespaces/apps/httproutes/shared`);
      const ours = (stored.status!.parents as Record<string, unknown>[])[1];
      const conds = ours.conditions as { type: string; status: string; lastTransitionTime: string }[];
      assert.equal(conds.find((c) => c.type === 'Accepted')!.status, 'True');
      assert.equal(conds.find((c) => c.type === 'ResolvedRefs')!.lastTransitionTime, before);

      // A deleted object gets no status (and is not recreated).
      await admin.request('DELETE', `${GW}/namespaces/apps/httproutes/shared`);
      writer.publish([status('False')]);
      await writer.idle();
      const gone = await admin
        .request('GET', `${GW}/namespaces/apps/httproutes/shared`)
        .catch((e: unknown) => e);
      assert.ok(gone instanceof KubeApiError && gone.statusCode === 404);
      const result = await metrics.statusWrites.get();
      assert.equal(result.values.find((v) => v.labels.result === 'gone')?.value, 1);
    } finally {
      await writer.stop();
    }
  });

  test('leader election: one leader of two; graceful handover; takeover after a crash within the lease duration', async () => {
    // Long enough that a busy CPU or a slow API server does not cost a leader its Lease (each
    // request may take up to a retry period), with a wide gap between the next attempt of a
    // standby (one retry period) and the expiry of a Lease nobody released.
    const timing = { leaseDurationMs: 20_000, renewDeadlineMs: 12_000, retryPeriodMs: 2000 };
    const make = (identity: string) =>
      new LeaderElector({
        kubeconfig: cluster.convoyKubeconfig,
        logger: silentLogger(),
        namespace: 'convoy-system',
        identity,
        ...timing,
      });
    const a = make('replica-a');
    const b = make('replica-b');
    a.start();
    await waitFor(() => a.isLeader, { what: 'a leads' });
    b.start();
    await waitFor(() => b.leader === 'replica-a', { what: 'b sees a' });
    for (let i = 0; i < 5; i++) {
      assert.equal(a.isLeader && !b.isLeader, true);
      await sleep(200);
    }
    await a.stop();
    // Without the release, b would wait for the Lease to expire (about a lease duration).
    await waitFor(() => b.isLeader, {
      what: 'b takes over after a released the lease',
      timeoutMs: timing.leaseDurationMs / 2,
    });

    // A replica in its own process that leads, then is SIGKILLed (no release).
    await b.stop();
    const script = `
      const { LeaderElector } = require(${JSON.stringify(path.resolve(__dirname, '../src/kubernetes/lease.js'))});
      const { silentLogger } = require(${JSON.stringify(path.resolve(__dirname, '../src/observability/logger.js'))});
      const e = new LeaderElector({ kubeconfig: ${JSON.stringify(cluster.convoyKubeconfig)}, logger: silentLogger(),
        namespace: 'convoy-system', identity: 'replica-c', ...${JSON.stringify(timing)},
        onStartedLeading: () => console.log('LEADING') });
      e.start();`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await waitFor(() => out.includes('LEADING'), { what: 'child leads' });
      const d = make('replica-d');
      d.start();
      await waitFor(() => d.leader === 'replica-c', { what: 'd sees c' });
      child.kill('SIGKILL');
      // d takes over once the Lease expires: about a lease duration after c's last renewal.
      await waitFor(() => d.isLeader, {
        what: 'd takes over from the crashed leader',
        timeoutMs: 2 * timing.leaseDurationMs,
      });
      const lease = await admin.request<{ spec: { holderIdentity: string; leaseTransitions: number } }>(
        'GET',
        '/apis/coordination.k8s.io/v1/namespaces/convoy-system/leases/convoy-leader',
      );
      assert.equal(lease.spec.holderIdentity, 'replica-d');
      assert.ok(lease.spec.leaseTransitions >= 2);
      await d.stop();
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('Kubernetes provider when the Gateway API CRDs are not installed yet', { timeout: 120_000 }, () => {
  let bare: LocalCluster;
  before(async () => {
    bare = await LocalCluster.start({ crds: false });
  });
  after(async () => {
    await bare?.teardown();
  });

  test('syncs without them (warning), then picks them up once installed', async () => {
    const store = new ObjectStore();
    const provider = new KubernetesProvider({
      kubeconfig: bare.convoyKubeconfig,
      store,
      logger: silentLogger(),
      missingRetryMs: 500,
    });
    try {
      await provider.start();
      await waitFor(() => store.isSynced(), { what: 'sync without CRDs', timeoutMs: 30_000 });
      // A missing CRD is listed again every missingRetryMs (phase 'listing' meanwhile).
      await waitFor(() => provider.state().find((s) => s.kind === 'HTTPRoute')?.phase === 'missing', {
        what: 'HTTPRoute reported missing',
      });
      await bare.installCrds();
      await bare.admin.request('POST', `${GW}/gatewayclasses`, {
        body: {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'GatewayClass',
          metadata: { name: 'late' },
          spec: { controllerName: OURS },
        },
      });
      await waitFor(() => store.get('GatewayClass', '', 'late'), {
        what: 'GatewayClass after CRD install',
        timeoutMs: 30_000,
      });
    } finally {
      await provider.stop();
    }
  });
});
