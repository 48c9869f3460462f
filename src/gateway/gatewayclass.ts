/**
 * GatewayClass: Convoy owns the classes whose spec.controllerName equals opts.controllerName.
 * Owned classes are Accepted and advertise the supported features; other classes are left alone.
 */
import type { BuildOptions, StoreView } from './resolved';
import type { ObjectStatus } from '../status/types';
import { GATEWAY_API_VERSION, gatewayClassSpec } from './api';
import { ConditionType, Reason, makeCondition } from './conditions';
import { supportedFeatures } from './features';

export function ownedGatewayClasses(view: StoreView, opts: BuildOptions): Set<string> {
  const names = new Set<string>();
  for (const gc of view.list('GatewayClass')) {
    if (gc.metadata.deletionTimestamp) continue;
    if (gatewayClassSpec(gc)?.controllerName === opts.controllerName) names.add(gc.metadata.name);
  }
  return names;
}

export function gatewayClassStatuses(view: StoreView, opts: BuildOptions): ObjectStatus[] {
  const owned = ownedGatewayClasses(view, opts);
  const out: ObjectStatus[] = [];
  const classes = view
    .list('GatewayClass')
    .filter((gc) => owned.has(gc.metadata.name))
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  for (const gc of classes) {
    const generation = gc.metadata.generation;
    const accepted = makeCondition(
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
