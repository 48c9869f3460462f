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
import type { BackendPolicy } from '../backends';
import { routeIdentity } from './identity';
import type { CompiledRoute } from './types';
import { extraRuleProblems, weightedBackends } from './weighted-backends';

/** Compiles a TLSRoute: its hostnames and weighted backends, with the problems that decide its status. */
export function compileTLSRoute(view: StoreView, obj: KubeObject, policy: BackendPolicy = {}): CompiledRoute {
  const id = routeIdentity('TLSRoute', obj);
  const spec = (obj.spec ?? {}) as TLSRouteSpec;
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  const ruleProblems = extraRuleProblems('TLSRoute', rules.length);
  const first = rules[0];
  const refs = Array.isArray(first?.backendRefs) ? first.backendRefs : [];
  // Invalid backends are left out here (invalidWeight unused): see the module comment.
  const { clusters, tcpBackends, refProblems } = weightedBackends(
    view,
    { kind: 'TLSRoute', namespace: id.namespace },
    refs,
    'tcp',
    policy,
  );
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
