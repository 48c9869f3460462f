/**
 * The removal and replacement fast paths as the controller runs them (docs/architecture.md §8):
 * routes and ListenerSets deleted, ListenerSets updated, and certificate Secrets created or deleted,
 * applied one after the other to the last build's state.
 */
import type { BuildMemo } from '../gateway/build-memo';
import { removeListenerSet } from '../gateway/incremental/listenerset-removed';
import { replaceListenerSet } from '../gateway/incremental/listenerset-replaced';
import { removeRoutes } from '../gateway/incremental/route-removed';
import type { BuildState } from '../gateway/incremental/state';
import type { BuildOptions, StoreView } from '../gateway/resolved';
import type { FleetModel } from '../model/fleet';
import type { ObjectStatus } from '../status/types';
import { statusKey } from '../status/types';
import type { KubeObject } from '../store/objects';
import { namespacedName, objectKey, objectNamespace } from '../store/objects';

/** What a removal or replacement pass computed, for the controller to publish. */
export interface StructuralOutcome {
  /** Every fleet it concerns, served differently or not. */
  touched: string[];
  fleets: FleetModel[];
  state: BuildState;
  /** Statuses built anew, and the keys of objects that have none any more. */
  changed: ObjectStatus[];
  removed: string[];
  /** Listeners that no longer exist (their served-certificate memory goes). */
  listeners: string[];
  /** ListenerSets now in the state, whose Secrets the reference index must know. */
  sets: KubeObject[];
}

/**
 * Applies `changed` (store key → the object as the last build saw it: HTTPRoutes/GRPCRoutes and
 * ListenerSets deleted, ListenerSets updated, Secrets listeners name created or deleted) to
 * `state`, or returns undefined when a full build is needed: route deletions first (a deleted
 * set's routes may go with it), then each ListenerSet removed, then each ListenerSet replaced by
 * its current version (updated, or naming a Secret that came or went). Each step is one of the
 * proven fast paths of src/gateway/incremental, over the state and fleets the previous step left.
 */
export function applyStructuralChanges(
  store: StoreView,
  opts: BuildOptions,
  memo: BuildMemo,
  state: BuildState,
  changed: Map<string, KubeObject>,
  lastFleets: ReadonlyMap<string, FleetModel>,
): StructuralOutcome | undefined {
  const fleets = new Map<string, FleetModel>();
  const touched = new Set<string>();
  const statuses = new Map<string, ObjectStatus>();
  const removed = new Set<string>();
  const listeners: string[] = [];
  const fleetOf = (f: string) => fleets.get(f) ?? lastFleets.get(f);
  const record = (r: { changed: ObjectStatus[]; removed: string[]; state: BuildState }) => {
    for (const key of r.removed) {
      statuses.delete(key);
      removed.add(key);
    }
    for (const s of r.changed) {
      statuses.set(statusKey(s), s);
      removed.delete(statusKey(s));
    }
    state = r.state;
  };
  const current = (o: KubeObject) => store.get(o.kind, objectNamespace(o), o.metadata.name);
  const objects = [...changed.values()];
  const routes = objects.filter((o) => (o.kind === 'HTTPRoute' || o.kind === 'GRPCRoute') && !current(o));
  if (routes.length > 0) {
    const r = removeRoutes(store, opts, memo, state, routes, fleetOf);
    if (!r) return undefined;
    record(r);
    for (const f of r.touched) touched.add(f);
    for (const f of r.fleets) fleets.set(f.fleet, f);
  }
  const replace = new Map<string, KubeObject>();
  // ListenerSets first: a Secret deleted with its set names no set left.
  const ordered = [
    ...objects.filter((o) => o.kind === 'ListenerSet'),
    ...objects.filter((o) => o.kind !== 'ListenerSet' && !routes.includes(o)),
  ];
  for (const o of ordered) {
    if (o.kind === 'ListenerSet') {
      const now = current(o);
      if (now) replace.set(objectKey(o.kind, objectNamespace(o), o.metadata.name), now);
      else {
        const r = removeListenerSet(store, opts, memo, state, objectNamespace(o), o.metadata.name, fleetOf);
        if (!r) return undefined;
        record(r);
        touched.add(r.touched);
        if (r.fleet) fleets.set(r.touched, r.fleet);
        listeners.push(...r.listeners);
      }
    } else if (o.kind === 'Secret') {
      const naming = setsNaming(state, namespacedName(objectNamespace(o), o.metadata.name));
      if (!naming) return undefined;
      for (const set of naming) {
        const now = current(set);
        if (!now) return undefined;
        replace.set(objectKey(set.kind, objectNamespace(set), set.metadata.name), now);
      }
    } else return undefined;
  }
  for (const set of replace.values()) {
    const r = replaceListenerSet(store, opts, memo, state, set, fleetOf);
    if (!r) return undefined;
    record(r);
    touched.add(r.touched);
    if (r.fleet) fleets.set(r.touched, r.fleet);
    listeners.push(...r.listeners);
  }
  return {
    touched: [...touched],
    fleets: [...fleets.values()],
    state,
    changed: [...statuses.values()],
    removed: [...removed],
    listeners,
    sets: [...replace.values()],
  };
}

interface CertificateRef {
  name?: unknown;
  namespace?: unknown;
}

/**
 * Returns the ListenerSets (as the state resolved them) whose listeners name Secret `secret`
 * (`namespace/name`), or undefined when a Gateway's own listener does (a full build decides those).
 */
function setsNaming(state: BuildState, secret: string): KubeObject[] | undefined {
  const names = (owner: KubeObject) => {
    const listeners = (owner.spec as { listeners?: unknown } | undefined)?.listeners;
    if (!Array.isArray(listeners)) return false;
    const ns = objectNamespace(owner);
    return listeners.some((l: { tls?: { certificateRefs?: unknown } } | undefined) => {
      const refs = l?.tls?.certificateRefs;
      return (
        Array.isArray(refs) &&
        refs.some(
          (r: CertificateRef | undefined) =>
            typeof r?.name === 'string' &&
            namespacedName(typeof r.namespace === 'string' ? r.namespace : ns, r.name) === secret,
        )
      );
    });
  };
  const out: KubeObject[] = [];
  for (const g of state.gateways) {
    if (names(g.object)) return undefined;
    for (const set of g.listenerSets) {
      if (!names(set.object)) continue;
      if (set.object.kind !== 'ListenerSet') return undefined;
      out.push(set.object);
    }
  }
  return out;
}

/**
 * Returns the convoy_builds_total result of a structural pass over `changed`: `route_removed` when
 * only routes went, `listenerset_removed` when a ListenerSet went, else `listenerset_replaced`.
 */
export function structuralResult(store: StoreView, changed: Map<string, KubeObject>): string {
  const gone = (o: KubeObject) => !store.get(o.kind, objectNamespace(o), o.metadata.name);
  const objects = [...changed.values()];
  if (objects.some((o) => o.kind === 'ListenerSet' && gone(o))) return 'listenerset_removed';
  return objects.every((o) => o.kind !== 'ListenerSet' && o.kind !== 'Secret' && gone(o))
    ? 'route_removed'
    : 'listenerset_replaced';
}
