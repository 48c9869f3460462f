/**
 * Builds the ports of TCP and UDP listeners (docs/gateway-api.md §28): one Envoy listener per Gateway
 * API listener, forwarding to the backends of the oldest route attached to it.
 *
 * Several TCPRoutes (or UDPRoutes) may attach to one listener, and all of them are Accepted and
 * counted in attachedRoutes, but a TCP or UDP listener cannot tell their traffic apart: the oldest
 * route (creation time, then namespace/name, the attachment order) is the one served.
 */
import type { L4PortModel, PortModel } from '../model/fleet';
import type { ResolvedListener } from './resolved';
import type { AttachedRoute, CompiledRoute } from './routes/types';

/** The route kind each L4 listener protocol serves. */
export const L4_ROUTE_KIND: Readonly<Record<'TCP' | 'UDP', string>> = { TCP: 'TCPRoute', UDP: 'UDPRoute' };

/**
 * Returns the PortModel of a TCP or UDP listener `l` (its `protocol`), `tcp-<port>` or `udp-<port>`,
 * and adds the route it serves to `used`; `attached` is the listener's routes in attachment order.
 */
export function l4Port(
  l: ResolvedListener,
  protocol: 'TCP' | 'UDP',
  attached: readonly AttachedRoute[],
  used: Set<CompiledRoute>,
): PortModel {
  const kind = L4_ROUTE_KIND[protocol];
  const route = attached.find((a) => a.route.id.kind === kind)?.route;
  if (route) used.add(route);
  const l4: L4PortModel = {
    protocol,
    listener: l.qualifiedName,
    backends: (route?.tcpBackends ?? []).map((b) => ({ ...b })),
    ...(route?.invalidWeight ? { invalidWeight: route.invalidWeight } : {}),
  };
  return { name: `${protocol.toLowerCase()}-${l.port}`, port: l.port, filterChains: [], l4 };
}
