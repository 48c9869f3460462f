import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as path from 'node:path';
import { enterPrivateWorld } from './cluster/private-world';
import { PodWorld } from './cluster/pod-world';
import { BRIDGE_ADDRESS } from './cluster/pod-network';
import {
  envoyFleetRef,
  installManagedMode,
  loadBalancedEnvoyFleet,
  managedFleetArgs,
} from './cluster/managed-fleets';
import { ConvoyProcess, waitFor } from './harness';

enterPrivateWorld();

/**
 * Convoy's managed mode with real traffic (docs/architecture.md §13), inside the private world:
 * a Gateway of a class whose parameters name an EnvoyFleet (two replicas, LoadBalancer Service)
 * plus a ListenerSet on a second port. Convoy provisions the fleet, the pod runner runs both Envoy
 * pods, and requests through the load-balancer address reach echo-basic on both ports. Then the
 * fleet's Deployment is restarted (`kubectl rollout restart`) while a load generator keeps
 * sending requests, each on a new connection: none may fail, because every old pod drains
 * (preStop → shutdown manager → Envoy fails health checks and drains its listeners) while the
 * endpoint controller marks it not ready and the load balancer stops choosing it. Last, a static
 * address in spec.addresses (docs/operations.md §22) moves the load balancer and traffic follows.
 */

const NS = 'managed-traffic';
const CLASS = 'convoy-managed-traffic';
const FLEET = 'rolling';
const XDS_PORT = 18000;
const ECHO_IMAGE = 'registry.k8s.io/gateway-api/echo-basic:v1.6.1';
const GW_API = 'gateway.networking.k8s.io/v1';
/** The fleet objects' name: convoy-<gateway> (src/model/managed-fleet.ts). */
const DEPLOYMENT = 'convoy-gw';

interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  status?: { conditions?: { type: string; status: string }[] };
}

interface Deployment {
  metadata: { generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
  };
}

/**
 * One GET, on a fresh connection or on `agent`'s kept-alive one; resolves with the status and the
 * echoed namespace, never rejects.
 */
function probe(
  url: string,
  agent: http.Agent | false = false,
): Promise<{ status: number; namespace?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('error', (err) => resolve({ status: res.statusCode ?? 0, error: err.message }));
      res.on('end', () => {
        let namespace: string | undefined;
        try {
          namespace = (JSON.parse(body) as { namespace?: string }).namespace;
        } catch {
          namespace = undefined;
        }
        resolve({ status: res.statusCode ?? 0, namespace });
      });
    });
    req.on('error', (err) => resolve({ status: 0, error: err.message }));
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

/** Failures a LoadGenerator keeps for the assertion message, and its pause after each failure. */
const FAILURES_KEPT = 100;
const FAILURE_PAUSE_MS = 10;

/**
 * Sends requests from `workers` loops, round robin over `urls`, until stopped; counts every
 * outcome. Even workers open a connection per request; odd ones keep one connection alive
 * (reused until the server closes it), as most clients do, so an Envoy that exits without
 * draining resets requests on connections it still holds.
 */
class LoadGenerator {
  sent = 0;
  /** How many requests failed; `failures` keeps the first FAILURES_KEPT of them. */
  failed = 0;
  readonly failures: string[] = [];
  private stopped = false;
  private readonly loops: Promise<void>[] = [];

  constructor(urls: string[], workers: number) {
    for (let w = 0; w < workers; w++)
      this.loops.push(
        (async () => {
          const agent = w % 2 === 1 ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : false;
          for (let i = w; !this.stopped; i++) {
            const url = urls[i % urls.length];
            const r = await probe(url, agent);
            this.sent++;
            if (r.status !== 200 || r.namespace !== NS) {
              this.failed++;
              if (this.failures.length < FAILURES_KEPT)
                this.failures.push(
                  `${new Date().toISOString()} ${url}: ${r.error ?? `status ${r.status}, namespace ${r.namespace}`}`,
                );
              // A refused connection fails at once: without a pause the loop would spin and fill memory.
              await new Promise((resolve) => setTimeout(resolve, FAILURE_PAUSE_MS));
            }
          }
          if (agent) agent.destroy();
        })(),
      );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }
}

describe(
  'managed fleet: traffic through its load balancer, and a rolling restart',
  { timeout: 600_000 },
  () => {
    let world: PodWorld;
    let convoy: ConvoyProcess | undefined;
    const logs: string[] = [];
    const context = () =>
      `--- pod runner log (last 30) ---\n${logs.slice(-30).join('\n')}\n${convoy?.logContext(30) ?? ''}`;
    const apply = (objects: object[]) =>
      world.cluster.kubectlOk(['apply', '-f', '-'], {
        input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
      });
    const fleetPods = async () =>
      (
        await world.cluster.admin.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`, {
          query: { labelSelector: 'app.kubernetes.io/managed-by=convoy' },
        })
      ).items;
    const deployment = () =>
      world.cluster.admin.request<Deployment>(
        'GET',
        `/apis/apps/v1/namespaces/${NS}/deployments/${DEPLOYMENT}`,
      );
    const ready = (p: Pod) =>
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

    before(async () => {
      world = await PodWorld.start({ log: (l) => logs.push(l) });
      await installManagedMode(world.cluster);
      await world.cluster.admin.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
      await apply([
        loadBalancedEnvoyFleet(FLEET, { replicas: 2, drainTimeout: '5s' }),
        {
          apiVersion: GW_API,
          kind: 'GatewayClass',
          metadata: { name: CLASS },
          spec: { controllerName: 'convoy.dev/gateway-controller', parametersRef: envoyFleetRef(FLEET) },
        },
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'echo', namespace: NS },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'echo' } },
            template: {
              metadata: { labels: { app: 'echo' } },
              spec: {
                containers: [
                  {
                    name: 'echo',
                    image: ECHO_IMAGE,
                    env: [
                      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                      { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                    ],
                    ports: [{ name: 'http', containerPort: 3000 }],
                    readinessProbe: { httpGet: { path: '/health', port: 'http' }, periodSeconds: 1 },
                  },
                ],
              },
            },
          },
        },
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'echo', namespace: NS },
          spec: { selector: { app: 'echo' }, ports: [{ name: 'http', port: 8080, targetPort: 3000 }] },
        },
        {
          apiVersion: GW_API,
          kind: 'Gateway',
          metadata: { name: 'gw', namespace: NS },
          spec: {
            gatewayClassName: CLASS,
            allowedListeners: { namespaces: { from: 'Same' } },
            listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }],
          },
        },
        {
          apiVersion: GW_API,
          kind: 'ListenerSet',
          metadata: { name: 'extra', namespace: NS },
          spec: {
            parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' },
            listeners: [{ name: 'extra', protocol: 'HTTP', port: 8081 }],
          },
        },
        {
          apiVersion: GW_API,
          kind: 'HTTPRoute',
          metadata: { name: 'echo', namespace: NS },
          spec: {
            parentRefs: [
              { name: 'gw' },
              { group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: 'extra' },
            ],
            rules: [{ backendRefs: [{ name: 'echo', port: 8080 }] }],
          },
        },
      ]);
      convoy = await startConvoy();
    });
    const startConvoy = (name = 'convoy') =>
      ConvoyProcess.start({
        name,
        allowLoopbackEndpoints: false,
        args: [
          '--kubeconfig',
          world.cluster.convoyKubeconfig,
          '--xds-address',
          `${BRIDGE_ADDRESS}:${XDS_PORT}`,
          '--xds-server-name',
          BRIDGE_ADDRESS,
          '--leader-election-namespace',
          'convoy-system',
          ...managedFleetArgs(XDS_PORT),
        ],
        workDir: path.join(world.cluster.dir, name),
        readyTimeoutMs: 60_000,
      });
    after(async () => {
      await convoy?.stop().catch(() => undefined);
      await world?.teardown();
    });

    let urls: string[] = [];

    test('Convoy provisions two Envoy pods; traffic on both ports reaches echo-basic', async () => {
      const address = await waitFor(
        async () => {
          const gw = await world.cluster.admin.request<{ status?: { addresses?: { value: string }[] } }>(
            'GET',
            `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/gateways/gw`,
          );
          return gw.status?.addresses?.[0]?.value;
        },
        {
          what: "the Gateway's address from its fleet's Service",
          timeoutMs: 180_000,
          intervalMs: 500,
          context,
        },
      );
      assert.match(address, /^198\.51\.100\.\d+$/);
      await waitFor(
        async () => {
          const ps = (await fleetPods()).filter((p) => !p.metadata.deletionTimestamp);
          return ps.length === 2 && ps.every(ready);
        },
        { what: 'two Ready Envoy pods of the fleet', timeoutMs: 180_000, intervalMs: 500, context },
      );
      urls = [`http://${address}/port-80`, `http://${address}:8081/port-8081`];
      for (const url of urls)
        await waitFor(async () => (await probe(url)).namespace === NS, {
          what: `echo-basic answering ${url}`,
          timeoutMs: 120_000,
          intervalMs: 500,
          context,
        });
    });

    test('a rolling restart of the fleet under load drops no request', async (t) => {
      assert.ok(urls.length === 2, 'the first test found the address');
      const before = new Set((await fleetPods()).map((p) => p.metadata.name));
      const load = new LoadGenerator(urls, 4);
      try {
        await waitFor(() => load.sent >= 50, { what: '50 requests before the restart', timeoutMs: 60_000 });
        await world.cluster.kubectlOk(['-n', NS, 'rollout', 'restart', `deployment/${DEPLOYMENT}`]);
        await waitFor(
          async () => {
            const d = await deployment();
            const s = d.status ?? {};
            const pods = await fleetPods();
            const fresh = pods.filter((p) => !before.has(p.metadata.name));
            return (
              s.observedGeneration === d.metadata.generation &&
              s.updatedReplicas === 2 &&
              s.readyReplicas === 2 &&
              s.replicas === 2 &&
              pods.length === 2 &&
              fresh.length === 2 &&
              fresh.every(ready)
            );
          },
          {
            what: 'the rollout to replace both Envoy pods, the old ones deleted',
            timeoutMs: 300_000,
            intervalMs: 500,
            context,
          },
        );
        const after = load.sent;
        await waitFor(() => load.sent >= after + 50, {
          what: '50 requests after the restart',
          timeoutMs: 60_000,
        });
      } finally {
        await load.stop();
      }
      t.diagnostic(`rolling restart under load: ${load.sent} requests sent, ${load.failed} failed`);
      // Each old pod went through the drain: its Envoy's preStop call to the shutdown manager answered.
      const drained = [...before].filter((name) =>
        logs.some((l) => l.endsWith(`/${name}: envoy preStop done`)),
      );
      t.diagnostic(
        `pod runner log of the old pods: ${logs.filter((l) => [...before].some((n) => l.includes(n)) && /preStop|exited|terminating/.test(l)).join(' | ')}`,
      );
      assert.deepEqual(load.failures.slice(0, 20), [], `${load.failed} of ${load.sent} requests failed`);
      assert.deepEqual(
        drained.sort(),
        [...before].sort(),
        'every old Envoy pod drained through its preStop hook',
      );
    });

    type Condition = { type: string; status: string; reason: string; message: string };
    type GatewayObject = { status?: { conditions?: Condition[]; addresses?: { value: string }[] } };
    const gatewayObject = () =>
      world.cluster.admin.request<GatewayObject>(
        'GET',
        `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/gateways/gw`,
      );
    const condition = (gw: GatewayObject, type: string) =>
      gw.status?.conditions?.find((c) => c.type === type);
    const patchGateway = (patch: object) =>
      world.cluster.kubectlOk([
        '-n',
        NS,
        'patch',
        'gateway',
        'gw',
        '--type=merge',
        '-p',
        JSON.stringify(patch),
      ]);
    /** Sends `count` requests over the URLs under load and returns the failures. */
    const underLoad = async (count: number, during: () => Promise<void>): Promise<LoadGenerator> => {
      const load = new LoadGenerator(urls, 2);
      try {
        await during();
        const start = load.sent;
        await waitFor(() => load.sent >= start + count, {
          what: `${count} more requests`,
          timeoutMs: 120_000,
        });
      } finally {
        await load.stop();
      }
      return load;
    };

    test('an invalid edit keeps the same Envoy pods serving, also across a Convoy restart; a fix resumes updates', async (t) => {
      assert.ok(urls.length === 2, 'the first test found the address');
      const pods = (await fleetPods()).map((p) => p.metadata.name).sort();
      const address = new URL(urls[0]).hostname;
      const load = await underLoad(50, async () => {
        await patchGateway({
          spec: {
            infrastructure: {
              parametersRef: { group: 'gateway.convoy.dev', kind: 'EnvoyFleet', name: 'missing' },
            },
            listeners: [
              { name: 'http', protocol: 'HTTP', port: 80 },
              { name: 'more', protocol: 'HTTP', port: 8082 },
            ],
          },
        });
        const held = await waitFor(
          async () => {
            const gw = await gatewayObject();
            return condition(gw, 'convoy.dev/ServingLastGoodConfiguration')?.status === 'True'
              ? gw
              : undefined;
          },
          {
            what: 'the Gateway held at its last good configuration',
            timeoutMs: 60_000,
            intervalMs: 500,
            context,
          },
        );
        assert.equal(condition(held, 'Accepted')?.reason, 'InvalidParameters');
        assert.match(condition(held, 'Accepted')?.message ?? '', /missing/);
        assert.equal(held.status?.addresses?.[0]?.value, address, 'the address it is served at');
      });
      t.diagnostic(`invalid edit: ${load.sent} requests, ${load.failed} failed`);
      assert.deepEqual(
        load.failures.slice(0, 10),
        [],
        'requests keep succeeding while the Gateway is invalid',
      );
      assert.equal(
        (await probe(`http://${address}:8082/more`)).status,
        0,
        "the invalid edit's port is not opened",
      );
      assert.deepEqual((await fleetPods()).map((p) => p.metadata.name).sort(), pods, 'the same Envoy pods');

      // A restarted Convoy has nothing to hold: it leaves the fleet alone and serves it nothing.
      await convoy?.stop();
      convoy = await startConvoy('convoy-restarted');
      const restarted = await underLoad(50, async () => {
        await waitFor(
          async () => {
            const gw = await gatewayObject();
            return condition(gw, 'Accepted')?.status === 'False' &&
              condition(gw, 'convoy.dev/ServingLastGoodConfiguration') === undefined
              ? gw
              : undefined;
          },
          {
            what: "the restarted Convoy's status of the invalid Gateway",
            timeoutMs: 60_000,
            intervalMs: 500,
            context,
          },
        );
        // Several provisioner passes (debounce 100 ms) later the fleet is still there.
        await new Promise((r) => setTimeout(r, 3_000));
      });
      assert.deepEqual(restarted.failures.slice(0, 10), [], 'requests keep succeeding across the restart');
      assert.equal((await deployment()).spec?.replicas, 2, 'the Deployment was left alone');
      assert.deepEqual((await fleetPods()).map((p) => p.metadata.name).sort(), pods, 'the same Envoy pods');

      await patchGateway({ spec: { infrastructure: null } });
      await waitFor(async () => (await probe(`http://${address}:8082/more`)).namespace === NS, {
        what: 'the fixed Gateway serving its new port 8082',
        timeoutMs: 120_000,
        intervalMs: 500,
        context,
      });
      const fixed = await gatewayObject();
      assert.equal(condition(fixed, 'Accepted')?.status, 'True');
      assert.equal(condition(fixed, 'convoy.dev/ServingLastGoodConfiguration'), undefined);
    });

    test('a static address moves the load balancer and traffic follows; one it cannot give stays pending', async () => {
      const gatewayPath = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/gateways/gw`;
      const requestAddress = (value: string) =>
        world.cluster.admin.request('PATCH', gatewayPath, {
          contentType: 'application/merge-patch+json',
          body: { spec: { addresses: [{ type: 'IPAddress', value }] } },
        });
      const gatewayStatus = async () =>
        (
          await world.cluster.admin.request<{
            status?: {
              addresses?: { type: string; value: string }[];
              conditions?: { type: string; status: string; reason: string }[];
            };
          }>('GET', gatewayPath)
        ).status ?? {};
      const programmed = (s: Awaited<ReturnType<typeof gatewayStatus>>) =>
        s.conditions?.find((c) => c.type === 'Programmed');
      // In the load balancer's pool (198.51.100.10-254): it moves there and reports it.
      const usable = '198.51.100.222';
      await requestAddress(usable);
      await waitFor(
        async () => {
          const s = await gatewayStatus();
          return (
            programmed(s)?.status === 'True' &&
            JSON.stringify(s.addresses) === JSON.stringify([{ type: 'IPAddress', value: usable }])
          );
        },
        { what: `Gateway Programmed at ${usable}`, timeoutMs: 60_000, intervalMs: 500, context },
      );
      await waitFor(async () => (await probe(`http://${usable}/static`)).namespace === NS, {
        what: `echo-basic answering at ${usable}`,
        timeoutMs: 60_000,
        intervalMs: 500,
        context,
      });
      // Outside the pool: the load balancer leaves the Service pending, the Gateway is not programmed.
      await requestAddress('203.0.113.222');
      await waitFor(
        async () => {
          const s = await gatewayStatus();
          return programmed(s)?.reason === 'AddressNotAssigned' && (s.addresses ?? []).length === 0;
        },
        { what: 'Gateway Programmed=False/AddressNotAssigned', timeoutMs: 60_000, intervalMs: 500, context },
      );
      assert.ok(
        logs.some((l) => /convoy-gw requests 203\.0\.113\.222, which the pool cannot give/.test(l)),
        'the load balancer refused the address',
      );
    });

    test('deleting the Gateway removes its fleet', async () => {
      await world.cluster.kubectlOk(['-n', NS, 'delete', 'gateway', 'gw', '--wait=false']);
      await waitFor(
        async () => {
          try {
            await deployment();
            return false;
          } catch {
            return true;
          }
        },
        { what: "the fleet's Deployment deleted", timeoutMs: 120_000, intervalMs: 500, context },
      );
    });
  },
);
