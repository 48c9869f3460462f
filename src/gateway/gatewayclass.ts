/**
 * GatewayClass: Convoy owns the classes whose spec.controllerName equals opts.controllerName.
 * Owned classes are Accepted and advertise the supported features; other classes are left alone.
 */
import type { BuildOptions, StoreView } from './resolved';
import type { KubeObject } from '../store/objects';
import type { ObjectStatus } from '../status/types';
import { GATEWAY_API_VERSION, gatewayClassSpec } from './api';
import { ConditionType, Reason, makeCondition } from '../status/conditions';
import { supportedFeatures } from './features';
import { compareStrings } from '../util/compare';

export function ownedGatewayClasses(view: StoreView, opts: BuildOptions): Set<string> {
  const names = new Set<string>();
  for (const gc of view.list('GatewayClass')) {
    if (gc.metadata.deletionTimestamp) continue;
    if (gatewayClassSpec(gc)?.controllerName === opts.controllerName) names.add(gc.metadata.name);
  }
  return names;
}

/**
 * Why an owned GatewayClass cannot be accepted, or undefined. Convoy takes no parameters, so any
 * parametersRef is invalid (the spec says such a class SHOULD be rejected with InvalidParameters).
 */
export function gatewayClassProblem(gc: KubeObject): { reason: string; message: string } | undefined {
  const ref = gatewayClassSpec(gc)?.parametersRef;
  if (ref) {
    return {
      reason: Reason.InvalidParameters,
      message: `parametersRef ${ref.group || 'core'}/${ref.kind} ${ref.name}: Convoy supports no GatewayClass parameters`,
    };
  }
  return undefined;
}

/** Owned classes that are also accepted (Gateways of other owned classes are not accepted). */
export function acceptedGatewayClasses(view: StoreView, opts: BuildOptions): Set<string> {
  const owned = ownedGatewayClasses(view, opts);
  for (const gc of view.list('GatewayClass')) {
    if (owned.has(gc.metadata.name) && gatewayClassProblem(gc)) owned.delete(gc.metadata.name);
  }
  return owned;
}

export function gatewayClassStatuses(view: StoreView, opts: BuildOptions): ObjectStatus[] {
  const owned = ownedGatewayClasses(view, opts);
  const out: ObjectStatus[] = [];
  const classes = view
    .list('GatewayClass')
    .filter((gc) => owned.has(gc.metadata.name))
    .sort((a, b) => compareStrings(a.metadata.name, b.metadata.name));
  for (const gc of classes) {
    const generation = gc.metadata.generation;
    const problem = gatewayClassProblem(gc);
    const accepted = problem
      ? makeCondition(ConditionType.Accepted, 'False', problem.reason, problem.message, generation, opts.now)
      : makeCondition(
          ConditionType.Accepted,
          'True',
          Reason.Accepted,
          'GatewayClass is accepted by Convoy',
          generation,
          opts.now,
        );
    out.push({
      apiVersion: GATEWAY_API_VERSION,
      kind: 'GatewayClass',
      metadata: { name: gc.metadata.name, generation },
      status: { conditions: [accepted], supportedFeatures: supportedFeatures() },
    });
  }
  return out;
}
