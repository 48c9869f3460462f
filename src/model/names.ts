/**
 * The names of everything in a FleetModel, built (and, where a later stage needs a part back,
 * parsed) in this one module.
 *
 * Names are stable and owner-scoped: they are made from the names of the Kubernetes objects a
 * resource comes from, never from its content, so an edit changes a resource's content and
 * version but not its name, and Envoy replaces it in place.
 */
import { namespacedName, objectKey } from '../store/objects';

/** The fleet of a Gateway, `namespace/name`: the key Envoys send in node.cluster. */
export function fleetName(namespace: string, name: string): string {
  return namespacedName(namespace, name);
}

/** An Envoy Listener, `<protocol>-<port>` lowercased: `http-8080`, `https-8443`, `tls-9443`. */
export function listenerName(protocol: string, port: number): string {
  return `${protocol.toLowerCase()}-${port}`;
}

/** The RouteConfiguration of a plain HTTP listener: named like the listener, `http-<port>`. */
export function httpRouteConfigName(port: number): string {
  return listenerName('HTTP', port);
}

/**
 * The RouteConfiguration of one HTTPS filter chain, `https-<port>/<hostname>`; `hostname` is the
 * listener's lower-cased hostname, or `*` for a listener without one.
 */
export function httpsRouteConfigName(port: number, hostname: string): string {
  return `https-${port}/${hostname}`;
}

/**
 * A Gateway API listener, `Gateway/ns/name/listener` or `ListenerSet/ns/name/listener`: its
 * filter chain's name, and the key by which routes attach to it.
 */
export function listenerQualifiedName(
  owner: { kind: string; namespace: string; name: string },
  listener: string,
): string {
  return `${objectKey(owner.kind, owner.namespace, owner.name)}/${listener}`;
}

/**
 * The Gateway API listener a filter chain belongs to: the parts of a name made by
 * listenerQualifiedName, or by hostnameChainName (whose hostname is dropped); undefined for
 * anything else. Kubernetes names, listener names and hostnames never contain `/`, so the
 * segments are unambiguous.
 */
export function parseListenerQualifiedName(
  name: string,
): { kind: string; namespace: string; name: string; listener: string } | undefined {
  const parts = name.split('/');
  if (parts.length !== 4 && parts.length !== 5) return undefined;
  const [kind, namespace, owner, listener] = parts;
  if (!kind || !owner || !listener || (parts.length === 5 && !parts[4])) return undefined;
  return { kind, namespace, name: owner, listener };
}

/** The filter chain of a TLS listener for one more hostname of its routes: `<listener>/<hostname>`. */
export function hostnameChainName(listenerQualifiedName: string, hostname: string): string {
  return `${listenerQualifiedName}/${hostname}`;
}

/** One match of one rule of a route, `HTTPRoute/ns/name/rule/<i>/match/<j>` (traceable in Envoy). */
export function routeMatchName(
  kind: string,
  namespace: string,
  name: string,
  rule: number,
  match: number,
): string {
  return `${objectKey(kind, namespace, name)}/rule/${rule}/match/${match}`;
}

/** The route of a name made by routeMatchName; undefined for anything else. */
export function parseRouteMatchName(
  name: string,
): { kind: string; namespace: string; name: string } | undefined {
  const parts = name.split('/');
  if (parts.length !== 7 || parts[3] !== 'rule' || parts[5] !== 'match') return undefined;
  const [kind, namespace, route, , rule, , match] = parts;
  if (!kind || !route || !/^[0-9]+$/.test(rule) || !/^[0-9]+$/.test(match)) return undefined;
  return { kind, namespace, name: route };
}

/** A Service port's cluster, `namespace/service/port`; also its EDS service name. */
export function clusterName(namespace: string, service: string, port: number): string {
  return `${namespacedName(namespace, service)}/${port}`;
}

/** The parts of a cluster name made by clusterName; undefined for anything else. */
export function parseClusterName(
  name: string,
): { namespace: string; service: string; port: number } | undefined {
  const parts = name.split('/');
  if (parts.length !== 3) return undefined;
  const [namespace, service, portText] = parts;
  const port = Number(portText);
  if (!namespace || !service || !/^[0-9]+$/.test(portText) || port > 65535) return undefined;
  return { namespace, service, port };
}

/** The Service of a cluster as `namespace/service`; undefined if the name is not a cluster name. */
export function clusterService(name: string): string | undefined {
  const parts = parseClusterName(name);
  return parts && namespacedName(parts.namespace, parts.service);
}

/** A certificate served over SDS, `namespace/secret`. */
export function secretName(namespace: string, name: string): string {
  return namespacedName(namespace, name);
}
