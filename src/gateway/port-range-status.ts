/**
 * Builds the status of every ListenerPortRange policy Convoy is responsible for
 * (docs/gateway-api.md §30): one ancestor entry, for the Gateway or ListenerSet it targets, with an
 * Accepted condition whose reason is Accepted, Conflicted, Invalid or TargetNotFound.
 *
 * A policy whose target does not exist gets TargetNotFound (no other controller reads this kind);
 * one whose target exists but belongs to a Gateway Convoy does not own gets no status from Convoy.
 */
import type { KubeObject } from '../store/objects';
import {
  FLEET_PARAMETERS_GROUP,
  FLEET_PARAMETERS_VERSION,
  PORT_RANGE_KIND,
  objectNamespace,
} from '../store/objects';
import type { ObjectStatus } from '../status/types';
import { ConditionType, makeCondition } from '../status/conditions';
import { GATEWAY_API_GROUP } from './api';
import type { BuildOptions, ResolvedGateway, StoreView } from './resolved';
import type { ResolvedPortRange } from './port-ranges';
import { ancestorOf } from './port-ranges';
import { compareStrings } from '../util/compare';
import { namespacedName } from '../store/objects';

/** Returns the statuses of the ListenerPortRange policies on Convoy's Gateways and of those whose target is missing. */
export function portRangeStatuses(
  view: StoreView,
  gateways: readonly ResolvedGateway[],
  opts: BuildOptions,
): ObjectStatus[] {
  const verdicts: ResolvedPortRange[] = gateways.flatMap((g) => g.portRanges ?? []);
  const decided = new Set(verdicts.map((v) => v.object));
  for (const policy of view.list(PORT_RANGE_KIND)) {
    if (decided.has(policy) || policy.metadata.deletionTimestamp) continue;
    const ancestor = ancestorOf(policy);
    if (view.get(ancestor.kind, ancestor.namespace, ancestor.name)) continue;
    verdicts.push({
      object: policy,
      ancestor,
      reason: 'TargetNotFound',
      message: `${ancestor.kind} ${namespacedName(ancestor.namespace, ancestor.name)} does not exist`,
    });
  }
  return verdicts
    .map((v) => statusOf(v, opts))
    .sort((a, b) =>
      compareStrings(
        namespacedName(a.metadata.namespace ?? '', a.metadata.name),
        namespacedName(b.metadata.namespace ?? '', b.metadata.name),
      ),
    );
}

function statusOf(v: ResolvedPortRange, opts: BuildOptions): ObjectStatus {
  const p: KubeObject = v.object;
  const generation = p.metadata.generation;
  return {
    apiVersion: `${FLEET_PARAMETERS_GROUP}/${FLEET_PARAMETERS_VERSION}`,
    kind: PORT_RANGE_KIND,
    metadata: { namespace: objectNamespace(p), name: p.metadata.name, generation },
    status: {
      ancestors: [
        {
          ancestorRef: {
            group: GATEWAY_API_GROUP,
            kind: v.ancestor.kind,
            namespace: v.ancestor.namespace,
            name: v.ancestor.name,
            sectionName: v.ancestor.sectionName,
          },
          controllerName: opts.controllerName,
          conditions: [
            makeCondition(
              ConditionType.Accepted,
              v.reason === 'Accepted' ? 'True' : 'False',
              v.reason,
              v.message,
              generation,
              opts.now,
            ),
          ],
        },
      ],
    },
  };
}
