/**
 * The endpoint guard: which EndpointSlice addresses may become Envoy endpoints.
 *
 * An EndpointSlice is written by whoever may write EndpointSlices (or files, in file mode), yet its
 * addresses are dialled by the Envoys of every Gateway that routes to its Service. Loopback and
 * unspecified addresses reach the Envoy's own host: its admin listener (POST /quitquitquit), or
 * Convoy's admin and xDS ports when they share it. Link-local addresses reach cloud metadata
 * services. So, like ExternalName Services, they are refused unless the operator opts in; the
 * backend that would use them gets ResolvedRefs=False (docs/security.md §7).
 */
import type { KubeObject } from '../store/objects';
import { objectNamespace } from '../store/objects';
import { classifyAddress } from '../util/address-class';

/** Operator policy for endpoint addresses (convoy serve flags). Everything unset is refused. */
export interface EndpointPolicy {
  /** Allow loopback (127.0.0.0/8, ::1) and unspecified (0.0.0.0, ::) addresses. */
  allowLoopback?: boolean;
  /** Allow link-local addresses (169.254.0.0/16, fe80::/10). */
  allowLinkLocal?: boolean;
  /**
   * Ports refused on loopback and unspecified addresses even with allowLoopback: Convoy's admin
   * and xDS ports and Envoy's admin port, which are never a backend.
   */
  protectedPorts?: readonly number[];
}

/** A refused endpoint of one EndpointSlice port. */
export interface RefusedEndpoint {
  /** The slice port's name ("" when unnamed), which matches the Service port's name. */
  portName: string;
  address: string;
  port: number;
  /** Why, in a sentence that names the flag that would allow it. */
  reason: string;
}

/** Every refused endpoint of a build, by `namespace/service`; computed once per full build. */
export interface EndpointRefusals {
  byService: ReadonlyMap<string, readonly RefusedEndpoint[]>;
  /** Equal for two builds exactly when their refusals are: part of the route memo key. */
  fingerprint: string;
}

/**
 * Says why `address:port` must not become an Envoy endpoint under `policy`, or returns
 * undefined when it may. Hostnames (FQDN slices, which Convoy ignores) are not judged here.
 */
export function endpointRefusal(address: string, port: number, policy: EndpointPolicy): string | undefined {
  if (mayBeRoutableIPv4(address)) return undefined;
  const kind = classifyAddress(address);
  if (kind === 'loopback' || kind === 'unspecified') {
    if (!policy.allowLoopback) {
      return `${address} is ${kind === 'loopback' ? 'a loopback' : 'an unspecified'} address: Envoy would connect to its own host (convoy serve --allow-loopback-endpoints)`;
    }
    if (policy.protectedPorts?.includes(port)) {
      return `${address}:${port} is an admin or xDS port of Convoy or Envoy, never a backend`;
    }
  }
  if (kind === 'link-local' && !policy.allowLinkLocal) {
    return `${address} is a link-local address, e.g. a cloud metadata service (convoy serve --allow-link-local-endpoints)`;
  }
  return undefined;
}

/**
 * True for dotted IPv4 text outside 0/8, 127/8 and 169.254/16, by its first bytes alone: the
 * common case, answered without the BlockList lookups of classifyAddress. False means "check".
 */
function mayBeRoutableIPv4(address: string): boolean {
  let first = 0;
  let i = 0;
  for (; i < 4 && i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c === 46) break; // '.'
    if (c < 48 || c > 57 || (i === 0 && c === 48)) return false; // a digit, no leading zero
    first = first * 10 + (c - 48);
  }
  if (i === 0 || i > 3 || address.charCodeAt(i) !== 46 || first > 255 || first === 127) return false;
  return !(first === 169 && address.startsWith('169.254.'));
}

interface SliceLike {
  addressType?: string;
  endpoints?: { addresses?: unknown }[];
  ports?: { name?: string | null; port?: number | null; protocol?: string }[];
}

/** The refused endpoints of one EndpointSlice (every TCP port × every address). */
export function refusedSliceEndpoints(slice: KubeObject, policy: EndpointPolicy): RefusedEndpoint[] {
  const s = slice as unknown as SliceLike;
  if (s.addressType === 'FQDN') return [];
  const out: RefusedEndpoint[] = [];
  for (const ep of s.endpoints ?? []) {
    if (!Array.isArray(ep.addresses)) continue;
    for (const address of ep.addresses as unknown[]) {
      if (typeof address !== 'string' || mayBeRoutableIPv4(address)) continue;
      for (const p of s.ports ?? []) {
        if (typeof p.port !== 'number' || (p.protocol ?? 'TCP') !== 'TCP') continue;
        const reason = endpointRefusal(address, p.port, policy);
        if (reason) out.push({ portName: p.name ?? '', address, port: p.port, reason });
      }
    }
  }
  return out;
}

/** Collects the refused endpoints of every EndpointSlice in `slices` by the Service they belong to. */
export function collectEndpointRefusals(
  slices: readonly KubeObject[],
  policy: EndpointPolicy,
): EndpointRefusals {
  const byService = new Map<string, RefusedEndpoint[]>();
  for (const slice of slices) {
    const service = slice.metadata.labels?.['kubernetes.io/service-name'];
    if (!service) continue;
    const refused = refusedSliceEndpoints(slice, policy);
    if (refused.length === 0) continue;
    const key = `${objectNamespace(slice)}/${service}`;
    const list = byService.get(key);
    if (list) list.push(...refused);
    else byService.set(key, refused);
  }
  for (const list of byService.values()) list.sort(compareRefused);
  const keys = [...byService.keys()].sort();
  const fingerprint = JSON.stringify(keys.map((k) => [k, byService.get(k)]));
  return { byService, fingerprint };
}

function compareRefused(a: RefusedEndpoint, b: RefusedEndpoint): number {
  return cmp(a.portName, b.portName) || cmp(a.address, b.address) || a.port - b.port;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
