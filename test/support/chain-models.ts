import type { FilterChainModel } from '../../src/model/fleet';

/**
 * A random HTTPS or TLS filter chain model of port 443 from a few names and hosts, so that what
 * the translations must handle all occurs: conflicts (taken names and hosts), chains without a
 * hostname, wildcards, exact names those wildcards cover, names differing only in case, chains
 * without a certificate and Passthrough chains. `serial` makes the usual chain unique.
 */
export function randomChainModel(next: () => number, serial: number): FilterChainModel {
  const host = next() < 0.01 ? Math.floor(next() * 20) : 1000 + serial;
  const zone = Math.floor(next() * 3);
  const r = next();
  const serverNames =
    r < 0.005
      ? []
      : r < 0.02
        ? [`*.w${zone}.example.com`]
        : r < 0.1
          ? [`h${host}.W${zone}.example.com`]
          : r < 0.11
            ? [`H${host}.example.com`, `h${host}.example.com`]
            : [`h${host}.example.com`];
  const tls = next() < 0.15;
  return {
    name: `ListenerSet/ns/ls-${next() < 0.01 ? Math.floor(next() * 20) : serial}/l`,
    serverNames,
    mode: tls && next() < 0.5 ? 'Passthrough' : 'Terminate',
    protocol: tls ? 'TLS' : 'HTTPS',
    secretNames: next() < 0.05 ? [] : [`ns/cert-${host}-${serial % 3}`],
    routeConfigName: `https-443/${serverNames[0] ?? '*'}`,
    virtualHosts: [],
    tcpBackends: tls ? [{ cluster: `svc-${host}`, weight: 1 }] : undefined,
  };
}

/** The same chain's content in a new object, as the model builder gives after a route edit. */
export function sameChainCopy(fc: FilterChainModel): FilterChainModel {
  return { ...fc, serverNames: [...fc.serverNames], virtualHosts: [] };
}

/** `count` HTTPS chains of one ListenerSet each, host `h<i>.example.com` with its own certificate. */
export function numberedChains(count: number): FilterChainModel[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `ListenerSet/ns/ls-${i}/l`,
    serverNames: [`h${i}.example.com`],
    mode: 'Terminate',
    protocol: 'HTTPS',
    secretNames: [`ns/cert-${i}`],
    routeConfigName: `https-443/h${i}.example.com`,
    virtualHosts: [],
  }));
}
