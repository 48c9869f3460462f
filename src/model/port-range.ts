import type { PortModel } from './fleet';

/**
 * Returns the ports a PortModel serves past its own: port+1..endPort, none without a port range
 * (docs/gateway-api.md §30). Envoy listens on them as additional addresses of the same Listener,
 * and a managed fleet's Service exposes each of them.
 */
export function rangePorts(p: Pick<PortModel, 'port' | 'endPort'>): number[] {
  const out: number[] = [];
  for (let port = p.port + 1; port <= (p.endPort ?? 0); port++) out.push(port);
  return out;
}

/** Returns the port Envoy binds for each of a PortModel's range ports, in order (rangeBindPorts, else the ports). */
export function rangeBindPorts(p: Pick<PortModel, 'port' | 'endPort' | 'rangeBindPorts'>): number[] {
  return p.rangeBindPorts ?? rangePorts(p);
}
