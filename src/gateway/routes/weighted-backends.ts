/**
 * Resolves the one rule of weighted backendRefs that TLSRoutes, TCPRoutes and UDPRoutes share
 * (docs/gateway-api.md §28), for a tcp_proxy's or udp_proxy's clusters.
 */
import type { StoreView } from '../resolved';
import type { BackendRef } from '../api';
import { Reason } from '../../status/conditions';
import { resolveBackendRef } from '../backends';
import type { BackendPolicy, BackendReferrer, BackendUse, ClusterRef } from '../backends';
import type { RefProblem, RuleProblem } from './types';
import { compareStrings } from '../../util/compare';

const MAX_WEIGHT = 1_000_000;

/** A rule's backends: clusters to build, weights per cluster, and what could not be used. */
export interface WeightedBackends {
  clusters: ClusterRef[];
  /** Per cluster, the summed weight of the refs naming it (positive only), sorted by cluster. */
  tcpBackends: { cluster: string; weight: number }[];
  refProblems: RefProblem[];
  /** The summed weight of backendRefs that could not be used (their share of traffic). */
  invalidWeight: number;
}

/**
 * Resolves weighted backendRefs: each valid one adds its cluster and weight (two refs to one
 * cluster add up), each unusable one a problem and its weight to invalidWeight; a weight outside
 * 0..1,000,000 is a problem and counts nowhere. The callers decide what an invalid share means.
 */
export function weightedBackends(
  view: StoreView,
  from: BackendReferrer,
  refs: readonly BackendRef[],
  use: BackendUse,
  policy: BackendPolicy,
): WeightedBackends {
  const clusters: ClusterRef[] = [];
  const refProblems: RefProblem[] = [];
  const weights = new Map<string, number>();
  let invalidWeight = 0;
  for (const ref of refs) {
    const weight = ref?.weight ?? 1;
    if (!Number.isInteger(weight) || weight < 0 || weight > MAX_WEIGHT) {
      refProblems.push({
        reason: Reason.UnsupportedValue,
        message: `invalid backend weight ${String(weight)}`,
      });
      continue;
    }
    const r = resolveBackendRef(view, from, ref, use, policy);
    if (!r.ok) {
      refProblems.push({ reason: r.reason, message: r.message });
      invalidWeight += weight;
      continue;
    }
    clusters.push(r.cluster);
    if (weight > 0) weights.set(r.cluster.name, (weights.get(r.cluster.name) ?? 0) + weight);
  }
  const tcpBackends = [...weights.entries()]
    .map(([cluster, weight]) => ({ cluster, weight }))
    .sort((a, b) => compareStrings(a.cluster, b.cluster));
  return { clusters, tcpBackends, refProblems, invalidWeight };
}

/** Returns a problem for each rule after the first: these kinds' CRDs allow exactly one rule. */
export function extraRuleProblems(kind: string, ruleCount: number): RuleProblem[] {
  const out: RuleProblem[] = [];
  for (let rule = 1; rule < ruleCount; rule++)
    out.push({
      rule,
      reason: Reason.UnsupportedValue,
      message: `rule ${rule}: a ${kind} has exactly one rule`,
    });
  return out;
}
