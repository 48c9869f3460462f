import * as net from 'node:net';

/** A parsed `host:port` address. */
export interface HostPort {
  host: string;
  port: number;
}

/** Parses `host:port`, `[v6]:port`. Throws a message naming the flag on bad input. */
export function parseHostPort(value: string, what = 'address'): HostPort {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(value) ?? /^([^:[\]]+):(\d+)$/.exec(value);
  if (!m) throw new Error(`${what}: expected HOST:PORT (IPv6 as [ADDR]:PORT), got ${JSON.stringify(value)}`);
  const host = m[1];
  const port = Number(m[2]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`${what}: port out of range in ${JSON.stringify(value)}`);
  }
  if (m[0].startsWith('[') && net.isIPv6(host) === false) {
    throw new Error(`${what}: ${JSON.stringify(host)} in brackets is not an IPv6 address`);
  }
  return { host, port };
}
