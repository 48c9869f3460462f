/**
 * Resolves the GatewayClasses Convoy owns and builds their status.
 *
 * Convoy owns the classes whose spec.controllerName equals opts.controllerName (docs/gateway-api.md
 * §2). Owned classes whose parameters are valid (docs/architecture.md §13) are Accepted and advertise the supported features; other classes are left alone.
 * Resolution (resolveGatewayClasses) decides; the status (gatewayClassStatuses) reports it.
 */
import type { BuildOptions, ResolvedGatewayClass, StoreView } from './resolved';
import type { KubeObject } from '../store/objects';
import type { ObjectStatus } from '../status/types';
import { GATEWAY_API_VERSION, gatewayClassSpec } from './api';
import { ConditionType, Reason, makeCondition } from '../status/conditions';
import { supportedFeatures } from './features';
import { compareStrings } from '../util/compare';
import type { FleetParameters } from './fleet-parameters';
import { referencedParameters } from './fleet-parameters';
import { classRoutabilities } from './routability';

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
 * Returns the EnvoyFleet parameters of an owned GatewayClass (undefined: it names none, so its
 * Gateways are unmanaged unless they name their own), or why the class cannot be accepted.
 *
 * The spec says a class whose parametersRef is invalid or names a missing object SHOULD be
 * rejected with InvalidParameters; so is one whose parameters list a routability they cannot give.
 */
export function gatewayClassParameters(
  view: StoreView,
  gc: KubeObject,
  opts: BuildOptions,
): { parameters?: FleetParameters; problem?: { reason: string; message: string } } {
  const ref = gatewayClassSpec(gc)?.parametersRef;
  if (!ref) return {};
  if (!opts.managedFleets)
    return { problem: managedFleetsOff(`parametersRef ${ref.group || 'core'}/${ref.kind} ${ref.name}`) };
  const res = referencedParameters(view, ref, ref.namespace, 'parametersRef');
  if ('problem' in res) return { problem: { reason: Reason.InvalidParameters, message: res.problem } };
  const routabilities = classRoutabilities(res.parameters);
  if ('problem' in routabilities) {
    return {
      problem: { reason: Reason.InvalidParameters, message: `parametersRef: ${routabilities.problem}` },
    };
  }
  return { parameters: res.parameters };
}

/** The problem of a parametersRef while managed fleets are off. */
export function managedFleetsOff(what: string): { reason: string; message: string } {
  return {
    reason: Reason.InvalidParameters,
    message: `${what}: this Convoy does not provision fleets, so it takes no parameters (convoy serve --managed-fleets)`,
  };
}

/** Resolves the GatewayClasses Convoy owns, sorted by name: whether each is accepted, and why not. */
export function resolveGatewayClasses(view: StoreView, opts: BuildOptions): ResolvedGatewayClass[] {
  const owned = ownedGatewayClasses(view, opts);
  return view
    .list('GatewayClass')
    .filter((gc) => owned.has(gc.metadata.name))
    .sort((a, b) => compareStrings(a.metadata.name, b.metadata.name))
    .map((gc) => {
      const { parameters, problem } = gatewayClassParameters(view, gc, opts);
      if (problem) return { object: gc, accepted: false, problem };
      return parameters ? { object: gc, accepted: true, parameters } : { object: gc, accepted: true };
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
  for (const { object: gc, problem, parameters } of classes) {
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
      status: {
        conditions: [accepted],
        supportedFeatures: supportedFeatures(parameters !== undefined && parameters.managed !== false),
      },
    });
  }
  return out;
}
