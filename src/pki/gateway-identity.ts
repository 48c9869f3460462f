/**
 * The identity a client certificate carries to say which Gateways' Envoys may use it
 * (docs/security.md §2): one URI SAN `spiffe://convoy/gateway/NAMESPACE/NAME` per Gateway.
 * The fleet key of a Gateway is `NAMESPACE/NAME`, the node.cluster its Envoys send.
 */

/** SPIFFE trust domain of identities issued by Convoy's CA. */
export const TRUST_DOMAIN = 'convoy';
export const GATEWAY_IDENTITY_PREFIX = `spiffe://${TRUST_DOMAIN}/gateway/`;
/**
 * The URI SAN of an operator's client certificate (`convoy certgen --operator`): it names no
 * Gateway, so it receives no fleet over ADS, and it is the only certificate identity allowed to
 * read the Client Status Discovery Service, which shows every fleet (docs/security.md §2.6).
 */
export const OPERATOR_IDENTITY_URI = `spiffe://${TRUST_DOMAIN}/operator`;

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** `NAMESPACE/NAME` when both parts are valid Kubernetes names, else undefined. */
export function parseFleetKey(value: string): { namespace: string; name: string } | undefined {
  const parts = value.split('/');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts as [string, string];
  if (namespace.length > 63 || name.length > 253) return undefined;
  if (!LABEL.test(namespace) || !SUBDOMAIN.test(name)) return undefined;
  return { namespace, name };
}

/** The URI SAN naming Gateway `fleet` (`NAMESPACE/NAME`); throws on a malformed name. */
export function gatewayIdentityUri(fleet: string): string {
  if (!parseFleetKey(fleet))
    throw new Error(`gateway: expected NAMESPACE/NAME, got ${JSON.stringify(fleet)}`);
  return GATEWAY_IDENTITY_PREFIX + fleet;
}

/**
 * The fleet key named by a URI SAN, or undefined when the URI is not a Convoy Gateway identity.
 * Exact match on the whole URI: no wildcards, no extra segments, no query, no percent-encoding,
 * so one string can only ever name one Gateway.
 */
export function fleetOfIdentityUri(uri: string): string | undefined {
  if (!uri.startsWith(GATEWAY_IDENTITY_PREFIX)) return undefined;
  const rest = uri.slice(GATEWAY_IDENTITY_PREFIX.length);
  return parseFleetKey(rest) ? rest : undefined;
}
