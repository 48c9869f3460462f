import * as net from 'node:net';

/**
 * Classification of IP addresses into the host-local ranges Convoy treats with care: loopback
 * and unspecified addresses reach the machine itself (an Envoy's or Convoy's admin port),
 * link-local ones reach the node's neighbours (cloud metadata services at 169.254.169.254).
 */

/** What an address reaches: this host, its link, or the network beyond (`routable`). */
export type AddressClass = 'loopback' | 'unspecified' | 'link-local' | 'routable';

function blockList(ranges: readonly [string, number, 'ipv4' | 'ipv6'][]): net.BlockList {
  const list = new net.BlockList();
  for (const [address, prefix, family] of ranges) list.addSubnet(address, prefix, family);
  return list;
}

// net.BlockList also matches IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) against IPv4 ranges.
const LOOPBACK = blockList([
  ['127.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
]);
// 0.0.0.0 is "this host" to connect(2) on Linux; the rest of 0.0.0.0/8 is not routable either.
const UNSPECIFIED = blockList([
  ['0.0.0.0', 8, 'ipv4'],
  ['::', 128, 'ipv6'],
]);
const LINK_LOCAL = blockList([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
]);

/**
 * Classifies an IP address literal; undefined when `address` is not one (a hostname).
 * IPv4-mapped IPv6 forms are classified as the IPv4 address they carry.
 */
export function classifyAddress(address: string): AddressClass | undefined {
  const version = net.isIP(address);
  if (version === 0) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (LOOPBACK.check(address, family)) return 'loopback';
  if (UNSPECIFIED.check(address, family)) return 'unspecified';
  if (LINK_LOCAL.check(address, family)) return 'link-local';
  return 'routable';
}

/**
 * True when a listen host only accepts connections from this machine: a loopback address or
 * the name `localhost`. Unspecified addresses (0.0.0.0, ::) listen on every interface and are not.
 */
export function isLoopbackHost(host: string): boolean {
  return host.toLowerCase() === 'localhost' || classifyAddress(host) === 'loopback';
}
