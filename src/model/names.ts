/**
 * Builds the names of everything in a FleetModel (and, where a later stage needs a part back,
 * parses them), all in this one module (docs/architecture.md §5).
 *
 * Names are stable and owner-scoped: they are made from the names of the Kubernetes objects a
 * resource comes from, never from its content, so an edit changes a resource's content and
 * version but not its name, and Envoy replaces it in place.
 */
import { flatKey, namespacedName } from '../store/objects';

/** Returns the fleet name of a Gateway, `namespace/name`: the key Envoys send in node.cluster. */
export function fleetName(namespace: string, name: string): string {
  return namespacedName(namespace, name);
}

/** Returns the name of an Envoy Listener, `<protocol>-<port>` lowercased: `http-8080`, `tls-9443`. */
export function listenerName(protocol: string, port: number): string {
  return `${protocol.toLowerCase()}-${port}`;
}

/** Returns the name of a plain HTTP listener's RouteConfiguration: like the listener, `http-<port>`. */
export function httpRouteConfigName(port: number): string {
  return listenerName('HTTP', port);
}

/**
 * Returns the name of one HTTPS filter chain's RouteConfiguration, `https-<port>/<hostname>`.
 *
 * `hostname` is the listener's lower-cased hostname, or `*` for a listener without one.
 */
export function httpsRouteConfigName(port: number, hostname: string): string {
  return flatKey(`https-${port}`, hostname);
}

/**
 * Returns the qualified name of a Gateway API listener, `Gateway/ns/name/listener` or
 * `ListenerSet/ns/name/listener`.
 *
 * It is the listener's filter chain name, and the key by which routes attach to it.
 */
export function listenerQualifiedName(
  owner: { kind: string; namespace: string; name: string },
  listener: string,
): string {
  return flatKey(owner.kind, owner.namespace, owner.name, listener);
}

/**
 * Returns the Gateway API listener a filter chain belongs to: the parts of a name made by
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

/** Returns the chain name of a TLS listener for one more hostname of its routes: `<listener>/<hostname>`. */
export function hostnameChainName(listenerQualifiedName: string, hostname: string): string {
  return flatKey(listenerQualifiedName, hostname);
}

/**
 * Returns the SDS name of the CA bundle a Gateway validates client certificates with on a port,
 * `Gateway/ns/name/client-ca/<port>`, or `…/client-ca/default` for its default configuration.
 */
export function clientCaBundleName(namespace: string, gateway: string, port: number | 'default'): string {
  return flatKey('Gateway', namespace, gateway, 'client-ca', port);
}

/** Returns the name of one match of one rule of a route, `HTTPRoute/ns/name/rule/<i>/match/<j>`. */
export function routeMatchName(
  kind: string,
  namespace: string,
  name: string,
  rule: number,
  match: number,
): string {
  return flatKey(kind, namespace, name, 'rule', rule, 'match', match);
}

/**
 * Returns the name of a named rule of a route, `HTTPRoute/ns/name/<rule name>` (GEP-995): the
 * stat prefix of its Envoy routes, so a rule's stats keep their name when rules are reordered.
 */
export function namedRuleName(kind: string, namespace: string, name: string, ruleName: string): string {
  return flatKey(kind, namespace, name, ruleName);
}

/** Returns the route of a name made by routeMatchName; undefined for anything else. */
export function parseRouteMatchName(
  name: string,
): { kind: string; namespace: string; name: string } | undefined {
  const parts = name.split('/');
  if (parts.length !== 7 || parts[3] !== 'rule' || parts[5] !== 'match') return undefined;
  const [kind, namespace, route, , rule, , match] = parts;
  if (!kind || !route || !/^[0-9]+$/.test(rule) || !/^[0-9]+$/.test(match)) return undefined;
  return { kind, namespace, name: route };
}

/**
 * Returns the cluster name of a Service port, `namespace/service/port`, or `namespace/service/port/udp`
 * for its UDP port (a Service may use one port number for TCP and UDP); also its EDS service name.
 */
export function clusterName(namespace: string, service: string, port: number, udp = false): string {
  return udp ? flatKey(namespace, service, port, 'udp') : flatKey(namespace, service, port);
}

/** Parses a cluster name made by clusterName into its parts; undefined for anything else. */
export function parseClusterName(
  name: string,
): { namespace: string; service: string; port: number; udp: boolean } | undefined {
  const parts = name.split('/');
  if (parts.length !== 3 && !(parts.length === 4 && parts[3] === 'udp')) return undefined;
  const [namespace, service, portText] = parts;
  const port = Number(portText);
  if (!namespace || !service || !/^[0-9]+$/.test(portText) || port > 65535) return undefined;
  return { namespace, service, port, udp: parts.length === 4 };
}

/** Returns the Service of a cluster as `namespace/service`; undefined if the name is not a cluster name. */
export function clusterService(name: string): string | undefined {
  const parts = parseClusterName(name);
  return parts && namespacedName(parts.namespace, parts.service);
}

/** Returns the SDS name of a certificate, `namespace/secret`. */
export function secretName(namespace: string, name: string): string {
  return namespacedName(namespace, name);
}
