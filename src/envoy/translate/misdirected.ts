import type { FilterChainModel, RouteModel, VirtualHostModel } from '../../model/fleet';

/**
 * Builds the virtual hosts that answer misdirected requests on an HTTPS chain with 421
 * (docs/gateway-api.md §26), appended after the chain's own virtual hosts.
 *
 * Envoy picks a virtual host by the request's Host (`:authority`): exact domains first, then the
 * longest `*.` suffix, then `*`. So one extra virtual host holding the chain's misdirected hosts
 * answers every request for a host another chain of the port serves, while the hosts of the
 * chain's own routes keep their virtual hosts (buildRouteConfiguration keeps the first virtual
 * host that names a domain, and these come last). A chain with a hostname also gets that hostname
 * as a virtual host without routes, so its own hosts that no route serves stay 404 rather than
 * falling to `*`. The cost is one lookup Envoy makes anyway; no filter, no per-request work.
 */

/** Name of the 421 virtual host: `:` cannot occur in a hostname, so it never meets a route's. */
export const MISDIRECTED_VIRTUAL_HOST = 'misdirected:421';

/** HTTP 421 Misdirected Request (RFC 9110 §15.5.20). */
export const MISDIRECTED_STATUS = 421;

/** Shared, never mutated: the one route of every 421 virtual host (so its translation is memoized). */
const MISDIRECTED_ROUTES: RouteModel[] = [
  {
    name: MISDIRECTED_VIRTUAL_HOST,
    match: { path: { type: 'PathPrefix', value: '/' } },
    action: { kind: 'direct', status: MISDIRECTED_STATUS },
  },
];

/** Shared, never mutated: the 421 virtual host of a chain with an exact hostname (most chains). */
const MISDIRECTED_EVERYTHING_ELSE: VirtualHostModel = {
  name: MISDIRECTED_VIRTUAL_HOST,
  domains: ['*'],
  routes: MISDIRECTED_ROUTES,
};

/** Returns the chain's virtual hosts followed by its 404 own-host fallback and its 421 virtual host. */
export function withMisdirectedHosts(fc: FilterChainModel): VirtualHostModel[] {
  const own = fc.virtualHosts ?? [];
  const hosts = fc.misdirectedHosts ?? [];
  if (hosts.length === 0) return own;
  const out = [...own];
  const served = fc.serverNames[0];
  if (served) out.push({ name: served, domains: [served], routes: [] });
  out.push(
    hosts.length === 1 && hosts[0] === '*'
      ? MISDIRECTED_EVERYTHING_ELSE
      : { name: MISDIRECTED_VIRTUAL_HOST, domains: hosts, routes: MISDIRECTED_ROUTES },
  );
  return out;
}
