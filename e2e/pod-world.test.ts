import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { enterPrivateWorld } from './cluster/private-world';
import { PodWorld } from './cluster/pod-world';
import { waitFor } from './harness';

enterPrivateWorld();

/**
 * The pod world (e2e/cluster/README.md): inside a private network namespace, a real
 * kube-apiserver, kube-controller-manager, the pod runner standing in for the kubelet and the
 * load-balancer controller. A Deployment of the conformance suite's echo-basic becomes Ready
 * pods with their own addresses, EndpointSlices list them, a LoadBalancer Service gets an
 * address whose traffic reaches both pods, and a deleted pod's process ends while its
 * ReplicaSet replaces it. A second pod proves volumes (ConfigMap items, Secret) at absolute
 * mount paths and environment from fieldRef, ConfigMap and Secret keys, read with `kubectl logs`.
 */

const NS = 'pod-world';
const ECHO_IMAGE = 'registry.k8s.io/gateway-api/echo-basic:v1.6.1';

interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status?: { podIP?: string; phase?: string; conditions?: { type: string; status: string }[] };
}

const ready = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

describe('pod world: pod runner, controllers and load balancer', { timeout: 300_000 }, () => {
  let world: PodWorld;
  const logs: string[] = [];
  const context = () => `--- pod runner log (last 30) ---\n${logs.slice(-30).join('\n')}`;

  before(async () => {
    world = await PodWorld.start({ log: (l) => logs.push(l) });
    const admin = world.cluster.admin;
    await admin.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
  });
  after(async () => {
    await world?.teardown();
  });

  const pods = async (selector: string) =>
    (
      await world.cluster.admin.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`, {
        query: { labelSelector: selector },
      })
    ).items;

  test('a Deployment of echo-basic serves through a LoadBalancer Service; a deleted pod is replaced', async (t) => {
    t.diagnostic(`pod world start-up (ms): ${JSON.stringify(world.timings)}`);
    const admin = world.cluster.admin;
    const created = Date.now();
    await admin.request('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, {
      body: {
        metadata: { name: 'echo' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'echo' } },
          template: {
            metadata: { labels: { app: 'echo' } },
            spec: {
              terminationGracePeriodSeconds: 5,
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
    });
    await admin.request('POST', `/api/v1/namespaces/${NS}/services`, {
      body: {
        metadata: { name: 'echo' },
        spec: {
          type: 'LoadBalancer',
          selector: { app: 'echo' },
          ports: [{ name: 'http', port: 80, targetPort: 3000 }],
        },
      },
    });

    const running = await waitFor(
      async () => {
        const ps = (await pods('app=echo')).filter((p) => !p.metadata.deletionTimestamp);
        return ps.length === 2 && ps.every(ready) ? ps : undefined;
      },
      { what: 'two Ready echo pods', timeoutMs: 120_000, intervalMs: 250, context },
    );
    t.diagnostic(`Deployment created → 2 Ready pods: ${Date.now() - created} ms`);
    const ips = running.map((p) => p.status!.podIP!).sort();
    for (const a of ips) assert.match(a, /^192\.0\.2\.\d+$/);
    assert.notEqual(ips[0], ips[1]);

    await waitFor(
      async () => {
        const slices = await admin.request<{
          items: { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] }[];
        }>('GET', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, {
          query: { labelSelector: 'kubernetes.io/service-name=echo' },
        });
        const listed = slices.items
          .flatMap((s) => s.endpoints ?? [])
          .filter((e) => e.conditions?.ready !== false)
          .flatMap((e) => e.addresses)
          .sort();
        return JSON.stringify(listed) === JSON.stringify(ips);
      },
      { what: `EndpointSlices listing ${ips.join(', ')}`, timeoutMs: 60_000, intervalMs: 250, context },
    );

    const lbAddress = await waitFor(
      async () => {
        const svc = await admin.request<{ status?: { loadBalancer?: { ingress?: { ip?: string }[] } } }>(
          'GET',
          `/api/v1/namespaces/${NS}/services/echo`,
        );
        return svc.status?.loadBalancer?.ingress?.[0]?.ip;
      },
      { what: 'a load-balancer address on Service echo', timeoutMs: 30_000, intervalMs: 200 },
    );
    assert.match(lbAddress, /^198\.51\.100\.\d+$/);

    const names = running.map((p) => p.metadata.name).sort();
    const seen = await waitFor(
      async () => {
        const got = new Set<string>();
        for (let i = 0; i < 6; i++) {
          const res = await get(`http://${lbAddress}/hello`);
          assert.equal(res.status, 200);
          const echoed = JSON.parse(res.body) as { pod: string; namespace: string; path: string };
          assert.equal(echoed.namespace, NS);
          assert.equal(echoed.path, '/hello');
          got.add(echoed.pod);
        }
        return got.size === 2 ? [...got].sort() : undefined;
      },
      {
        what: 'answers from both echo pods through the load balancer',
        timeoutMs: 30_000,
        intervalMs: 200,
        context,
      },
    );
    assert.deepEqual(seen, names);

    const victim = running[0];
    const pid = world.runner.running(NS, victim.metadata.name)?.containers[0].pid;
    assert.ok(pid, 'the pod runner knows the victim pod process');
    await admin.request('DELETE', `/api/v1/namespaces/${NS}/pods/${victim.metadata.name}`);
    const deleted = Date.now();
    await waitFor(
      () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      { what: `the deleted pod's process ${pid} to end`, timeoutMs: 30_000, intervalMs: 100, context },
    );
    const replaced = await waitFor(
      async () => {
        const ps = await pods('app=echo');
        const fresh = ps.filter((p) => !names.includes(p.metadata.name));
        return ps.length === 2 && fresh.length === 1 && ps.every(ready) ? fresh[0] : undefined;
      },
      {
        what: 'the ReplicaSet to replace the deleted pod with a Ready one',
        timeoutMs: 120_000,
        intervalMs: 250,
        context,
      },
    );
    t.diagnostic(`pod deleted → replacement Ready: ${Date.now() - deleted} ms`);
    assert.notEqual(replaced.metadata.name, victim.metadata.name);
    const after = await waitFor(
      async () => {
        const got = new Set<string>();
        for (let i = 0; i < 6; i++)
          got.add((JSON.parse((await get(`http://${lbAddress}/`)).body) as { pod: string }).pod);
        return got.has(replaced.metadata.name) && !got.has(victim.metadata.name) ? got : undefined;
      },
      {
        what: 'the load balancer to reach the replacement pod only',
        timeoutMs: 60_000,
        intervalMs: 250,
        context,
      },
    );
    assert.equal(after.size, 2);
  });

  test('ConfigMap and Secret volumes appear at their mountPath; env comes from fieldRef, ConfigMap and Secret', async () => {
    const admin = world.cluster.admin;
    await admin.request('POST', `/api/v1/namespaces/${NS}/configmaps`, {
      body: { metadata: { name: 'settings' }, data: { greeting: 'hello from a configmap', colour: 'blue' } },
    });
    await admin.request('POST', `/api/v1/namespaces/${NS}/secrets`, {
      body: { metadata: { name: 'creds' }, data: { token: Buffer.from('s3cret-token').toString('base64') } },
    });
    const script =
      'echo "file=$(cat /etc/convoy-test/conf/greeting.txt)"; echo "secret=$(cat /etc/secret-volume/tok)";' +
      ' echo "env=$MY_POD/$COLOUR/$TOKEN/$DERIVED"; ls /etc/convoy-test/conf; exec sleep 1000';
    await admin.request('POST', `/api/v1/namespaces/${NS}/pods`, {
      body: {
        metadata: { name: 'volumes', labels: { app: 'volumes' } },
        spec: {
          terminationGracePeriodSeconds: 2,
          containers: [
            {
              name: 'main',
              image: ECHO_IMAGE,
              command: ['/bin/sh', '-c', script],
              env: [
                { name: 'MY_POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'COLOUR', valueFrom: { configMapKeyRef: { name: 'settings', key: 'colour' } } },
                { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } },
                { name: 'DERIVED', value: '$(COLOUR)-sky' },
              ],
              volumeMounts: [
                { name: 'conf', mountPath: '/etc/convoy-test/conf', readOnly: true },
                { name: 'sec', mountPath: '/etc/secret-volume' },
              ],
            },
          ],
          volumes: [
            {
              name: 'conf',
              configMap: { name: 'settings', items: [{ key: 'greeting', path: 'greeting.txt' }] },
            },
            { name: 'sec', secret: { secretName: 'creds', items: [{ key: 'token', path: 'tok' }] } },
          ],
        },
      },
    });
    await waitFor(async () => (await pods('app=volumes')).some(ready), {
      what: 'pod volumes Ready',
      timeoutMs: 60_000,
      intervalMs: 250,
      context,
    });
    // Read through the API server, which proxies to the pod runner's kubelet endpoint.
    const out = await waitFor(
      async () => {
        const text = await world.cluster.kubectlOk(['-n', NS, 'logs', 'volumes', '-c', 'main']);
        return text.includes('greeting.txt') ? text : undefined;
      },
      {
        what: 'kubectl logs to show the volumes pod printing its files and environment',
        timeoutMs: 30_000,
        intervalMs: 200,
        context,
      },
    );
    assert.match(out, /^file=hello from a configmap$/m);
    assert.match(out, /^secret=s3cret-token$/m);
    assert.match(out, /^env=volumes\/blue\/s3cret-token\/blue-sky$/m);
    assert.match(out, /^greeting\.txt$/m, 'only the listed item is projected');
    assert.ok(!out.includes('colour'), 'keys not listed in items are not projected');
    const future = new Date(Date.now() + 3_600_000).toISOString();
    assert.equal(await world.cluster.kubectlOk(['-n', NS, 'logs', 'volumes', `--since-time=${future}`]), '');
    assert.match(
      await world.cluster.kubectlOk(['-n', NS, 'logs', 'volumes', '--tail=1']),
      /^greeting\.txt\n$/,
    );
    assert.ok(!fs.existsSync('/etc/secret-volume'), "the host's /etc is untouched");
    assert.ok(!fs.existsSync('/etc/convoy-test'), "the host's /etc is untouched");
  });
  test('a crashing container is restarted with backoff; kubectl logs --previous shows the last run', async () => {
    const admin = world.cluster.admin;
    await admin.request('POST', `/api/v1/namespaces/${NS}/pods`, {
      body: {
        metadata: { name: 'crasher', labels: { app: 'crasher' } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'main',
              image: ECHO_IMAGE,
              command: ['/bin/sh', '-c', 'echo "run at $(date +%s%N)"; exit 3'],
            },
          ],
        },
      },
    });
    interface Status {
      restartCount: number;
      lastState?: { terminated?: { exitCode: number } };
    }
    const status = await waitFor(
      async () => {
        const pod = await admin.request<{ status?: { phase?: string; containerStatuses?: Status[] } }>(
          'GET',
          `/api/v1/namespaces/${NS}/pods/crasher`,
        );
        const cs = pod.status?.containerStatuses?.[0];
        return cs && cs.restartCount >= 2 ? { phase: pod.status?.phase, cs } : undefined;
      },
      { what: 'the crashing container to be restarted twice', timeoutMs: 60_000, intervalMs: 250, context },
    );
    assert.equal(status.phase, 'Running', 'restartPolicy Always keeps the pod Running');
    assert.equal(status.cs.lastState?.terminated?.exitCode, 3);
    const previous = await world.cluster.kubectlOk(['-n', NS, 'logs', 'crasher', '--previous']);
    assert.match(previous, /^run at \d+\n$/);
  });
});
