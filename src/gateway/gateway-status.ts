/**
 * Gateway status (conditions, addresses, listeners, attachedListenerSets) and the statuses of the
 * ListenerSets of each Gateway, from the resolved Gateways.
 */
import type { KubeObject } from '../store/objects';
import { objectNamespace } from '../store/objects';
import type { Condition, ObjectStatus } from '../status/types';
import type { BuildOptions, ResolvedGateway, StoreView } from './resolved';
import type { GatewayStatus, GatewayStatusAddress } from './api';
import { GATEWAY_API_VERSION, gatewaySpec } from './api';
import { ConditionType, Reason, makeCondition } from './conditions';
import { acceptedGatewayClasses } from './gatewayclass';
import { gatewayProblem } from './gateways';
import { listenerSetAllowed, listenerSetStatus, listenerSetVerdict, listenerStatus } from './listenersets';

function gatewayAddresses(gw: KubeObject, view: StoreView, opts: BuildOptions): GatewayStatusAddress[] {
  const out: GatewayStatusAddress[] = [];
  for (const a of gatewaySpec(gw).addresses ?? []) {
    if (!a.value) continue;
    out.push({ type: a.type || 'IPAddress', value: a.value });
  }
  if (out.length > 0) return out;
  return dataPlaneAddresses(view, opts);
}

const IPV4 = /^(\d{1,3}\.){3}\d{1,3}$/;

/** The Envoy fleet's reachable addresses: from the configured Service's LB ingress, then flags. */
export function dataPlaneAddresses(view: StoreView, opts: BuildOptions): GatewayStatusAddress[] {
  const source = opts.gatewayAddresses;
  if (!source) return [];
  const values: string[] = [];
  if (source.service) {
    const svc = view.get('Service', source.service.namespace, source.service.name);
    const ingress = svc?.loadBalancerIngress;
    if (Array.isArray(ingress)) {
      for (const i of ingress as { ip?: unknown; hostname?: unknown }[]) {
        if (typeof i?.ip === 'string' && i.ip) values.push(i.ip);
        else if (typeof i?.hostname === 'string' && i.hostname) values.push(i.hostname);
      }
    }
  }
  for (const v of source.static ?? []) if (v && !values.includes(v)) values.push(v);
  return values.map((value) => ({
    type: IPV4.test(value) || value.includes(':') ? 'IPAddress' : 'Hostname',
    value,
  }));
}

/** Builds the status of one resolved Gateway: conditions, addresses, own listeners, attachedListenerSets. */
export function gatewayStatus(
  g: ResolvedGateway,
  view: StoreView,
  opts: BuildOptions,
  acceptedClasses: Set<string>,
): ObjectStatus {
  const gw = g.object;
  const gen = gw.metadata.generation;
  const own = g.listeners.filter((l) => l.owner.kind === 'Gateway');
  const cond = (type: string, status: Condition['status'], reason: string, message: string) =>
    makeCondition(type, status, reason, message, gen, opts.now);
  let conditions: Condition[];
  const problem = gatewayProblem(view, opts, gw, acceptedClasses);
  if (problem) {
    conditions = [
      cond(ConditionType.Accepted, 'False', problem.reason, problem.message),
      cond(ConditionType.Programmed, 'False', Reason.Invalid, 'the Gateway is not accepted'),
    ];
  } else if (!g.accepted) {
    const msg = own.length === 0 ? 'the Gateway has no listeners' : 'no listener is valid';
    conditions = [
      cond(ConditionType.Accepted, 'False', Reason.ListenersNotValid, msg),
      cond(ConditionType.Programmed, 'False', Reason.Invalid, 'the Gateway is not accepted'),
    ];
  } else {
    const invalid = own.filter((l) => !l.ready).map((l) => l.name);
    conditions = [
      invalid.length > 0
        ? cond(
            ConditionType.Accepted,
            'True',
            Reason.ListenersNotValid,
            `listeners not valid: ${invalid.join(', ')}`,
          )
        : cond(ConditionType.Accepted, 'True', Reason.Accepted, 'Gateway is accepted'),
      cond(ConditionType.Programmed, 'True', Reason.Programmed, 'Gateway is programmed on its Envoy fleet'),
    ];
  }
  const status: GatewayStatus = {
    addresses: gatewayAddresses(gw, view, opts),
    conditions,
    listeners: own.map((l) => listenerStatus(l)),
    attachedListenerSets: g.listenerSets.filter((s) => s.accepted).length,
  };
  return {
    apiVersion: GATEWAY_API_VERSION,
    kind: 'Gateway',
    metadata: { namespace: objectNamespace(gw), name: gw.metadata.name, generation: gen },
    status: status as unknown as Record<string, unknown>,
  };
}

/**
 * Statuses of every resolved Gateway and of every ListenerSet whose parent is one of them
 * (admitted or not). Call after route attachment has filled listener.attachedRoutes.
 * Sorted by kind, then namespace/name.
 */
export function gatewayAndListenerSetStatuses(
  gateways: ResolvedGateway[],
  view: StoreView,
  opts: BuildOptions,
): ObjectStatus[] {
  const out: ObjectStatus[] = [];
  const acceptedClasses = acceptedGatewayClasses(view, opts);
  for (const g of gateways) {
    out.push(gatewayStatus(g, view, opts, acceptedClasses));
    for (const set of g.listenerSets) {
      const allowed = listenerSetAllowed(view, g.object, objectNamespace(set.object));
      out.push(listenerSetStatus(set, listenerSetVerdict(set, allowed, g.accepted), opts));
    }
  }
  const key = (s: ObjectStatus) => `${s.kind}/${s.metadata.namespace ?? ''}/${s.metadata.name}`;
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
