/**
 * Computes, for each HTTPS listener, the request hosts its filter chain answers with 421
 * Misdirected Request (feature GatewayHTTPSListenerDetectMisdirectedRequests, docs/gateway-api.md
 * §26): the hosts another listener of the same port serves.
 *
 * A client may reuse one TLS connection for several hostnames (HTTP/2 connection coalescing, when
 * one certificate covers them). The connection's filter chain was chosen by SNI, so a request for
 * a host that SNI would have sent to another chain must not be served by this chain's routes: the
 * client is told to open a connection of its own for it.
 */
import type { ResolvedListener } from './resolved';
import { CATCH_ALL, hostnameCovers } from './routes/vhosts';
import { compareStrings } from '../util/compare';

/**
 * Returns the hosts (exact names, `*.` wildcards, or `*` for every host not matched otherwise)
 * that the chain of HTTPS listener `l` answers with 421, given the ready listeners of its port.
 *
 * - `l` with a hostname: every host it does not match (`*`), plus the hostnames of the port's other
 *   listeners that it matches but that are more specific (they win those hosts by SNI).
 * - `l` without a hostname (the port's catch-all): the hostnames of every other listener.
 * Hosts `l`'s own routes serve stay theirs: the route configuration lists its virtual hosts first
 * and drops a guard domain that repeats one (envoy/translate.ts).
 */
export function misdirectedHosts(l: ResolvedListener, port: readonly ResolvedListener[]): string[] {
  const own = l.hostname?.toLowerCase();
  const out = new Set<string>(own ? [CATCH_ALL] : []);
  // An exact hostname is the most specific there is: no sibling can win a host it matches.
  if (own && !own.startsWith('*.')) return [...out];
  for (const other of port) {
    const h = other.hostname?.toLowerCase();
    if (other === l || !h || h === own) continue;
    if (own === undefined || hostnameCovers(own, h)) out.add(h);
  }
  return [...out].sort(compareStrings);
}
