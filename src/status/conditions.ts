/**
 * Names the condition types and reasons Convoy writes, spelled as in Gateway API v1.6.1 (apis/v1),
 * plus Convoy's own (domain-prefixed types), and builds conditions that always carry
 * observedGeneration (docs/gateway-api.md §15).
 */
import type { Condition } from './types';
import { compareStrings } from '../util/compare';

export const ConditionType = {
  Accepted: 'Accepted',
  Programmed: 'Programmed',
  ResolvedRefs: 'ResolvedRefs',
  Conflicted: 'Conflicted',
  OverlappingTLSConfig: 'OverlappingTLSConfig',
  PartiallyInvalid: 'PartiallyInvalid',
  /** Convoy's: Envoys of the fleet rejected (NACKed) configuration that comes from this object. */
  EnvoyRejected: 'convoy.dev/EnvoyRejected',
  /**
   * Convoy's: the listener still serves the last valid version of a Secret whose current version
   * is invalid (docs/gateway-api.md §8); written only when True.
   */
  ServingLastGoodCertificate: 'convoy.dev/ServingLastGoodCertificate',
  /**
   * Convoy's: a Gateway that is not accepted any more keeps its fleet serving the configuration of
   * its last accepted generation (docs/gateway-api.md §3); written only when True.
   */
  ServingLastGoodConfiguration: 'convoy.dev/ServingLastGoodConfiguration',
  /**
   * Convoy's: the listener serves a certificate outside its validity period (a warning: it is still
   * served; docs/gateway-api.md §8); written only when False.
   */
  CertificateValidity: 'convoy.dev/CertificateValidity',
  /**
   * Convoy's: the routability a managed Gateway obtained (docs/architecture.md §13); the reason is
   * Public, Private, Cluster or Vendor (a vendor-prefixed value, named in the message).
   */
  Routability: 'convoy.dev/Routability',
  /** Gateway: some port accepts clients without a valid certificate (docs/gateway-api.md §25). */
  InsecureFrontendValidationMode: 'InsecureFrontendValidationMode',
} as const;
export type ConditionTypeName = (typeof ConditionType)[keyof typeof ConditionType];

export const Reason = {
  // Positive
  Accepted: 'Accepted',
  Programmed: 'Programmed',
  ResolvedRefs: 'ResolvedRefs',
  NoConflicts: 'NoConflicts',
  Pending: 'Pending',
  // GatewayClass
  InvalidParameters: 'InvalidParameters',
  Unsupported: 'Unsupported',
  UnsupportedVersion: 'UnsupportedVersion',
  // Gateway / ListenerSet
  Invalid: 'Invalid',
  ListenersNotValid: 'ListenersNotValid',
  UnsupportedAddress: 'UnsupportedAddress',
  AddressNotAssigned: 'AddressNotAssigned',
  AddressNotUsable: 'AddressNotUsable',
  UnsupportedRoutability: 'UnsupportedRoutability',
  NoResources: 'NoResources',
  NotAllowed: 'NotAllowed',
  ParentNotAccepted: 'ParentNotAccepted',
  ParentNotProgrammed: 'ParentNotProgrammed',
  // Listener
  PortUnavailable: 'PortUnavailable',
  /** An XListenerSet listener without a port, and no port to give it (docs/gateway-api.md §29). */
  UnsupportedPort: 'UnsupportedPort',
  /** Convoy's: an XListenerSet whose namespace/name a ListenerSet also has (docs/gateway-api.md §29). */
  SupersededByListenerSet: 'SupersededByListenerSet',
  UnsupportedProtocol: 'UnsupportedProtocol',
  UnsupportedValue: 'UnsupportedValue',
  TooManyListeners: 'TooManyListeners',
  HostnameConflict: 'HostnameConflict',
  ProtocolConflict: 'ProtocolConflict',
  ListenerConflict: 'ListenerConflict',
  InvalidCertificateRef: 'InvalidCertificateRef',
  InvalidRouteKinds: 'InvalidRouteKinds',
  RefNotPermitted: 'RefNotPermitted',
  OverlappingHostnames: 'OverlappingHostnames',
  OverlappingCertificates: 'OverlappingCertificates',
  NoValidCACertificate: 'NoValidCACertificate',
  InvalidCACertificateRef: 'InvalidCACertificateRef',
  InvalidCACertificateKind: 'InvalidCACertificateKind',
  // Gateway InsecureFrontendValidationMode
  ConfigurationChanged: 'ConfigurationChanged',
  // Route
  NotAllowedByListeners: 'NotAllowedByListeners',
  NoMatchingListenerHostname: 'NoMatchingListenerHostname',
  NoMatchingParent: 'NoMatchingParent',
  IncompatibleFilters: 'IncompatibleFilters',
  BackendNotFound: 'BackendNotFound',
  InvalidKind: 'InvalidKind',
  // convoy.dev/EnvoyRejected
  Rejected: 'Rejected',
  // convoy.dev/ServingLastGoodCertificate
  LastGoodCertificate: 'LastGoodCertificate',
  // convoy.dev/ServingLastGoodConfiguration
  LastGoodConfiguration: 'LastGoodConfiguration',
  // convoy.dev/CertificateValidity
  Expired: 'Expired',
  NotYetValid: 'NotYetValid',
  // convoy.dev/Routability
  Public: 'Public',
  Private: 'Private',
  Cluster: 'Cluster',
  Vendor: 'Vendor',
} as const;
export type ReasonName = (typeof Reason)[keyof typeof Reason];

/** Condition types Convoy owns; any other type found on an object belongs to someone else. */
export const OWNED_CONDITION_TYPES: ReadonlySet<string> = new Set(Object.values(ConditionType));

/** Builds a condition stamped with `now` and the object's generation (0 when it has none). */
export function makeCondition(
  type: string,
  status: Condition['status'],
  reason: string,
  message: string,
  generation: number | undefined,
  now: string,
): Condition {
  const c: Condition = { type, status, reason, message, lastTransitionTime: now };
  c.observedGeneration = generation ?? 0;
  return c;
}

/** Lists the condition order of every status Convoy writes (unlisted types sort after, by name). */
const ORDER: readonly string[] = [
  ConditionType.Accepted,
  ConditionType.Programmed,
  ConditionType.ResolvedRefs,
  ConditionType.Conflicted,
  ConditionType.OverlappingTLSConfig,
  ConditionType.PartiallyInvalid,
];

/** Returns the conditions in Convoy's order (ORDER, then other types by name); the input is not changed. */
export function sortConditions(conditions: Condition[]): Condition[] {
  const rank = (t: string) => {
    const i = ORDER.indexOf(t);
    return i < 0 ? ORDER.length : i;
  };
  return [...conditions].sort((a, b) => rank(a.type) - rank(b.type) || compareStrings(a.type, b.type));
}

/** Returns the condition of the given type, if any. */
export function findCondition(conditions: readonly Condition[], type: string): Condition | undefined {
  return conditions.find((c) => c.type === type);
}
