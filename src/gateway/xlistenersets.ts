/**
 * The legacy XListenerSet (gateway.networking.x-k8s.io/v1alpha1, docs/gateway-api.md §29): which
 * XListenerSets a ListenerSet of the same namespace/name supersedes, the ports their status
 * recorded, and their status in the legacy schema. Everything else (admission, precedence,
 * conflicts, validation, route attachment) is ListenerSet's, on the same merged model.
 */
import type { KubeObject } from '../store/objects';
import {
  XLISTENERSET_GROUP,
  XLISTENERSET_KIND,
  XLISTENERSET_VERSION,
  objectNamespace,
} from '../store/objects';
import type { ObjectStatus, Condition } from '../status/types';
import type { BuildOptions, ResolvedListener, ResolvedListenerSet, StoreView } from './resolved';
import type { ListenerStatus } from './api';
import { ConditionType, Reason, makeCondition } from '../status/conditions';

/** Returns whether `ls` is an XListenerSet. */
export function isXListenerSet(ls: KubeObject): boolean {
  return ls.kind === XLISTENERSET_KIND;
}

/**
 * Returns whether a ListenerSet (not being deleted) has the XListenerSet's namespace/name: the v1
 * object wins, so a cluster half-way through `convoy migrate` never programs a set twice.
 */
export function isSuperseded(view: StoreView, xls: KubeObject): boolean {
  const v1 = view.get('ListenerSet', objectNamespace(xls), xls.metadata.name);
  return v1 !== undefined && !v1.metadata.deletionTimestamp;
}

/**
 * Returns the port the XListenerSet's status reports for listener `name`, if any: what an earlier
 * build (of this replica or another) assigned, read back so the assignment stays put.
 */
export function recordedPort(xls: KubeObject, name: string): number | undefined {
  const listeners = (xls.status as { listeners?: unknown } | undefined)?.listeners;
  if (!Array.isArray(listeners)) return undefined;
  for (const entry of listeners as { name?: unknown; port?: unknown }[]) {
    if (entry && entry.name === name && typeof entry.port === 'number') return entry.port;
  }
  return undefined;
}

/** Returns whether a listener was declared without a port (unset or 0) and got none. */
export function withoutPort(l: ResolvedListener): boolean {
  return !(l.port > 0);
}

/**
 * Returns an XListenerSet listener that has no port and gets none (no pool, or the pool is
 * exhausted): `Accepted=False/UnsupportedPort` as the XListenerSet API asks, serving nothing.
 * `base` is the listener as resolved without validation (notAllowedListener's shape).
 */
export function unsupportedPortListener(
  opts: BuildOptions,
  base: ResolvedListener,
  gen: number | undefined,
): ResolvedListener {
  const msg = opts.dynamicPorts
    ? `the listener has no port and the dynamic port range ${opts.dynamicPorts.first}-${opts.dynamicPorts.last} has none left`
    : 'the listener has no port and dynamic ports are off (--dynamic-port-range)';
  return {
    ...base,
    port: 0,
    certificates: [],
    supportedKinds: [],
    ready: false,
    conditions: [
      makeCondition(ConditionType.Accepted, 'False', Reason.UnsupportedPort, msg, gen, opts.now),
      makeCondition(ConditionType.Programmed, 'False', Reason.UnsupportedPort, msg, gen, opts.now),
    ],
    attachedRoutes: 0,
  };
}

/** Returns the conditions of an XListenerSet a ListenerSet supersedes. */
export function supersededConditions(set: ResolvedListenerSet, opts: BuildOptions): Condition[] {
  const gen = set.object.metadata.generation;
  const msg =
    'a ListenerSet (gateway.networking.k8s.io/v1) with the same namespace and name takes its place; ' +
    'this XListenerSet is not programmed';
  return [
    makeCondition(ConditionType.Accepted, 'False', Reason.SupersededByListenerSet, msg, gen, opts.now),
    makeCondition(ConditionType.Programmed, 'False', Reason.SupersededByListenerSet, msg, gen, opts.now),
  ];
}

/**
 * Builds an XListenerSet's status in the legacy schema: the ListenerSet's conditions and one
 * `listeners[]` entry per listener with its port (the assigned one for a dynamic port). The legacy
 * schema requires a port of at least 1 in every entry, so a listener that got no port has no
 * entry; the set's Accepted message names it instead.
 */
export function xListenerSetStatus(
  set: ResolvedListenerSet,
  conditions: Condition[],
  entry: (l: ResolvedListener) => ListenerStatus,
): ObjectStatus {
  const obj = set.object;
  const unplaced = set.listeners.filter(withoutPort).map((l) => l.name);
  const withNote =
    unplaced.length === 0
      ? conditions
      : conditions.map((c) =>
          c.type === ConditionType.Accepted
            ? {
                ...c,
                message: `${c.message}; listeners without a port (UnsupportedPort): ${unplaced.join(', ')}`,
              }
            : c,
        );
  const listeners = set.listeners
    .filter((l) => !withoutPort(l))
    .map((l) => {
      const e = entry(l);
      return {
        name: e.name,
        port: l.port,
        supportedKinds: e.supportedKinds,
        attachedRoutes: e.attachedRoutes,
        conditions: e.conditions,
      };
    });
  return {
    apiVersion: `${XLISTENERSET_GROUP}/${XLISTENERSET_VERSION}`,
    kind: XLISTENERSET_KIND,
    metadata: {
      namespace: objectNamespace(obj),
      name: obj.metadata.name,
      generation: obj.metadata.generation,
    },
    status: { conditions: withNote, listeners } as unknown as Record<string, unknown>,
  };
}
