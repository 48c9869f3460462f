/**
 * ListenerSet (gateway.networking.k8s.io/v1, GEP-1713): which sets belong to a Gateway, whether the
 * Gateway's spec.allowedListeners admits them, their precedence order, and their status. With
 * BuildOptions.xListenerSets the legacy XListenerSets take part as sets of the same kind
 * (xlistenersets.ts, docs/gateway-api.md §29).
 */
import type { KubeObject } from '../store/objects';
import { namespacedName, objectNamespace } from '../store/objects';
import type { BuildOptions, ResolvedListener, ResolvedListenerSet, StoreView } from './resolved';
import type { ObjectStatus, Condition } from '../status/types';
import type { ListenerSetStatus, ListenerStatus, ParentGatewayReference } from './api';
import { GATEWAY_API_GROUP, GATEWAY_API_VERSION, gatewaySpec, listenerSetSpec } from './api';
import { ConditionType, Reason, makeCondition } from '../status/conditions';
import { labelsMatch, namespaceLabels } from './selectors';
import { compareStrings } from '../util/compare';
import { XLISTENERSET_KIND } from '../store/objects';
import { supersededConditions, xListenerSetStatus } from './xlistenersets';

/** Returns the parent Gateway a ListenerSet names, defaults applied; undefined if it is not a Gateway. */
export function listenerSetParent(ls: KubeObject): { namespace: string; name: string } | undefined {
  const spec = listenerSetSpec(ls);
  if (!spec) return undefined;
  const ref: ParentGatewayReference = spec.parentRef;
  if ((ref.group ?? GATEWAY_API_GROUP) !== GATEWAY_API_GROUP) return undefined;
  if ((ref.kind ?? 'Gateway') !== 'Gateway') return undefined;
  if (!ref.name) return undefined;
  return { namespace: ref.namespace || objectNamespace(ls), name: ref.name };
}

/**
 * Orders ListenerSets by their precedence (docs/gateway-api.md §5): oldest creationTimestamp first, then "namespace/name",
 * then kind (a ListenerSet before an XListenerSet), so the order is total.
 */
export function compareListenerSets(a: KubeObject, b: KubeObject): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) {
    const da = Date.parse(ta);
    const db = Date.parse(tb);
    if (!Number.isNaN(da) && !Number.isNaN(db) && da !== db) return da - db;
    return compareStrings(ta, tb);
  }
  const ka = namespacedName(objectNamespace(a), a.metadata.name);
  const kb = namespacedName(objectNamespace(b), b.metadata.name);
  return compareStrings(ka, kb) || compareStrings(a.kind, b.kind);
}

/** Returns the ListenerSets whose parentRef names this Gateway in precedence order, minus deleting ones. */
export function listenerSetsForGateway(view: StoreView, gateway: KubeObject): KubeObject[] {
  const ns = objectNamespace(gateway);
  const name = gateway.metadata.name;
  return view
    .list('ListenerSet')
    .filter((ls) => {
      if (ls.metadata.deletionTimestamp) return false;
      const parent = listenerSetParent(ls);
      return parent !== undefined && parent.namespace === ns && parent.name === name;
    })
    .sort(compareListenerSets);
}

/**
 * Returns all ListenerSets (and XListenerSets when `xListenerSets`) by the "namespace/name" of the
 * Gateway they name, each in precedence order.
 */
export function listenerSetsByParent(view: StoreView, xListenerSets = false): Map<string, KubeObject[]> {
  const out = new Map<string, KubeObject[]>();
  const all = xListenerSets
    ? [...view.list('ListenerSet'), ...view.list(XLISTENERSET_KIND)]
    : view.list('ListenerSet');
  for (const ls of all) {
    if (ls.metadata.deletionTimestamp) continue;
    const parent = listenerSetParent(ls);
    if (!parent) continue;
    const key = namespacedName(parent.namespace, parent.name);
    const list = out.get(key);
    if (list) list.push(ls);
    else out.set(key, [ls]);
  }
  for (const list of out.values()) list.sort(compareListenerSets);
  return out;
}

/** Returns whether Gateway.spec.allowedListeners admits a ListenerSet from `namespace` (None by default). */
export function listenerSetAllowed(view: StoreView, gateway: KubeObject, namespace: string): boolean {
  const allowed = gatewaySpec(gateway).allowedListeners?.namespaces;
  const from = allowed?.from ?? 'None';
  switch (from) {
    case 'All':
      return true;
    case 'Same':
      return namespace === objectNamespace(gateway);
    case 'Selector':
      // A Selector without a selector admits nothing rather than everything.
      return (
        allowed?.selector !== undefined && labelsMatch(allowed.selector, namespaceLabels(view, namespace))
      );
    default:
      return false;
  }
}

/** Returns one `status.listeners[]` entry (Gateway or ListenerSet; same shape). */
export function listenerStatus(l: ResolvedListener): ListenerStatus {
  return {
    name: l.name,
    supportedKinds: l.supportedKinds.map((k) => ({ group: k.group, kind: k.kind })),
    attachedRoutes: l.attachedRoutes,
    conditions: l.conditions.map((c) => ({ ...c })),
  };
}

export type ListenerSetVerdict =
  | { kind: 'Superseded' }
  | { kind: 'NotAllowed' }
  | { kind: 'ParentNotAccepted' }
  | { kind: 'ListenersNotValid' }
  | { kind: 'Accepted'; partial: boolean };

/** Returns the top-level verdict for a ListenerSet, from its resolved form and its parent's acceptance. */
export function listenerSetVerdict(set: ResolvedListenerSet, parentAccepted: boolean): ListenerSetVerdict {
  if (set.superseded) return { kind: 'Superseded' };
  if (!set.allowed) return { kind: 'NotAllowed' };
  if (!parentAccepted) return { kind: 'ParentNotAccepted' };
  const ready = set.listeners.filter((l) => l.ready).length;
  if (ready === 0) return { kind: 'ListenersNotValid' };
  return { kind: 'Accepted', partial: ready < set.listeners.length };
}

/**
 * Builds the ListenerSet status subresource (conditions + one entry per spec listener); an
 * XListenerSet's is in its legacy schema (xlistenersets.ts).
 */
export function listenerSetStatus(
  set: ResolvedListenerSet,
  verdict: ListenerSetVerdict,
  opts: BuildOptions,
): ObjectStatus {
  const obj = set.object;
  const gen = obj.metadata.generation;
  const cond = (type: string, status: Condition['status'], reason: string, message: string) =>
    makeCondition(type, status, reason, message, gen, opts.now);
  let conditions: Condition[];
  switch (verdict.kind) {
    case 'Superseded':
      conditions = supersededConditions(set, opts);
      break;
    case 'NotAllowed': {
      const msg = "the parent Gateway's allowedListeners does not admit ListenerSets from this namespace";
      conditions = [
        cond(ConditionType.Accepted, 'False', Reason.NotAllowed, msg),
        cond(ConditionType.Programmed, 'False', Reason.NotAllowed, msg),
      ];
      break;
    }
    case 'ParentNotAccepted':
      conditions = [
        cond(ConditionType.Accepted, 'False', Reason.ParentNotAccepted, 'the parent Gateway is not accepted'),
        cond(
          ConditionType.Programmed,
          'False',
          Reason.ParentNotProgrammed,
          'the parent Gateway is not programmed',
        ),
      ];
      break;
    case 'ListenersNotValid':
      conditions = [
        cond(ConditionType.Accepted, 'False', Reason.ListenersNotValid, 'no listener is valid'),
        cond(ConditionType.Programmed, 'False', Reason.ListenersNotValid, 'no listener is valid'),
      ];
      break;
    case 'Accepted':
      conditions = [
        verdict.partial
          ? cond(ConditionType.Accepted, 'True', Reason.ListenersNotValid, 'some listeners are not valid')
          : cond(ConditionType.Accepted, 'True', Reason.Accepted, 'ListenerSet is accepted'),
        cond(ConditionType.Programmed, 'True', Reason.Programmed, 'valid listeners are programmed'),
      ];
      break;
  }
  if (obj.kind === XLISTENERSET_KIND) return xListenerSetStatus(set, conditions, listenerStatus);
  const status: ListenerSetStatus = {
    conditions,
    listeners: set.listeners.map((l) => listenerStatus(l)),
  };
  return {
    apiVersion: GATEWAY_API_VERSION,
    kind: 'ListenerSet',
    metadata: { namespace: objectNamespace(obj), name: obj.metadata.name, generation: gen },
    status: status as unknown as Record<string, unknown>,
  };
}
