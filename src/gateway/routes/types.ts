/**
 * Internal shapes of route processing. A route is compiled once, independently of the listeners
 * it attaches to (CompiledRoute); attachment then decides, per listener, which hostnames it
 * serves (AttachedRoute); fleet.ts assembles virtual hosts and filter chains from those.
 */
import type { KubeObject } from '../../store/objects';
import type { RouteModel, WeightedCluster } from '../../model/fleet';
import type { ClusterRef } from '../backends';

export type RouteKind = 'HTTPRoute' | 'GRPCRoute' | 'TLSRoute' | 'TCPRoute' | 'UDPRoute';
export const ROUTE_KINDS: readonly RouteKind[] = [
  'HTTPRoute',
  'GRPCRoute',
  'TLSRoute',
  'TCPRoute',
  'UDPRoute',
];

export interface RouteIdentity {
  kind: RouteKind;
  namespace: string;
  name: string;
  /** `Kind/namespace/name` */
  key: string;
  generation?: number;
  /** metadata.creationTimestamp normalised to ISO-8601 UTC ('' when absent: sorts as oldest). */
  created: string;
}

/** Precedence keys of one (rule, match) pair, per docs/gateway-api.md §12. */
export interface EntryPrecedence {
  /** 0 Exact, 1 RegularExpression, 2 PathPrefix. */
  pathRank: number;
  pathLength: number;
  hasMethod: boolean;
  headers: number;
  queryParams: number;
  rule: number;
  match: number;
}

export interface RouteEntry {
  model: RouteModel;
  precedence: EntryPrecedence;
}

export interface RefProblem {
  reason: string;
  message: string;
}

export interface RuleProblem {
  rule: number;
  reason: string;
  message: string;
}

export interface CompiledRoute {
  id: RouteIdentity;
  object: KubeObject;
  /** spec.hostnames as written (may be empty). */
  hostnames: string[];
  /** HTTPRoute/GRPCRoute: one entry per (valid rule, match), in rule/match order. */
  entries: RouteEntry[];
  /** TLSRoute, TCPRoute, UDPRoute: weighted clusters for tcp_proxy / udp_proxy (empty: reject). */
  tcpBackends?: WeightedCluster[];
  /** TCPRoute, UDPRoute: the weight of invalid backendRefs, whose share of connections is refused. */
  invalidWeight?: number;
  /** Every cluster the entries / tcpBackends reference. */
  clusters: ClusterRef[];
  /** First unresolved reference (backendRefs and mirror backendRefs), if any. */
  refProblem?: RefProblem;
  /** Rules dropped because they use unsupported or invalid values. */
  ruleProblems: RuleProblem[];
  ruleCount: number;
}

/** A route attached to one listener, with the hostnames it serves there (`*` = any host). */
export interface AttachedRoute {
  route: CompiledRoute;
  hostnames: string[];
}
