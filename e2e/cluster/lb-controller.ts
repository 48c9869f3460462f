import * as net from 'node:net';
import type { KubeClient } from '../../src/kubernetes/client';
import { AddressPool } from './address-pool';
import { Informer } from './informer';
import { BRIDGE, LB_CIDR, ip } from './pod-network';
import { UdpForwarder } from './udp-forwarder';

/**
 * A test-only load-balancer controller for the private world (like cloud-provider-kind): each
 * Service of type LoadBalancer gets an address from 198.51.100.0/24, added to the bridge of the
 * outer namespace and written to status.loadBalancer.ingress, and each of its TCP ports is
 * forwarded by an in-process proxy to the Service's ready endpoints (from EndpointSlices),
 * round robin; each UDP port by a UdpForwarder, round robin per client session. A Service that
 * requests an address (spec.loadBalancerIP) gets it when it lies in the pool and is free;
 * otherwise it stays pending with no ingress, as a cloud load balancer leaves a Service whose
 * address it cannot give.
 */

interface ServicePort {
  name?: string;
  port: number;
  protocol?: string;
  targetPort?: number | string;
}

interface Service {
  metadata: { name: string; namespace: string; uid: string; resourceVersion?: string };
  spec: { type?: string; ports?: ServicePort[]; loadBalancerClass?: string; loadBalancerIP?: string };
  status?: { loadBalancer?: { ingress?: { ip?: string }[] } };
}

interface EndpointSlice {
  metadata: { name: string; namespace: string; labels?: Record<string, string>; resourceVersion?: string };
  addressType: string;
  endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
  ports?: { name?: string; port?: number; protocol?: string }[];
}

interface Balancer {
  address: string;
  /** Listening servers by service port number. */
  servers: Map<number, net.Server>;
  /** UDP forwarders by service port number (a UDP port may share its number with a TCP one). */
  udpServers?: Map<number, UdpForwarder>;
  /** Open forwarded connections (client and upstream sockets), destroyed when the balancer goes. */
  sockets?: Set<net.Socket>;
  next: number;
}

export class LoadBalancerController {
  readonly pool = new AddressPool(LB_CIDR, 10, 254);
  private readonly balancers = new Map<string, Balancer>();
  /** Services whose requested address the pool cannot give (logged once). */
  private readonly refused = new Set<string>();
  private readonly services: Informer<Service>;
  private readonly slices: Informer<EndpointSlice>;
  private reconciling = false;
  private again = false;
  private stopped = false;

  private constructor(
    private readonly admin: KubeClient,
    private readonly log: (line: string) => void,
  ) {
    const changed = () => this.reconcile();
    this.services = new Informer<Service>(admin, '/api/v1/services', changed, log);
    this.slices = new Informer<EndpointSlice>(
      admin,
      '/apis/discovery.k8s.io/v1/endpointslices',
      changed,
      log,
    );
  }

  static async start(
    admin: KubeClient,
    log: (line: string) => void = () => undefined,
  ): Promise<LoadBalancerController> {
    const c = new LoadBalancerController(admin, log);
    c.services.start();
    c.slices.start();
    await Promise.all([c.services.ready, c.slices.ready]);
    return c;
  }

  /** The ready endpoints (ip:port) of a Service port, as the forwarder would choose among them. */
  endpoints(namespace: string, service: string, port: ServicePort): { ip: string; port: number }[] {
    const out: { ip: string; port: number }[] = [];
    for (const s of this.slices.objects.values()) {
      if (s.metadata.namespace !== namespace || s.metadata.labels?.['kubernetes.io/service-name'] !== service)
        continue;
      if (s.addressType !== 'IPv4') continue;
      const sp = (s.ports ?? []).find(
        (p) => (p.name ?? '') === (port.name ?? '') && (p.protocol ?? 'TCP') === (port.protocol ?? 'TCP'),
      );
      if (!sp?.port) continue;
      for (const e of s.endpoints ?? []) {
        if (e.conditions?.ready === false) continue;
        for (const a of e.addresses) out.push({ ip: a, port: sp.port });
      }
    }
    return out.sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : a.port - b.port));
  }

  private reconcile(): void {
    if (this.reconciling) {
      this.again = true;
      return;
    }
    this.reconciling = true;
    void (async () => {
      do {
        this.again = false;
        try {
          await this.reconcileOnce();
        } catch (err) {
          this.log(`lb: ${(err as Error).message}`);
        }
      } while (this.again && !this.stopped);
      this.reconciling = false;
    })();
  }

  private async reconcileOnce(): Promise<void> {
    const wanted = new Map<string, Service>();
    for (const s of this.services.objects.values())
      if (s.spec.type === 'LoadBalancer' && !s.spec.loadBalancerClass) wanted.set(s.metadata.uid, s);
    for (const [uid, b] of this.balancers) {
      if (wanted.has(uid) || this.stopped) continue;
      await this.remove(uid, b);
    }
    for (const uid of this.refused) if (!wanted.has(uid)) this.refused.delete(uid);
    for (const [uid, svc] of wanted) {
      if (this.stopped) return;
      let b = this.balancers.get(uid);
      const requested = svc.spec.loadBalancerIP || undefined;
      if (b && requested && b.address !== requested) {
        await this.remove(uid, b);
        b = undefined;
      }
      if (!b) {
        const address = requested ? this.pool.claim(uid, requested) : this.pool.allocate(uid);
        if (!address) {
          if (!this.refused.has(uid))
            this.log(
              `lb: ${svc.metadata.namespace}/${svc.metadata.name} requests ${requested}, which the pool cannot give`,
            );
          this.refused.add(uid);
          await this.clearIngress(svc);
          continue;
        }
        this.refused.delete(uid);
        await ip(['addr', 'add', `${address}/32`, 'dev', BRIDGE]).catch((err: Error) => {
          if (!/File exists/.test(err.message)) throw err;
        });
        b = { address, servers: new Map(), next: 0 };
        this.balancers.set(uid, b);
        this.log(`lb: ${svc.metadata.namespace}/${svc.metadata.name} gets ${address}`);
      }
      await this.syncPorts(svc, b);
      const ingress = svc.status?.loadBalancer?.ingress ?? [];
      if (ingress.length !== 1 || ingress[0].ip !== b.address) {
        await this.admin.request(
          'PATCH',
          `/api/v1/namespaces/${svc.metadata.namespace}/services/${svc.metadata.name}/status`,
          {
            contentType: 'application/merge-patch+json',
            body: { status: { loadBalancer: { ingress: [{ ip: b.address, ipMode: 'VIP' }] } } },
          },
        );
      }
    }
  }

  /** Removes a stale ingress from a Service left pending. */
  private async clearIngress(svc: Service): Promise<void> {
    if (!svc.status?.loadBalancer?.ingress?.length) return;
    await this.admin.request(
      'PATCH',
      `/api/v1/namespaces/${svc.metadata.namespace}/services/${svc.metadata.name}/status`,
      { contentType: 'application/merge-patch+json', body: { status: { loadBalancer: { ingress: null } } } },
    );
  }

  /** Opens a forwarder per TCP and UDP port of the Service and closes those of ports it no longer has. */
  private async syncPorts(svc: Service, b: Balancer): Promise<void> {
    await this.syncUdpPorts(svc, b);
    const ports = (svc.spec.ports ?? []).filter((p) => (p.protocol ?? 'TCP') === 'TCP');
    const want = new Set(ports.map((p) => p.port));
    for (const [port, server] of b.servers) {
      if (want.has(port)) continue;
      server.close();
      b.servers.delete(port);
    }
    for (const p of ports) {
      if (b.servers.has(p.port)) continue;
      const { namespace, name, uid } = svc.metadata;
      const server = net.createServer((client) => this.forward(client, uid, namespace, name, p.port));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(p.port, b.address, () => resolve());
      });
      b.servers.set(p.port, server);
    }
  }

  /** Opens a UdpForwarder per UDP port of the Service and closes those of ports it no longer has. */
  private async syncUdpPorts(svc: Service, b: Balancer): Promise<void> {
    const ports = (svc.spec.ports ?? []).filter((p) => p.protocol === 'UDP');
    const want = new Set(ports.map((p) => p.port));
    const servers = (b.udpServers ??= new Map());
    for (const [port, forwarder] of servers) {
      if (want.has(port)) continue;
      forwarder.close();
      servers.delete(port);
    }
    const { namespace, name } = svc.metadata;
    for (const p of ports) {
      if (servers.has(p.port)) continue;
      const pick = () => {
        const current = this.services.objects.get(`${namespace}/${name}`);
        const sp = current?.spec.ports?.find((q) => q.port === p.port && q.protocol === 'UDP');
        const eps = sp ? this.endpoints(namespace, name, sp) : [];
        return eps.length ? eps[b.next++ % eps.length] : undefined;
      };
      servers.set(p.port, await UdpForwarder.bind(b.address, p.port, pick));
    }
  }

  /** Pipes one client connection to a ready endpoint of the Service port (round robin). */
  private forward(client: net.Socket, uid: string, namespace: string, name: string, port: number): void {
    const b = this.balancers.get(uid);
    const svc = this.services.objects.get(`${namespace}/${name}`);
    const sp = svc?.spec.ports?.find((p) => p.port === port && (p.protocol ?? 'TCP') === 'TCP');
    const eps = sp ? this.endpoints(namespace, name, sp) : [];
    if (!b || eps.length === 0) {
      client.destroy();
      return;
    }
    const ep = eps[b.next++ % eps.length];
    const upstream = net.connect({ host: ep.ip, port: ep.port });
    // Tracked so remove() can destroy them: a half-closed socket whose peer is gone (its address
    // deleted at teardown) would otherwise keep this process alive until TCP gives up (minutes).
    const sockets = (b.sockets ??= new Set());
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', () => upstream.end());
    upstream.on('close', () => client.end());
  }

  private async remove(uid: string, b: Balancer): Promise<void> {
    for (const s of b.servers.values()) s.close();
    for (const u of b.udpServers?.values() ?? []) u.close();
    for (const socket of b.sockets ?? []) socket.destroy();
    this.balancers.delete(uid);
    this.pool.release(uid);
    await ip(['addr', 'del', `${b.address}/32`, 'dev', BRIDGE]).catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.services.stop(), this.slices.stop()]);
    for (const [uid, b] of [...this.balancers]) await this.remove(uid, b);
  }
}
