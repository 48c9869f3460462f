/**
 * The virtual hosts of each route configuration of a fleet (an HTTP port, or an HTTPS filter
 * chain), memoized between builds, with redirect ports derived from the listener. The virtual
 * hosts themselves are computed by routes/vhosts.ts.
 */
import type { VirtualHostModel } from '../model/fleet';
import type { CompiledRoute } from './routes/types';
import { isolateHostnames, virtualHostsOf } from './routes/vhosts';
import type { ListenerRoutes, ListenerClaims } from './routes/vhosts';

export interface VirtualHostEntry {
  isolated: ListenerRoutes[];
  port: number;
  virtualHosts: VirtualHostModel[];
  /** The routes with at least one entry in virtualHosts. */
  used: CompiledRoute[];
}

/**
 * Remembers, for fleet assembly between builds, the virtual hosts of each fleet's last assembly by
 * route configuration, and the cluster names each virtual-host list references.
 */
export class FleetVirtualHosts {
  private readonly byFleet = new Map<string, ReadonlyMap<string, VirtualHostEntry>>();
  private readonly clusterNamesByList = new WeakMap<VirtualHostModel[], string[]>();

  /** Returns the entries of the last committed assembly of `fleet`, by route configuration. */
  last(fleet: string): ReadonlyMap<string, VirtualHostEntry> | undefined {
    return this.byFleet.get(fleet);
  }

  /** Records the entries of an assembly of `fleet`, replacing the previous ones. */
  remember(fleet: string, entries: ReadonlyMap<string, VirtualHostEntry>): void {
    this.byFleet.set(fleet, entries);
  }

  /** Returns the names of the clusters the routes of `vhosts` forward or mirror to (once per array). */
  clusterNamesOf(vhosts: VirtualHostModel[]): string[] {
    let names = this.clusterNamesByList.get(vhosts);
    if (!names) {
      const set = new Set<string>();
      for (const vh of vhosts) {
        for (const r of vh.routes) {
          const a = r.action;
          if (a.kind !== 'forward') continue;
          for (const b of a.backends) set.add(b.cluster);
          for (const m of a.mirrors ?? []) set.add(m.cluster);
        }
      }
      names = [...set];
      this.clusterNamesByList.set(vhosts, names);
    }
    return names;
  }
}

/**
 * Virtual hosts of the route configurations of one fleet assembly, memoized between builds. They
 * are a pure function of the isolated listener routes (listener, compiled routes, kept hostnames)
 * and the port, so when those are the same as last time (compiled routes are memoized, see
 * routes/memo.ts) the previous VirtualHostModel[] is returned and the unchanged chain keeps its
 * identity downstream. The entries computed become the fleet's in `memos` on commit().
 */
export class VirtualHostMemo {
  private readonly previous: ReadonlyMap<string, VirtualHostEntry>;
  private readonly next: Map<string, VirtualHostEntry>;

  /** `carry`: keep every previous entry (a partial rebuild that only recomputes some). */
  constructor(
    private readonly memos: FleetVirtualHosts,
    private readonly fleet: string,
    carry = false,
  ) {
    this.previous = memos.last(fleet) ?? new Map();
    this.next = carry ? new Map(this.previous) : new Map();
  }

  /** Returns the key of a route configuration: its scheme, port and listeners. */
  static key(group: ListenerRoutes[], port: number, scheme: 'http' | 'https'): string {
    return `${scheme}:${port}:${group.map((g) => g.listener.qualifiedName).join('\n')}`;
  }

  /** Returns the entry of the last build (before this one) for a route configuration. */
  previousEntry(key: string): VirtualHostEntry | undefined {
    return this.previous.get(key);
  }

  /** Returns the virtual hosts of one route configuration: last build's when its inputs are the same. */
  virtualHosts(
    group: ListenerRoutes[],
    claims: ListenerClaims,
    port: number,
    scheme: 'http' | 'https',
  ): VirtualHostEntry {
    const isolated = isolateHostnames(group, claims);
    const key = VirtualHostMemo.key(group, port, scheme);
    const prev = this.previous.get(key);
    let entry = prev && prev.port === port && sameIsolation(prev.isolated, isolated) ? prev : undefined;
    if (!entry) {
      const virtualHosts = withRedirectPorts(virtualHostsOf(isolated), port, scheme);
      entry = { isolated, port, virtualHosts, used: usedRoutesOf(virtualHosts, isolated) };
    }
    this.next.set(key, entry);
    return entry;
  }

  /** Returns the entry computed (or carried) in this build for a route configuration. */
  nextEntry(key: string): VirtualHostEntry | undefined {
    return this.next.get(key);
  }

  /** Makes this assembly's entries the fleet's last ones (for the next build to reuse). */
  commit(): void {
    this.memos.remember(this.fleet, this.next);
  }
}

/**
 * Returns whether two route configurations have the same isolation inputs: listener hostnames, the
 * same compiled route objects and the same kept hostnames, in the same order.
 */
function sameIsolation(a: ListenerRoutes[], b: ListenerRoutes[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if ((x.listener.hostname ?? '') !== (y.listener.hostname ?? '') || x.routes.length !== y.routes.length)
      return false;
    for (let j = 0; j < x.routes.length; j++) {
      const r = x.routes[j];
      const q = y.routes[j];
      if (r.route !== q.route || r.hostnames.length !== q.hostnames.length) return false;
      for (let k = 0; k < r.hostnames.length; k++) if (r.hostnames[k] !== q.hostnames[k]) return false;
    }
  }
  return true;
}

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

/**
 * Returns the port a redirect (HTTPRequestRedirectFilter) puts in its Location, or undefined when it
 * is the default port of the resulting scheme.
 *
 * The port is the filter's port; else the well-known port of the filter's scheme; else the
 * listener's port. It is left out when it is the default for the resulting scheme, so `port` in the
 * model is set only when it must show.
 */
export function redirectPort(
  filter: { scheme?: string; port?: number },
  listenerPort: number,
  listenerScheme: 'http' | 'https',
): number | undefined {
  const scheme = filter.scheme ?? listenerScheme;
  const port = filter.port ?? (filter.scheme ? DEFAULT_PORTS[filter.scheme] : listenerPort);
  return port === DEFAULT_PORTS[scheme] ? undefined : port;
}

/** Returns the virtual hosts with every redirect's port derived for this listener port and scheme. */
function withRedirectPorts(
  vhosts: VirtualHostModel[],
  port: number,
  scheme: 'http' | 'https',
): VirtualHostModel[] {
  return vhosts.map((vh) => {
    if (!vh.routes.some((r) => r.action.kind === 'redirect')) return vh;
    return {
      ...vh,
      routes: vh.routes.map((r) => {
        if (r.action.kind !== 'redirect') return r;
        const derived = redirectPort(r.action, port, scheme);
        if (derived === r.action.port) return r;
        const { port: _drop, ...rest } = r.action;
        return { ...r, action: derived === undefined ? rest : { ...rest, port: derived } };
      }),
    };
  });
}

/** Returns the routes of `group` with at least one entry in `vhosts`. */
function usedRoutesOf(vhosts: VirtualHostModel[], group: ListenerRoutes[]): CompiledRoute[] {
  const names = new Set<string>();
  for (const vh of vhosts) for (const r of vh.routes) names.add(r.name);
  const used = new Set<CompiledRoute>();
  for (const g of group) {
    for (const a of g.routes) {
      if (a.route.entries.some((e) => names.has(e.model.name))) used.add(a.route);
    }
  }
  return [...used];
}
