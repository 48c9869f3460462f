import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { waitFor } from './harness';
import type { ConvoyProcess } from './harness';
import { GW_API, K8sWorld, cond } from './cluster/k8s-world';
import type { KObject } from './cluster/k8s-world';
import { REPO_ROOT } from './cluster/cluster';
import { ControllerManager } from './conformance/run';
import { ownedObjectPath } from '../src/fleets/kubernetes/owned-kinds';
import { KubeApiError } from '../src/kubernetes/client';

/**
 * Managed fleets against a real kube-apiserver (docs/architecture.md §13): two Convoy replicas with
 * --managed-fleets; the leader provisions each managed Gateway's objects, converges them when
 * ListenerSets add or remove ports, restores what is deleted by hand, keeps one set of objects
 * across a failover, and kube-controller-manager's garbage collector deletes a fleet with its
 * Gateway. Routability values give the Service shapes and conditions; addresses come from the
 * Service. The Envoy pods themselves are not run here (no kubelet).
 */

const NS = 'infra';
const FLEET_KINDS = ['ServiceAccount', 'Secret', 'ConfigMap', 'Service', 'Deployment', 'PodDisruptionBudget'];

function envoyFleet(name: string, spec: Record<string, unknown>): KObject {
  return {
    apiVersion: 'gateway.convoy.dev/v1alpha1',
    kind: 'EnvoyFleet',
    metadata: { name, namespace: NS },
    spec,
  };
}

function listenerSet(name: string, gateway: string, port: number): KObject {
  return {
    apiVersion: GW_API,
    kind: 'ListenerSet',
    metadata: { name, namespace: NS },
    spec: { parentRef: { name: gateway }, listeners: [{ name: 'http', protocol: 'HTTP', port }] },
  };
}

function gateway(name: string, extra: Record<string, unknown> = {}): KObject {
  return {
    apiVersion: GW_API,
    kind: 'Gateway',
    metadata: { name, namespace: NS },
    spec: {
      gatewayClassName: 'convoy-managed',
      listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }],
      allowedListeners: { namespaces: { from: 'Same' } },
      ...extra,
    },
  };
}

describe('managed fleets: provisioning by the leader', { timeout: 600_000 }, () => {
  let w: K8sWorld;
  let kcm: ControllerManager;
  const convoys: ConvoyProcess[] = [];

  const getOwned = async (kind: string, name: string): Promise<KObject | undefined> => {
    try {
      return await w.admin.request<KObject>('GET', ownedObjectPath(kind, NS, name));
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
      throw err;
    }
  };
  const servicePorts = async (name: string) =>
    (((await getOwned('Service', name))?.spec?.ports ?? []) as { port: number; targetPort: number }[])
      .map((p) => `${p.port}->${p.targetPort}`)
      .sort();
  const waitPorts = (name: string, want: string[], what: string) =>
    waitFor(async () => JSON.stringify(await servicePorts(name)) === JSON.stringify(want), {
      what,
      timeoutMs: 30_000,
    });
  const leaderOf = async () => {
    const lease = await w.get('Lease', 'convoy-system', 'convoy-leader');
    const holder = (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? '';
    return convoys.find((c) => c.running && holder.endsWith(`_${c.pid}`));
  };

  before(async () => {
    w = await K8sWorld.create();
    for (const f of ['00-crd-envoyfleet.yaml', '01-rbac-provisioner.yaml'])
      await w.cluster.kubectlOk(['apply', '-f', path.join(REPO_ROOT, 'deploy', 'managed', f)]);
    await w.cluster.kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    kcm = await ControllerManager.start(w.cluster);
    await w.namespace(NS);
    await w.apply(
      envoyFleet('edge', {
        routabilities: ['Public', 'Private', 'Cluster'],
        privateLoadBalancer: { provider: 'AWS' },
        workload: { replicas: 2, drainTimeout: '20s' },
      }),
    );
    await w.apply({
      apiVersion: GW_API,
      kind: 'GatewayClass',
      metadata: { name: 'convoy-managed' },
      spec: {
        controllerName: 'convoy.dev/gateway-controller',
        parametersRef: { group: 'gateway.convoy.dev', kind: 'EnvoyFleet', name: 'edge', namespace: NS },
      },
    });
    await w.apply(
      gateway('gw', {
        infrastructure: { labels: { team: 'a' }, annotations: { 'example.com/owner': 'team-a' } },
      }),
    );
    await w.apply(listenerSet('ls-1', 'gw', 8081));
    await w.apply(listenerSet('ls-2', 'gw', 8082));
    const args = ['--managed-fleets', '--fleet-xds-address', '192.0.2.10:18000'];
    convoys.push(await w.startConvoy('replica-a', args));
    convoys.push(await w.startConvoy('replica-b', args));
  });
  after(async () => {
    await kcm?.stop();
    await w?.dispose();
  });

  test('a Gateway with two ListenerSets gets its fleet, owned by it and labelled', async () => {
    await waitPorts(
      'convoy-gw',
      ['80->10080', '8081->8081', '8082->8082'],
      'Service with every listener port',
    );
    const gw = await w.get('Gateway', NS, 'gw');
    for (const kind of FLEET_KINDS) {
      const obj = await waitFor(() => getOwned(kind, 'convoy-gw'), { what: `${kind} convoy-gw` });
      const meta = obj.metadata as { labels?: Record<string, string>; annotations?: Record<string, string> };
      const owners = obj.metadata.ownerReferences as { kind: string; uid: string; controller: boolean }[];
      assert.deepEqual(
        owners.map((o) => [o.kind, o.uid, o.controller]),
        [['Gateway', String(gw!.metadata.uid), true]],
        kind,
      );
      assert.equal(meta.labels?.team, 'a', `${kind} carries the infrastructure label`);
      assert.equal(meta.annotations?.['example.com/owner'], 'team-a', `${kind} carries the annotation`);
      assert.equal(meta.labels?.['app.kubernetes.io/managed-by'], 'convoy');
    }
    const deployment = (await getOwned('Deployment', 'convoy-gw'))!;
    const pod = (deployment.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    assert.equal(pod.terminationGracePeriodSeconds, 35);
    const envoy = (pod.containers as { name: string; ports: { containerPort: number }[] }[])[0];
    assert.deepEqual(
      envoy.ports.map((p) => p.containerPort),
      [10080, 8081, 8082, 19001],
    );
    // The fleet's client certificate names its Gateway and comes from the CA the replicas share.
    const secret = (await getOwned('Secret', 'convoy-gw'))!;
    const caSecret = (await w.get('Secret', 'convoy-system', 'convoy-xds-ca'))!;
    const pem = (data: unknown, key: string) =>
      Buffer.from((data as Record<string, string>)[key], 'base64').toString('utf8');
    const leaf = new X509Certificate(pem(secret.data, 'tls.crt'));
    const ca = new X509Certificate(pem(caSecret.data, 'ca.crt'));
    assert.match(leaf.subjectAltName ?? '', /URI:spiffe:\/\/convoy\/gateway\/infra\/gw/);
    assert.ok(leaf.verify(ca.publicKey), 'issued by the shared xDS CA');
    assert.equal(pem(secret.data, 'ca.crt'), pem(caSecret.data, 'ca.crt'));
    const cm = (await getOwned('ConfigMap', 'convoy-gw'))!;
    assert.match((cm.data as Record<string, string>)['envoy.yaml'], /cluster: infra\/gw/);
  });

  test('ListenerSet ports open and close on the Service; a deleted Service comes back', async () => {
    await w.apply(listenerSet('ls-3', 'gw', 8083));
    await waitPorts('convoy-gw', ['80->10080', '8081->8081', '8082->8082', '8083->8083'], 'port 8083 added');
    await w.delete('ListenerSet', NS, 'ls-3');
    await waitPorts('convoy-gw', ['80->10080', '8081->8081', '8082->8082'], 'port 8083 removed');
    const before = { uid: String((await getOwned('Service', 'convoy-gw'))!.metadata.uid) };
    await w.admin.request('DELETE', ownedObjectPath('Service', NS, 'convoy-gw'));
    await waitFor(
      async () => {
        const s = await getOwned('Service', 'convoy-gw');
        return s && String(s.metadata.uid) !== before.uid;
      },
      { what: 'the deleted Service restored', timeoutMs: 30_000 },
    );
    // A hand edit of a field Convoy owns is undone too.
    await w.admin.request('PATCH', ownedObjectPath('Deployment', NS, 'convoy-gw'), {
      contentType: 'application/merge-patch+json',
      body: { spec: { replicas: 7 } },
    });
    await waitFor(
      async () => ((await getOwned('Deployment', 'convoy-gw'))?.spec as { replicas: number }).replicas === 2,
      { what: 'replicas restored to the parameters', timeoutMs: 30_000 },
    );
  });

  test('addresses: AddressNotAssigned until the load balancer reports one', async () => {
    await w.waitStatus(
      'Gateway',
      NS,
      'gw',
      (s) =>
        cond(s.conditions, 'Programmed')?.reason === 'AddressNotAssigned' &&
        cond(s.conditions, 'convoy.dev/Routability')?.reason === 'Public',
      'gw Programmed=False/AddressNotAssigned, routability Public',
    );
    await w.admin.request('PATCH', ownedObjectPath('Service', NS, 'convoy-gw') + '/status', {
      contentType: 'application/merge-patch+json',
      body: { status: { loadBalancer: { ingress: [{ ip: '203.0.113.7' }] } } },
    });
    await w.waitStatus(
      'Gateway',
      NS,
      'gw',
      (s) =>
        cond(s.conditions, 'Programmed')?.status === 'True' &&
        JSON.stringify(s.addresses) === JSON.stringify([{ type: 'IPAddress', value: '203.0.113.7' }]),
      'gw Programmed with the load-balancer address',
    );
  });

  test('routability: Private and Cluster shape the Service; an unsupported value is refused', async () => {
    await w.apply(envoyFleet('private', { routability: 'Private' }));
    await w.apply(envoyFleet('cluster', { routability: 'Cluster' }));
    await w.apply(envoyFleet('vendor', { routability: 'example.com/Edge' }));
    const ref = (name: string) => ({
      infrastructure: { parametersRef: { group: 'gateway.convoy.dev', kind: 'EnvoyFleet', name } },
    });
    await w.apply(gateway('priv', ref('private')));
    await w.apply(gateway('clus', ref('cluster')));
    await w.apply(gateway('vend', ref('vendor')));
    const priv = await waitFor(() => getOwned('Service', 'convoy-priv'), { what: 'Service convoy-priv' });
    assert.equal((priv.spec as { type: string }).type, 'LoadBalancer');
    const privAnnotations = priv.metadata.annotations as Record<string, string>;
    assert.equal(privAnnotations['service.beta.kubernetes.io/aws-load-balancer-internal'], 'true');
    const clus = await waitFor(() => getOwned('Service', 'convoy-clus'), { what: 'Service convoy-clus' });
    const clusterIP = (clus.spec as { type: string; clusterIP: string }).clusterIP;
    assert.equal((clus.spec as { type: string }).type, 'ClusterIP');
    await w.waitStatus(
      'Gateway',
      NS,
      'clus',
      (s) =>
        cond(s.conditions, 'Programmed')?.status === 'True' &&
        cond(s.conditions, 'convoy.dev/Routability')?.reason === 'Cluster' &&
        JSON.stringify(s.addresses) === JSON.stringify([{ type: 'IPAddress', value: clusterIP }]),
      'clus Programmed with its ClusterIP',
    );
    await w.waitStatus(
      'Gateway',
      NS,
      'priv',
      (s) => cond(s.conditions, 'convoy.dev/Routability')?.reason === 'Private',
      'priv reports routability Private',
    );
    await w.waitStatus(
      'Gateway',
      NS,
      'vend',
      (s) =>
        cond(s.conditions, 'Accepted')?.reason === 'UnsupportedRoutability' &&
        cond(s.conditions, 'Programmed')?.reason === 'UnsupportedRoutability',
      'vend refused with UnsupportedRoutability',
    );
    assert.equal(await getOwned('Service', 'convoy-vend'), undefined, 'no fleet for a refused Gateway');
  });

  test('only the leader provisions; after a failover there is still one set of objects', async () => {
    const leader = await waitFor(leaderOf, { what: 'a leader' });
    const follower = convoys.find((c) => c !== leader)!;
    assert.match(leader.log(), /applied managed fleet object/);
    assert.doesNotMatch(follower.log(), /applied managed fleet object/, 'the follower wrote nothing');
    await leader.stop('SIGKILL');
    await waitFor(async () => (await leaderOf()) === follower, {
      what: 'the follower takes over',
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    await w.apply(listenerSet('ls-4', 'gw', 8084));
    await waitPorts(
      'convoy-gw',
      ['80->10080', '8081->8081', '8082->8082', '8084->8084'],
      'the new leader converges the Service',
    );
    const list = await w.admin.request<{ items: KObject[] }>(
      'GET',
      `/apis/apps/v1/namespaces/${NS}/deployments`,
      {
        query: { labelSelector: 'app.kubernetes.io/managed-by=convoy' },
      },
    );
    assert.deepEqual(list.items.map((d) => d.metadata.name).sort(), [
      'convoy-clus',
      'convoy-gw',
      'convoy-priv',
    ]);
  });

  test('static addresses: a requested IP shapes the Service; status follows what it is given', async () => {
    const fleet = (name: string) => ({
      infrastructure: { parametersRef: { group: 'gateway.convoy.dev', kind: 'EnvoyFleet', name } },
    });
    const programmed = (s: Record<string, unknown>) => cond(s.conditions, 'Programmed');
    // A load balancer: the IP becomes spec.loadBalancerIP; Programmed waits for the ingress.
    await w.apply(
      gateway('pinned', { ...fleet('edge'), addresses: [{ type: 'IPAddress', value: '203.0.113.50' }] }),
    );
    const lb = await waitFor(() => getOwned('Service', 'convoy-pinned'), { what: 'Service convoy-pinned' });
    assert.equal((lb.spec as { loadBalancerIP?: string }).loadBalancerIP, '203.0.113.50');
    await w.waitStatus(
      'Gateway',
      NS,
      'pinned',
      (s) =>
        programmed(s)?.reason === 'AddressNotAssigned' && cond(s.conditions, 'Accepted')?.status === 'True',
      'pinned Accepted, Programmed=False/AddressNotAssigned',
    );
    const ingress = (ip: string) =>
      w.admin.request('PATCH', ownedObjectPath('Service', NS, 'convoy-pinned') + '/status', {
        contentType: 'application/merge-patch+json',
        body: { status: { loadBalancer: { ingress: [{ ip }] } } },
      });
    await ingress('203.0.113.60');
    await w.waitStatus(
      'Gateway',
      NS,
      'pinned',
      (s) =>
        programmed(s)?.reason === 'AddressNotUsable' &&
        /203\.0\.113\.50/.test(String(programmed(s)?.message)),
      'a load balancer that gave another IP: AddressNotUsable naming the requested one',
    );
    await ingress('203.0.113.50');
    await w.waitStatus(
      'Gateway',
      NS,
      'pinned',
      (s) =>
        programmed(s)?.status === 'True' &&
        JSON.stringify(s.addresses) === JSON.stringify([{ type: 'IPAddress', value: '203.0.113.50' }]),
      'pinned Programmed with its requested address',
    );
    // Two IPs cannot be requested of one Service; a hostname cannot be requested at all.
    await w.apply(
      gateway('pinned', {
        ...fleet('edge'),
        addresses: [{ value: '203.0.113.50' }, { value: '203.0.113.51' }],
      }),
    );
    await w.waitStatus(
      'Gateway',
      NS,
      'pinned',
      (s) =>
        programmed(s)?.reason === 'AddressNotUsable' && cond(s.conditions, 'Accepted')?.status === 'True',
      'two addresses: AddressNotUsable',
    );
    await w.apply(
      gateway('pinned', { ...fleet('edge'), addresses: [{ type: 'Hostname', value: 'gw.example.com' }] }),
    );
    await w.waitStatus(
      'Gateway',
      NS,
      'pinned',
      (s) => cond(s.conditions, 'Accepted')?.reason === 'UnsupportedAddress',
      'a hostname: Accepted=False/UnsupportedAddress',
    );

    // A ClusterIP Service: the IP is its cluster IP, which is immutable, so the Service is recreated.
    await w.apply(gateway('internal', fleet('cluster')));
    const first = await waitFor(() => getOwned('Service', 'convoy-internal'), {
      what: 'Service convoy-internal',
    });
    const firstIP = (first.spec as { clusterIP: string }).clusterIP;
    const wanted = firstIP === '10.0.0.200' ? '10.0.0.201' : '10.0.0.200';
    await w.apply(gateway('internal', { ...fleet('cluster'), addresses: [{ value: wanted }] }));
    await waitFor(
      async () =>
        ((await getOwned('Service', 'convoy-internal'))?.spec as { clusterIP?: string })?.clusterIP ===
        wanted,
      { what: `Service convoy-internal recreated with cluster IP ${wanted}`, timeoutMs: 30_000 },
    );
    await w.waitStatus(
      'Gateway',
      NS,
      'internal',
      (s) =>
        programmed(s)?.status === 'True' &&
        JSON.stringify(s.addresses) === JSON.stringify([{ type: 'IPAddress', value: wanted }]),
      'internal Programmed with its requested cluster IP',
    );
    // An IP outside the cluster's service range cannot be allocated: the Service keeps its address.
    await w.apply(gateway('internal', { ...fleet('cluster'), addresses: [{ value: '10.9.0.5' }] }));
    await w.waitStatus(
      'Gateway',
      NS,
      'internal',
      (s) =>
        programmed(s)?.reason === 'AddressNotAssigned' && /10\.9\.0\.5/.test(String(programmed(s)?.message)),
      'an unallocatable cluster IP: AddressNotAssigned naming it',
    );
    await waitFor(
      async () => convoys.some((c) => c.running && /requested cluster IP cannot be allocated/.test(c.log())),
      {
        what: 'the provisioner reports the refused cluster IP',
      },
    );
    assert.equal(
      ((await getOwned('Service', 'convoy-internal'))?.spec as { clusterIP?: string }).clusterIP,
      wanted,
      'the Service was not deleted for an address it cannot have',
    );
    // Without a request, the Service keeps the address it has.
    await w.apply(gateway('internal', fleet('cluster')));
    await w.waitStatus(
      'Gateway',
      NS,
      'internal',
      (s) => programmed(s)?.status === 'True' && JSON.stringify(s.addresses).includes(wanted),
      'internal keeps its cluster IP when the request goes',
    );
  });

  test('deleting the Gateway deletes its fleet (garbage collector, Convoy stopped)', async () => {
    for (const c of convoys) if (c.running) await c.stop();
    await w.delete('Gateway', NS, 'gw');
    for (const kind of FLEET_KINDS) {
      await waitFor(async () => (await getOwned(kind, 'convoy-gw')) === undefined, {
        what: `${kind} convoy-gw deleted by the garbage collector`,
        timeoutMs: 60_000,
      });
    }
    assert.ok(await getOwned('Deployment', 'convoy-priv'), 'other fleets stay');
  });
});
