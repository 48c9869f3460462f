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
import type { BackendPolicy } from '../backends';
import { routeIdentity } from './identity';
import type { CompiledRoute, RouteKind } from './types';
import { extraRuleProblems, weightedBackends } from './weighted-backends';

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
  const ruleProblems = extraRuleProblems(kind, rules.length);
  const first = rules[0];
  const refs = Array.isArray(first?.backendRefs) ? first.backendRefs : [];
  const { clusters, tcpBackends, refProblems, invalidWeight } = weightedBackends(
    view,
    { kind, namespace: id.namespace },
    refs,
    use,
    policy,
  );
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
