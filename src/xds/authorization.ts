import { X509Certificate } from 'node:crypto';
import type { ServerDuplexStream } from '@grpc/grpc-js';
import { EKU_CLIENT_AUTH, parseSubjectAltName } from '../pki/certificate-info';
import { OPERATOR_IDENTITY_URI, fleetOfIdentityUri } from '../pki/gateway-identity';

/**
 * Who is on the other end of an ADS stream, and which fleets it may receive (docs/security.md
 * §2). A fleet holds its Gateways' TLS private keys, so a stream may only ever be attached to
 * a fleet its identity names.
 */

export interface StreamIdentity {
  /** How the client proved its identity: a client certificate, or nothing (plaintext xDS). */
  readonly method: 'certificate' | 'none';
  /** Fleet keys (`NAMESPACE/NAME`) this client may receive; `undefined` means any (plaintext only). */
  readonly fleets: ReadonlySet<string> | undefined;
  /**
   * May read the Client Status Discovery Service, which shows every fleet's configuration: the
   * operator certificate, or anyone on plaintext xDS (where ADS already serves every fleet).
   */
  readonly operator: boolean;
  /** For logs: subject and serial of the certificate; never key material. */
  readonly description: string;
}

/**
 * Finds the identity of a new call. Undefined refuses the call (UNAUTHENTICATED). This is the
 * seam for other proofs of identity: a Kubernetes ServiceAccount token sent as call metadata and
 * checked with TokenReview would be another implementation.
 */
export interface XdsAuthenticator {
  identify(call: ServerDuplexStream<unknown, unknown>): StreamIdentity | undefined;
}

/** Plaintext xDS: nobody is authenticated and every fleet is served (an explicit opt-in). */
export const ANONYMOUS_AUTHENTICATOR: XdsAuthenticator = {
  identify: () => ({
    method: 'none',
    fleets: undefined,
    operator: true,
    description: 'anonymous (plaintext xDS)',
  }),
};

/**
 * The identity in a verified client certificate. The TLS layer has already checked the chain to
 * Convoy's CA; this reads the Gateways it names. A certificate limited by extended key usage to
 * anything but client authentication (Convoy's own serving certificate, for instance) names no
 * fleet, and neither does one without Gateway URIs (CN=rogue). Only the exact URI
 * OPERATOR_IDENTITY_URI makes an operator (CSDS); it never names a fleet.
 */
export function identityOfCertificate(der: Buffer): StreamIdentity {
  const cert = new X509Certificate(der);
  const fleets = new Set<string>();
  const eku = cert.keyUsage;
  const clientAuth = eku === undefined || eku.includes(EKU_CLIENT_AUTH);
  let operator = false;
  if (clientAuth) {
    for (const uri of parseSubjectAltName(cert.subjectAltName).uris) {
      const fleet = fleetOfIdentityUri(uri);
      if (fleet !== undefined) fleets.add(fleet);
      if (uri === OPERATOR_IDENTITY_URI) operator = true;
    }
  }
  return {
    method: 'certificate',
    fleets,
    operator,
    description: `${cert.subject.replace(/\n/g, ', ')} serial ${cert.serialNumber}${clientAuth ? '' : ' (not for client authentication)'}`,
  };
}

/** mTLS: the identity is the verified client certificate of the connection. */
export const CERTIFICATE_AUTHENTICATOR: XdsAuthenticator = {
  identify(call) {
    const raw = call.getAuthContext()?.sslPeerCertificate?.raw;
    if (!raw) return undefined;
    try {
      return identityOfCertificate(raw);
    } catch {
      return undefined;
    }
  },
};

/** True when `identity` may receive the resources of `fleet`. */
export function mayServe(identity: StreamIdentity, fleet: string): boolean {
  return identity.fleets === undefined || identity.fleets.has(fleet);
}

/** The fleets an identity names, for logs (bounded: at most 5 shown). */
export function describeFleets(identity: StreamIdentity): string {
  if (identity.fleets === undefined) return 'any';
  const list = [...identity.fleets].sort();
  if (list.length === 0) return 'none';
  return list.length > 5 ? `${list.slice(0, 5).join(', ')} and ${list.length - 5} more` : list.join(', ');
}
