/**
 * Resolves the GatewayClasses Convoy owns and builds their status.
 *
 * Convoy owns the classes whose spec.controllerName equals opts.controllerName (docs/gateway-api.md
 * §2). Owned classes are Accepted and advertise the supported features; other classes are left alone.
 * Resolution (resolveGatewayClasses) decides; the status (gatewayClassStatuses) reports it.
 */
import type { BuildOptions, ResolvedGatewayClass, StoreView } from './resolved';
import type { KubeObject } from '../store/objects';
import type { ObjectStatus } from '../status/types';
import { GATEWAY_API_VERSION, gatewayClassSpec } from './api';
import { ConditionType, Reason, makeCondition } from '../status/conditions';
import { supportedFeatures } from './features';
import { compareStrings } from '../util/compare';

/** Returns the names of the GatewayClasses Convoy owns (its controllerName), leaving out deleting ones. */
export function ownedGatewayClasses(view: StoreView, opts: BuildOptions): Set<string> {
  const names = new Set<string>();
  for (const gc of view.list('GatewayClass')) {
    if (gc.metadata.deletionTimestamp) continue;
    if (gatewayClassSpec(gc)?.controllerName === opts.controllerName) names.add(gc.metadata.name);
  }
  return names;
}

/**
 * Returns why an owned GatewayClass cannot be accepted, or undefined when it can.
 *
 * Convoy takes no parameters, so any parametersRef is invalid (the spec says such a class SHOULD be
 * rejected with InvalidParameters).
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

/** Resolves the GatewayClasses Convoy owns, sorted by name: whether each is accepted, and why not. */
export function resolveGatewayClasses(view: StoreView, opts: BuildOptions): ResolvedGatewayClass[] {
  const owned = ownedGatewayClasses(view, opts);
  return view
    .list('GatewayClass')
    .filter((gc) => owned.has(gc.metadata.name))
    .sort((a, b) => compareStrings(a.metadata.name, b.metadata.name))
    .map((gc) => {
      const problem = gatewayClassProblem(gc);
      return problem ? { object: gc, accepted: false, problem } : { object: gc, accepted: true };
    });
}

/** Returns the names of the accepted classes (Gateways of other owned classes are not accepted). */
export function acceptedGatewayClasses(classes: readonly ResolvedGatewayClass[]): Set<string> {
  return new Set(classes.filter((c) => c.accepted).map((c) => c.object.metadata.name));
}

/** Builds the status of every resolved GatewayClass: Accepted (or why not) and the supported features. */
export function gatewayClassStatuses(
  classes: readonly ResolvedGatewayClass[],
  opts: BuildOptions,
): ObjectStatus[] {
  const out: ObjectStatus[] = [];
  for (const { object: gc, problem } of classes) {
    const generation = gc.metadata.generation;
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
