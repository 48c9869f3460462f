/**
 * Builds BackendTLSPolicy status (docs/gateway-api.md §24): one `status.ancestors` entry per
 * Gateway whose fleet has a cluster for a Service port the policy targets, with the policy's
 * Accepted and ResolvedRefs conditions.
 */
import type { FleetModel } from '../model/fleet';
import type { ObjectStatus } from '../status/types';
import type { BuildOptions, StoreView } from './resolved';
import type { BackendTlsIndex, ResolvedBackendTlsPolicy } from './backend-tls';
import { GATEWAY_API_GROUP, GATEWAY_API_VERSION } from './api';
import { ConditionType, makeCondition } from '../status/conditions';
import { parseClusterName } from '../model/names';
import { objectNamespace } from '../store/objects';
import { compareStrings } from '../util/compare';

interface ServiceLike {
  ports?: { name?: string; port?: number }[];
}

/**
 * Returns the status of every BackendTLSPolicy that has an ancestor, or that still carries an
 * ancestor entry of ours (then with no ancestor of ours, so the status writer removes it).
 *
 * `fleets` are the build's FleetModels; their cluster names say which Service ports each Gateway uses.
 */
export function backendTlsPolicyStatuses(
  view: StoreView,
  opts: BuildOptions,
  index: BackendTlsIndex,
  fleets: readonly FleetModel[],
): ObjectStatus[] {
  if (index.empty) return [];
  const ancestors = new Map<ResolvedBackendTlsPolicy, Set<string>>();
  for (const fleet of fleets) {
    for (const cluster of fleet.clusters) {
      const parts = parseClusterName(cluster.name);
      // Policies apply to HTTPRoute and GRPCRoute backends only (docs/gateway-api.md §24).
      if (!parts || cluster.protocol === 'tcp') continue;
      const svc = view.get('Service', parts.namespace, parts.service);
      const portName =
        ((svc?.spec ?? {}) as ServiceLike).ports?.find((p) => p.port === parts.port)?.name ?? '';
      for (const policy of index.targeting(parts.namespace, parts.service, portName)) {
        const set = ancestors.get(policy) ?? new Set<string>();
        set.add(fleet.fleet);
        ancestors.set(policy, set);
      }
    }
  }
  const out: ObjectStatus[] = [];
  // In key order, whatever order the store lists them in: output is deterministic.
  for (const policy of [...index.policies].sort((a, b) => compareStrings(a.key, b.key))) {
    const gateways = [...(ancestors.get(policy) ?? [])].sort(compareStrings);
    if (gateways.length === 0 && !hasOurAncestor(policy, opts.controllerName)) continue;
    const gen = policy.object.metadata.generation;
    const conditions = [
      makeCondition(
        ConditionType.Accepted,
        policy.accepted.status,
        policy.accepted.reason,
        policy.accepted.message,
        gen,
        opts.now,
      ),
      makeCondition(
        ConditionType.ResolvedRefs,
        policy.resolvedRefs.status,
        policy.resolvedRefs.reason,
        policy.resolvedRefs.message,
        gen,
        opts.now,
      ),
    ];
    out.push({
      apiVersion: GATEWAY_API_VERSION,
      kind: 'BackendTLSPolicy',
      metadata: {
        namespace: objectNamespace(policy.object),
        name: policy.object.metadata.name,
        generation: gen,
      },
      status: {
        ancestors: gateways.map((fleet) => {
          const [namespace, name] = fleet.split('/');
          return {
            ancestorRef: { group: GATEWAY_API_GROUP, kind: 'Gateway', namespace, name },
            controllerName: opts.controllerName,
            conditions: conditions.map((c) => ({ ...c })),
          };
        }),
      },
    });
  }
  return out;
}

/** Returns whether the policy's stored status has an ancestor entry written by this controller. */
function hasOurAncestor(policy: ResolvedBackendTlsPolicy, controllerName: string): boolean {
  const ancestors = (policy.object.status as { ancestors?: { controllerName?: string }[] } | undefined)
    ?.ancestors;
  return Array.isArray(ancestors) && ancestors.some((a) => a?.controllerName === controllerName);
}
