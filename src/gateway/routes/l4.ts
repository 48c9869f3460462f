/**
 * Compiles TCPRoutes and UDPRoutes (docs/gateway-api.md §28): their one rule of weighted backends,
 * for a TCP listener's tcp_proxy or a UDP listener's udp_proxy.
 *
 * A backendRef that cannot be used keeps its weight as `invalidWeight`: the spec asks that an invalid
 * backend with 80% of the weight get 80% of the connections refused, not that its share move to the
 * valid backends. The first such reference sets ResolvedRefs=False.
 */
import type { StoreView } from '../resolved';
import type { KubeObject } from '../../store/objects';
import type { L4RouteSpec } from '../api';
import { Reason } from '../../status/conditions';
import { resolveBackendRef } from '../backends';
import type { BackendPolicy, ClusterRef } from '../backends';
import { routeIdentity } from './identity';
import type { CompiledRoute, RefProblem, RuleProblem, RouteKind } from './types';
import { compareStrings } from '../../util/compare';

const MAX_WEIGHT = 1_000_000;

/** Compiles a TCPRoute: its weighted backends (TCP Service ports), with the problems that decide its status. */
export function compileTCPRoute(view: StoreView, obj: KubeObject, policy: BackendPolicy = {}): CompiledRoute {
  return compileL4Route('TCPRoute', view, obj, policy);
}

/** Compiles a UDPRoute: its weighted backends (UDP Service ports), with the problems that decide its status. */
export function compileUDPRoute(view: StoreView, obj: KubeObject, policy: BackendPolicy = {}): CompiledRoute {
  return compileL4Route('UDPRoute', view, obj, policy);
}

/** Compiles a TCPRoute or UDPRoute; rules after the first (the CRD allows one) are dropped with a problem. */
function compileL4Route(
  kind: Extract<RouteKind, 'TCPRoute' | 'UDPRoute'>,
  view: StoreView,
  obj: KubeObject,
  policy: BackendPolicy,
): CompiledRoute {
  const id = routeIdentity(kind, obj);
  const spec = (obj.spec ?? {}) as L4RouteSpec;
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  const use = kind === 'UDPRoute' ? 'udp' : 'tcp';
  const clusters: ClusterRef[] = [];
  const refProblems: RefProblem[] = [];
  const ruleProblems: RuleProblem[] = [];
  const weights = new Map<string, number>();
  let invalidWeight = 0;
  rules.forEach((rule, i) => {
    if (i > 0) {
      ruleProblems.push({
        rule: i,
        reason: Reason.UnsupportedValue,
        message: `rule ${i}: a ${kind} has exactly one rule`,
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
      const r = resolveBackendRef(view, { kind, namespace: id.namespace }, ref, use, policy);
      if (!r.ok) {
        refProblems.push({ reason: r.reason, message: r.message });
        invalidWeight += weight;
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
    hostnames: [],
    entries: [],
    tcpBackends,
    ...(invalidWeight > 0 ? { invalidWeight } : {}),
    clusters,
    refProblem: refProblems[0],
    ruleProblems,
    ruleCount: rules.length,
  };
}
