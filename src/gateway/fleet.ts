/**
 * Assembles a fleet: one Gateway's ready listeners and the routes attached to them → its FleetModel
 * (ports, filter chains, route configurations, clusters and secrets).
 */
import { unprivilegedBindPorts } from '../model/managed-fleet';
import { rangePorts } from '../model/port-range';
import type { CaBundleModel, FilterChainModel, FleetModel, PortModel, SecretModel } from '../model/fleet';
import { objectNamespace } from '../store/objects';
import type { ResolvedGateway, ResolvedListener, StoreView } from './resolved';
import type { ClusterRef } from './backends';
import { buildClusters } from './backends';
import type { BackendTlsIndex } from './backend-tls';

import type { AttachedRoute, CompiledRoute } from './routes/types';
import { CATCH_ALL, ListenerClaims, isolateHostnames } from './routes/vhosts';
import type { ListenerRoutes } from './routes/vhosts';
import type { BuildMemo } from './build-memo';
import type { FleetVirtualHosts } from './virtual-hosts';
import { VirtualHostMemo } from './virtual-hosts';
import { compareStrings } from '../util/compare';
import { hostnameChainName } from '../model/names';
import { sniPortName } from './port-name';
import { l4Port } from './l4-ports';
import { misdirectedHosts } from './misdirected';

/** Route kinds served by HTTP and HTTPS listeners' route configurations. */
export const HTTP_KINDS: ReadonlySet<string> = new Set(['HTTPRoute', 'GRPCRoute']);

/** Returns the routes attached to listener `l` whose kind is one of `kinds`, in attachment order. */
export function routesOf(
  attached: ReadonlyMap<string, AttachedRoute[]>,
  l: ResolvedListener,
  kinds: ReadonlySet<string>,
): AttachedRoute[] {
  return (attached.get(l.qualifiedName) ?? []).filter((a) => kinds.has(a.route.id.kind));
}

/**
 * Builds the FleetModel of one Gateway from its ready listeners and the routes attached to them
 * (`attached`, by listener qualifiedName); `memo` keeps unchanged virtual hosts and clusters.
 */
export function buildFleet(
  view: StoreView,
  gw: ResolvedGateway,
  attached: ReadonlyMap<string, AttachedRoute[]>,
  memo: BuildMemo,
  backendTls?: BackendTlsIndex,
): FleetModel {
  const namespace = objectNamespace(gw.object);
  const name = gw.object.metadata.name;
  const ready = gw.accepted ? gw.listeners.filter((l) => l.ready) : [];
  const byPort = new Map<number, ResolvedListener[]>();
  const usedRoutes = new Set<CompiledRoute>();
  const ports: PortModel[] = [];
  for (const l of ready) {
    // UDP may share a port number with any TCP-based listener; TCP listeners conflict with every other.
    if (l.protocol === 'UDP') {
      ports.push(l4Port(l, 'UDP', attached.get(l.qualifiedName) ?? [], usedRoutes));
      continue;
    }
    const list = byPort.get(l.port);
    if (list) list.push(l);
    else byPort.set(l.port, [l]);
  }
  const secrets = new Map<string, SecretModel>();
  const caBundles = new Map<string, CaBundleModel>();
  const vhosts = new VirtualHostMemo(memo.virtualHosts, gw.fleet);
  for (const port of [...byPort.keys()].sort((a, b) => a - b)) {
    const listeners = byPort.get(port)!;
    const first = listeners[0];
    if (first.protocol === 'HTTP') {
      const http = listeners.filter((l) => l.protocol === 'HTTP');
      const group: ListenerRoutes[] = http.map((l) => ({
        listener: l,
        routes: routesOf(attached, l, HTTP_KINDS),
      }));
      const { virtualHosts, used } = vhosts.virtualHosts(group, new ListenerClaims(http), port, 'http');
      for (const r of used) usedRoutes.add(r);
      ports.push({
        name: `http-${port}`,
        port,
        ...rangeOf(http),
        http: { routeConfigName: `http-${port}`, virtualHosts },
        filterChains: [],
      });
    } else if (first.protocol === 'HTTPS' || first.protocol === 'TLS') {
      const sni = listeners.filter((l) => l.protocol === 'HTTPS' || l.protocol === 'TLS');
      const claims = new ListenerClaims(sni);
      const filterChains: FilterChainModel[] = [];
      for (const l of sni) {
        const secretNames = l.tlsMode === 'Passthrough' ? [] : l.certificates.map((c) => c.name);
        for (const c of l.tlsMode === 'Passthrough' ? [] : l.certificates) secrets.set(c.name, c);
        if (l.protocol === 'HTTPS') {
          const group: ListenerRoutes[] = [{ listener: l, routes: routesOf(attached, l, HTTP_KINDS) }];
          const { virtualHosts, used } = vhosts.virtualHosts(group, claims, port, 'https');
          for (const r of used) usedRoutes.add(r);
          filterChains.push({
            name: l.qualifiedName,
            serverNames: l.hostname ? [l.hostname.toLowerCase()] : [],
            mode: 'Terminate',
            protocol: 'HTTPS',
            secretNames,
            routeConfigName: `https-${port}/${l.hostname ? l.hostname.toLowerCase() : CATCH_ALL}`,
            virtualHosts,
            misdirectedHosts: misdirectedHosts(l, sni),
            ...clientValidationOf(l, caBundles),
          });
        } else {
          filterChains.push(
            ...tlsChains(l, routesOf(attached, l, TLS_KINDS), claims, secretNames, usedRoutes),
          );
        }
      }
      filterChains.sort((a, b) => compareStrings(a.name, b.name));
      ports.push({ name: sniPortName(port, gw.listeners, first), port, ...rangeOf(sni), filterChains });
    } else if (first.protocol === 'TCP') {
      ports.push(l4Port(first, 'TCP', attached.get(first.qualifiedName) ?? [], usedRoutes));
    }
  }
  vhosts.commit();
  // By port, then name: a UDP port sorts after the TCP-based port of the same number.
  ports.sort((a, b) => a.port - b.port || compareStrings(a.name, b.name));
  const managed = gw.managed;
  const client = gw.backendClientCertificate?.ok ? gw.backendClientCertificate.secret : undefined;
  const clusters = buildClusters(
    view,
    referencedClusters(ports, usedRoutes, memo.virtualHosts),
    memo.clusters,
    gw.fleet,
    backendTls && !backendTls.empty ? { index: backendTls, clientCertificate: client?.name } : undefined,
  );
  // The client certificate is served over SDS like listener certificates, when a cluster uses it.
  if (client && clusters.some((c) => c.tls?.clientCertificate)) secrets.set(client.name, client);
  return {
    fleet: gw.fleet,
    gateway: { namespace, name },
    ports: managed && !managed.local ? withBindPorts(ports) : ports,
    clusters,
    secrets: [...secrets.values()].sort((a, b) => compareStrings(a.name, b.name)),
    ...(caBundles.size > 0
      ? { caBundles: [...caBundles.values()].sort((a, b) => compareStrings(a.name, b.name)) }
      : {}),
    ...(managed ? { managed } : {}),
  };
}

/**
 * Returns the clientValidation field of an HTTPS listener's chain (none when its port validates no
 * client certificates), and records the CA bundle it names in `bundles`.
 */
export function clientValidationOf(
  l: ResolvedListener,
  bundles: Map<string, CaBundleModel>,
): Pick<FilterChainModel, 'clientValidation'> {
  const v = l.clientValidation;
  if (!v) return {};
  bundles.set(v.bundle.name, v.bundle);
  return { clientValidation: { caBundle: v.bundle.name, mode: v.mode } };
}

/**
 * Returns a managed fleet's ports with the unprivileged port each binds where it differs from the
 * listener port (docs/architecture.md §13): managed Envoys run as non-root.
 */
function withBindPorts(ports: PortModel[]): PortModel[] {
  const bind = unprivilegedBindPorts(ports.flatMap((p) => [p.port, ...rangePorts(p)]));
  return ports.map((p) => {
    const out = bind.get(p.port) === p.port ? p : { ...p, bindPort: bind.get(p.port) };
    const extra = rangePorts(p);
    if (extra.every((port) => bind.get(port) === port)) return out;
    return { ...out, rangeBindPorts: extra.map((port) => bind.get(port)!) };
  });
}

/**
 * Returns the range end of a port's listeners: an accepted range claims its ports for its
 * listener alone (port-ranges.ts), so at most one ready listener of a port has one.
 */
function rangeOf(listeners: readonly ResolvedListener[]): Pick<PortModel, 'endPort'> {
  const endPort = listeners.find((l) => l.endPort !== undefined)?.endPort;
  return endPort === undefined ? {} : { endPort };
}

const TLS_KINDS: ReadonlySet<string> = new Set(['TLSRoute']);

/**
 * Returns the filter chains of one TLS listener: the listener's own chain (its hostname, or
 * catch-all), plus one chain per other SNI hostname its TLSRoutes bring (e.g. `a.example.com` under
 * a `*.example.com` listener).
 *
 * When several routes claim one hostname the oldest wins. A chain without a route rejects
 * connections (empty tcpBackends), so an unclaimed SNI never falls through to another chain.
 */
function tlsChains(
  l: ResolvedListener,
  attached: AttachedRoute[],
  claims: ListenerClaims,
  secretNames: string[],
  used: Set<CompiledRoute>,
): FilterChainModel[] {
  const own = l.hostname ? l.hostname.toLowerCase() : CATCH_ALL;
  const [isolated] = isolateHostnames([{ listener: l, routes: attached }], claims);
  const byHost = new Map<string, CompiledRoute | undefined>([[own, undefined]]);
  // `attached` is in route precedence order (oldest first): keep the first claim per hostname.
  for (const a of isolated.routes) {
    for (const h of a.hostnames) if (!byHost.get(h)) byHost.set(h, a.route);
  }
  return [...byHost.keys()].sort().map((h) => {
    const route = byHost.get(h);
    if (route) used.add(route);
    return {
      name: h === own ? l.qualifiedName : hostnameChainName(l.qualifiedName, h),
      serverNames: h === CATCH_ALL ? [] : [h],
      mode: l.tlsMode ?? 'Terminate',
      protocol: 'TLS' as const,
      secretNames,
      tcpBackends: route?.tcpBackends ? route.tcpBackends.map((b) => ({ ...b })) : [],
    };
  });
}

/** Returns a cluster reference (with protocol) for every cluster the fleet's routes and chains name. */
function referencedClusters(
  ports: PortModel[],
  used: Set<CompiledRoute>,
  vhosts: FleetVirtualHosts,
): ClusterRef[] {
  const names = new Set<string>();
  for (const p of ports) {
    if (p.http) for (const n of vhosts.clusterNamesOf(p.http.virtualHosts)) names.add(n);
    for (const fc of p.filterChains) {
      if (fc.virtualHosts) for (const n of vhosts.clusterNamesOf(fc.virtualHosts)) names.add(n);
      for (const b of fc.tcpBackends ?? []) names.add(b.cluster);
    }
    for (const b of p.l4?.backends ?? []) names.add(b.cluster);
  }
  const refs: ClusterRef[] = [];
  for (const route of used) for (const c of route.clusters) if (names.has(c.name)) refs.push(c);
  return refs;
}
