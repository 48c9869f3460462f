/**
 * Compiles TLSRoutes: SNI hostnames and one rule of weighted backends for tcp_proxy.
 *
 * Invalid backends are left out (their share of connections cannot be rejected proportionally by
 * tcp_proxy); with no valid backend of positive weight the chain rejects every connection (empty
 * tcpBackends).
 */
import type { StoreView } from '../resolved';
import type { KubeObject } from '../../store/objects';
import type { TLSRouteSpec } from '../api';
import { Reason } from '../../status/conditions';
import { resolveBackendRef } from '../backends';
import type { BackendPolicy, ClusterRef } from '../backends';
import { routeIdentity } from './identity';
import type { CompiledRoute, RefProblem, RuleProblem } from './types';
import { compareStrings } from '../../util/compare';

const MAX_WEIGHT = 1_000_000;

/** Compiles a TLSRoute: its hostnames and weighted backends, with the problems that decide its status. */
export function compileTLSRoute(view: StoreView, obj: KubeObject, policy: BackendPolicy = {}): CompiledRoute {
  const id = routeIdentity('TLSRoute', obj);
  const spec = (obj.spec ?? {}) as TLSRouteSpec;
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  const clusters: ClusterRef[] = [];
  const refProblems: RefProblem[] = [];
  const ruleProblems: RuleProblem[] = [];
  const weights = new Map<string, number>();
  rules.forEach((rule, i) => {
    if (i > 0) {
      ruleProblems.push({
        rule: i,
        reason: Reason.UnsupportedValue,
        message: `rule ${i}: a TLSRoute has exactly one rule`,
      });
      return;
    }
    const refs = Array.isArray(rule?.backendRefs) ? rule.backendRefs : [];
    for (const ref of refs) {
      const weight = ref?.weight ?? 1;
      if (!Number.isInteger(weight) || weight < 0 || weight > MAX_WEIGHT) {
        refProblems.push({
          reason: Reason.UnsupportedValue,
          message: `invalid backend weight ${String(weight)}`,
        });
        continue;
      }
      const r = resolveBackendRef(view, { kind: 'TLSRoute', namespace: id.namespace }, ref, 'tcp', policy);
      if (!r.ok) {
        refProblems.push({ reason: r.reason, message: r.message });
        continue;
      }
      clusters.push(r.cluster);
      if (weight > 0) weights.set(r.cluster.name, (weights.get(r.cluster.name) ?? 0) + weight);
    }
  });
  const tcpBackends = [...weights.entries()]
    .map(([cluster, weight]) => ({ cluster, weight }))
    .sort((a, b) => compareStrings(a.cluster, b.cluster));
  return {
    id,
    object: obj,
    hostnames: (Array.isArray(spec.hostnames) ? spec.hostnames : []).filter(
      (h): h is string => typeof h === 'string' && h !== '',
    ),
    entries: [],
    tcpBackends,
    clusters,
    refProblem: refProblems[0],
    ruleProblems,
    ruleCount: rules.length,
  };
}
