/**
 * Which Gateway API objects an Envoy resource of a fleet comes from: the way back from a name
 * Envoy reports (in a NACK) to the listeners and routes to tell. Names are owner-scoped
 * (docs/architecture.md §5), so this reads them with the parsers of names.ts and the fleet model.
 */
import { compareStrings } from '../util/compare';
import type { FleetModel, VirtualHostModel } from './fleet';
import { parseListenerQualifiedName, parseRouteMatchName } from './names';

/** The Envoy resource kinds a fleet is served, by their message names. */
export type EnvoyResourceKind =
  'Listener' | 'RouteConfiguration' | 'Cluster' | 'ClusterLoadAssignment' | 'Secret';

/** A Gateway API listener: section `listener` of a Gateway or ListenerSet. */
export interface ListenerOwnerRef {
  kind: string;
  namespace: string;
  name: string;
  listener: string;
}

/** An HTTPRoute or GRPCRoute. */
export interface RouteOwnerRef {
  kind: string;
  namespace: string;
  name: string;
}

export interface ResourceOwners {
  /** Sorted by kind, namespace, name, listener. */
  listeners: ListenerOwnerRef[];
  /** Sorted by kind, namespace, name. */
  routes: RouteOwnerRef[];
}

/**
 * The owners of one resource of `model`:
 *  - a Listener `<protocol>-<port>`: every listener programmed on that port;
 *  - a RouteConfiguration: the listeners it serves (the HTTP port's, or the HTTPS listener whose
 *    chain names it), and the routes among its own that Envoy's `message` names;
 *  - a Secret: the listeners whose chains present it;
 *  - a Cluster or its ClusterLoadAssignment: the routes whose backends or mirrors use it.
 * `portListeners` gives the qualified names (listenerQualifiedName) of the listeners programmed
 * on each port: the listeners of an HTTP port share one Envoy Listener and RouteConfiguration, so
 * the model keeps no name per listener there. Anything the model does not have owns nothing.
 */
export function ownersOf(
  model: FleetModel,
  portListeners: ReadonlyMap<number, readonly string[]>,
  kind: EnvoyResourceKind,
  name: string,
  message = '',
): ResourceOwners {
  const listeners = new Map<string, ListenerOwnerRef>();
  const routes = new Map<string, RouteOwnerRef>();
  const addListener = (qualifiedName: string) => {
    const ref = parseListenerQualifiedName(qualifiedName);
    if (ref) listeners.set(`${ref.kind}/${ref.namespace}/${ref.name}/${ref.listener}`, ref);
  };
  const addRoute = (routeName: string) => {
    const ref = parseRouteMatchName(routeName);
    if (ref) routes.set(`${ref.kind}/${ref.namespace}/${ref.name}`, ref);
  };
  switch (kind) {
    case 'Listener':
      for (const port of model.ports) {
        if (port.name !== name) continue;
        // A TCP or UDP port serves exactly its own listener, though others may share its number.
        if (port.l4) {
          addListener(port.l4.listener);
          continue;
        }
        for (const qn of portListeners.get(port.port) ?? []) addListener(qn);
        for (const chain of port.filterChains) addListener(chain.name);
      }
      break;
    case 'RouteConfiguration':
      for (const port of model.ports) {
        if (port.http?.routeConfigName === name) {
          for (const qn of portListeners.get(port.port) ?? []) addListener(qn);
          for (const r of routesNamedIn(port.http.virtualHosts, message)) addRoute(r);
        }
        for (const chain of port.filterChains) {
          if (chain.routeConfigName !== name) continue;
          addListener(chain.name);
          for (const r of routesNamedIn(chain.virtualHosts ?? [], message)) addRoute(r);
        }
      }
      break;
    case 'Secret':
      for (const port of model.ports)
        for (const chain of port.filterChains) if (chain.secretNames.includes(name)) addListener(chain.name);
      break;
    case 'Cluster':
    case 'ClusterLoadAssignment':
      for (const port of model.ports) {
        for (const vh of port.http?.virtualHosts ?? []) routesUsing(vh, name, addRoute);
        for (const chain of port.filterChains)
          for (const vh of chain.virtualHosts ?? []) routesUsing(vh, name, addRoute);
      }
      break;
  }
  return {
    listeners: [...listeners.values()].sort(
      (a, b) =>
        compareStrings(a.kind, b.kind) ||
        compareStrings(a.namespace, b.namespace) ||
        compareStrings(a.name, b.name) ||
        compareStrings(a.listener, b.listener),
    ),
    routes: [...routes.values()].sort(
      (a, b) =>
        compareStrings(a.kind, b.kind) ||
        compareStrings(a.namespace, b.namespace) ||
        compareStrings(a.name, b.name),
    ),
  };
}

/** Route names (routeMatchName) of these virtual hosts that occur in `message` as whole names. */
function routesNamedIn(virtualHosts: readonly VirtualHostModel[], message: string): string[] {
  if (!message) return [];
  const out: string[] = [];
  for (const vh of virtualHosts) {
    for (const route of vh.routes) {
      // `…/match/1` must not be found inside `…/match/12`.
      for (let at = message.indexOf(route.name); at >= 0; at = message.indexOf(route.name, at + 1)) {
        if (!/[0-9]/.test(message[at + route.name.length] ?? '')) {
          out.push(route.name);
          break;
        }
      }
    }
  }
  return out;
}

function routesUsing(vh: VirtualHostModel, cluster: string, add: (routeName: string) => void): void {
  for (const route of vh.routes) {
    const action = route.action;
    if (action.kind !== 'forward') continue;
    if (
      action.backends.some((b) => b.cluster === cluster) ||
      action.mirrors?.some((m) => m.cluster === cluster)
    )
      add(route.name);
  }
}
