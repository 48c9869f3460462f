/**
 * The fast paths the controller runs on the last build's state (docs/architecture.md §8), as pure
 * steps over the store, the build options, the memo and the last fleet models: routes edited or
 * created, a ListenerSet created, and the removal and replacement paths (routes and ListenerSets
 * deleted, ListenerSets updated, certificate Secrets created or deleted), applied one after the
 * other; and applyWindow, which runs them in turn over one debounce window that mixes their
 * changes.
 */
import type { BuildMemo } from '../gateway/build-memo';
import { addListenerSet } from '../gateway/incremental/listenerset';
import { removeListenerSet } from '../gateway/incremental/listenerset-removed';
import { replaceListenerSet } from '../gateway/incremental/listenerset-replaced';
import { addRoutes } from '../gateway/incremental/route-added';
import { removeRoutes } from '../gateway/incremental/route-removed';
import { updateRoutes, type RouteEdit } from '../gateway/incremental/routes';
import { routeIdentity } from '../gateway/routes/identity';
import type { BuildState } from '../gateway/incremental/state';
import { parentNamesOf } from '../gateway/incremental/state';
import { compareListenerSets } from '../gateway/listenersets';
import type { BuildOptions, StoreView } from '../gateway/resolved';
import type { FleetModel } from '../model/fleet';
import { reuseUnchanged } from '../model/reuse';
import type { ObjectStatus } from '../status/types';
import { statusKey } from '../status/types';
import type { KubeObject } from '../store/objects';
import { isNamespacedName, keyOf, namespacedName, objectKey, objectNamespace } from '../store/objects';
import type { ObjectStore } from '../store/store';
import { currentVersions } from './fleet-refresh';
import type { FullBuildReason, PendingWork } from './pending-work';
import type { ReferenceIndex } from './relevance';

/** What every fast path reads besides the state: the store, build options, memo, last fleets. */
export interface FastPathInputs {
  store: ObjectStore;
  options: BuildOptions;
  /** The memo the state's build used. */
  memo: BuildMemo;
  /** Each fleet's last published FleetModel. */
  fleets: ReadonlyMap<string, FleetModel>;
}

/** What a fast path computed (Controller.runFastPath applies it). */
export interface FastPathOutcome {
  /** Every fleet it concerns, served differently or not. */
  touched: string[];
  fleets: FleetModel[];
  state: BuildState;
  changed: ObjectStatus[];
  /** Keys of objects that have no status any more, and listeners that no longer exist. */
  removed?: string[];
  listeners?: string[];
  /** Teaches the reference index what the changed objects refer to (their later changes count). */
  learn: (index: ReferenceIndex) => void;
}

/**
 * Route fast path: only existing HTTPRoutes/GRPCRoutes were edited since the last full build
 * (`changed`: the versions it saw; certificate contents and endpoints are kept current in the
 * fleets). `updateRoutes` (gateway/incremental/routes.ts) shows the edits change only those
 * routes' statuses and route configurations; the fleets keep their SecretModels, which a route
 * edit cannot change.
 */
export function routesEdited(
  inputs: FastPathInputs,
  state: BuildState,
  changed: Map<string, KubeObject>,
): FastPathOutcome | undefined {
  const { store, options, memo, fleets: last } = inputs;
  const edits: RouteEdit[] = [];
  for (const previous of changed.values()) {
    const [current] = currentVersions(store, [previous]) ?? [];
    if (!current) return undefined;
    edits.push({ previous, current });
  }
  const result = updateRoutes(store, options, memo, state, edits, (f) => last.get(f));
  if (!result) return undefined;
  const fleets = result.fleets.map(({ model, patched }) => {
    // A patched model already shares every untouched node (and its secrets) with the last one.
    const previous = last.get(model.fleet);
    if (patched || !previous) return model;
    return reuseUnchanged(previous, { ...model, secrets: previous.secrets });
  });
  return {
    touched: fleets.map((f) => f.fleet),
    fleets,
    state: result.state,
    changed: result.changed,
    // backendRefs may have changed: Services they name become relevant (see addRoute).
    learn: (index) => edits.forEach(({ current }) => index.addRoute(current)),
  };
}

/**
 * ListenerSet fast path: exactly one ListenerSet was created, maybe with routes that name only it
 * and Secrets no build referred to; `addListenerSet` (gateway/incremental/listenerset.ts) shows
 * that only adds the set's chains, secrets and clusters to its Gateway's fleet.
 */
export function listenerSetAdded(
  inputs: FastPathInputs,
  state: BuildState,
  added: Map<string, KubeObject>,
): FastPathOutcome | undefined {
  const { store, options, memo, fleets: last } = inputs;
  const current = currentVersions(store, added.values());
  const sets = current?.filter((o) => o.kind === 'ListenerSet') ?? [];
  if (!current || sets.length !== 1) return undefined;
  const routes = current.filter((o) => o.kind !== 'ListenerSet');
  const result = addListenerSet(store, options, memo, state, sets[0], routes, (f) => last.get(f));
  if (!result) return undefined;
  const fleets = result.fleet ? [result.fleet] : [];
  return {
    touched: fleets.map((f) => f.fleet),
    fleets,
    state: result.state,
    changed: result.changed,
    learn: (index) => {
      index.addListenerOwner(sets[0]);
      for (const r of routes) index.addRoute(r);
    },
  };
}

/**
 * Route-creation fast path: only HTTPRoutes/GRPCRoutes were created (and Secrets no build referred
 * to); `addRoutes` (gateway/incremental/route-added.ts) attaches them as a full build.
 */
export function routesCreated(
  inputs: FastPathInputs,
  state: BuildState,
  added: Map<string, KubeObject>,
): FastPathOutcome | undefined {
  const { store, options, memo, fleets: last } = inputs;
  const routes = currentVersions(store, added.values());
  const result = routes && addRoutes(store, options, memo, state, routes, (f) => last.get(f));
  if (!routes || !result) return undefined;
  return { ...result, learn: (index) => routes.forEach((r) => index.addRoute(r)) };
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
  inputs: FastPathInputs,
  state: BuildState,
  changed: Map<string, KubeObject>,
): FastPathOutcome | undefined {
  const { store, options: opts, memo, fleets: lastFleets } = inputs;
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
    // The sets replaced may name other Secrets now.
    learn: (index) => replace.forEach((set) => index.addListenerOwner(set)),
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
            isNamespacedName(secret, typeof r.namespace === 'string' ? r.namespace : ns, r.name),
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

/** The changes of one window the state-based fast paths take (PendingWork's fields of that name). */
export type WindowChanges = Pick<PendingWork, 'routes' | 'added' | 'structural' | 'structuralReason'>;

/** Why applyWindow declined: the declining step's fallback reason and the changes it was given. */
export interface WindowDecline {
  reason: FullBuildReason;
  changed: Map<string, KubeObject>;
}

/**
 * Returns the fallback of a window's first kind of change (route edits, then removals and
 * replacements, then creations): what a full build counts under when applyWindow cannot even
 * start (the last build failed, or a fleet it touches is held); a declining step overwrites it.
 */
export function windowDecline(w: WindowChanges): WindowDecline {
  if (w.routes.size > 0) return { reason: 'route_fast_path_precondition', changed: w.routes };
  if (w.structural.size > 0)
    return { reason: w.structuralReason ?? 'listenerset_updated', changed: w.structural };
  return { reason: creationReason(w.added), changed: w.added };
}

/** The fallback reason of creations: new routes only, or a ListenerSet among them. */
function creationReason(added: Map<string, KubeObject>): FullBuildReason {
  return [...added.values()].some((o) => o.kind === 'ListenerSet')
    ? 'listenerset_fast_path_precondition'
    : 'route_created_fast_path_precondition';
}

/** True when the window holds changes for a state-based fast path (edits, creations, removals). */
export function hasStateChanges(w: WindowChanges): boolean {
  return w.routes.size + w.added.size + w.structural.size > 0;
}

/**
 * Returns the convoy_builds_total result of applyWindow over `w`: the single fast path's own
 * result when only one kind of change is pending (`route`, `route_created`, `listenerset`, or
 * structuralResult's), else `mixed`.
 */
export function windowResult(store: StoreView, w: WindowChanges): string {
  const kinds = [w.routes.size, w.added.size, w.structural.size].filter((n) => n > 0).length;
  if (kinds > 1) return 'mixed';
  if (w.structural.size > 0) return structuralResult(store, w.structural);
  if (w.added.size > 0)
    return [...w.added.values()].some((o) => o.kind === 'ListenerSet') ? 'listenerset' : 'route_created';
  return 'route';
}

/**
 * Applies one debounce window's route edits, removals and replacements, and creations to `state`
 * as a sequence of the single fast paths, each over the state and fleets the one before left, and
 * returns their combined outcome; or undefined when one declined (`declined` then says which and
 * why: a full build is needed).
 *
 * Why a window may mix them: `kubectl apply` of several objects reaches Convoy in one window or in
 * several depending on load, and the split windows each take a fast path; the combined window must
 * give the same snapshot (docs/architecture.md §8). The order is the one the fast paths' own
 * preconditions ask for: route edits first (updateRoutes wants everything but the routes as the
 * last build saw it), then removals and replacements (applyStructuralChanges), then creations
 * (routesCreated / listenerSetAdded, which append to what is left). Keys a later change in the
 * window superseded are dropped first: an edit of a route created or deleted in the window (the
 * creation or the removal decides it), a removal or replacement recorded at an object's creation in
 * the window (its creation adds what the store holds now, or nothing when it is gone again). A
 * created route a replaced ListenerSet already attached (as a route waiting for it) is not added
 * again.
 */
export function applyWindow(
  inputs: FastPathInputs,
  state: BuildState,
  w: WindowChanges,
  declined: WindowDecline,
): FastPathOutcome | undefined {
  const { store } = inputs;
  const exists = (o: KubeObject) => store.get(o.kind, objectNamespace(o), o.metadata.name) !== undefined;
  const added = new Map([...w.added].filter(([, o]) => exists(o)));
  // Recorded at its creation (the same object): the creation decides what the store holds now.
  const structural = new Map([...w.structural].filter(([k, o]) => w.added.get(k) !== o));
  const edits = new Map([...w.routes].filter(([k]) => !w.added.has(k) && !structural.has(k)));

  const fleets = new Map(inputs.fleets);
  /** The fleets the steps changed, by name (the last step's model). */
  const updated = new Map<string, FleetModel>();
  const touched = new Set<string>();
  const statuses = new Map<string, ObjectStatus>();
  const removed = new Set<string>();
  const listeners: string[] = [];
  const learns: ((index: ReferenceIndex) => void)[] = [];
  /** Runs one step over the state so far; false when it declined (with `reason` for `changed`). */
  const step = (
    reason: FullBuildReason,
    changed: Map<string, KubeObject>,
    run: (i: FastPathInputs, s: BuildState) => FastPathOutcome | undefined,
  ): boolean => {
    if (changed.size === 0) return true;
    const out = run({ ...inputs, fleets }, state);
    if (!out) {
      declined.reason = reason;
      declined.changed = changed;
      return false;
    }
    for (const key of out.removed ?? []) {
      statuses.delete(key);
      removed.add(key);
    }
    for (const st of out.changed) {
      statuses.set(statusKey(st), st);
      removed.delete(statusKey(st));
    }
    for (const f of out.touched) touched.add(f);
    for (const f of out.fleets) {
      fleets.set(f.fleet, f);
      updated.set(f.fleet, f);
    }
    listeners.push(...(out.listeners ?? []));
    learns.push(out.learn);
    state = out.state;
    return true;
  };
  if (!step('route_fast_path_precondition', edits, (i, s) => routesEdited(i, s, edits))) return undefined;
  const structuralReason = w.structuralReason ?? 'listenerset_updated';
  if (!step(structuralReason, structural, (i, s) => applyStructuralChanges(i, s, structural)))
    return undefined;
  // A created route a replaced set attached as waiting for it is in the state already.
  const creations = [...added.values()].filter((o) => o.kind === 'ListenerSet' || !attachedAlready(state, o));
  const skipped = [...added.values()].filter((o) => !creations.includes(o));
  // Routes that name no new set first, then each new set with the new routes that name it, in
  // precedence order: each set is then its Gateway's newest when it is added, as the fast path asks.
  const sets = creations.filter((o) => o.kind === 'ListenerSet').sort(compareListenerSets);
  const setByName = new Map(sets.map((o) => [namespacedName(objectNamespace(o), o.metadata.name), o]));
  const plain = new Map<string, KubeObject>();
  const withSet = new Map(sets.map((o) => [o, new Map([[keyOf(o), o]])]));
  for (const o of creations) {
    if (o.kind === 'ListenerSet') continue;
    const set = parentNamesOf(o)
      .map((n) => setByName.get(n))
      .find((x) => x !== undefined);
    (set ? withSet.get(set)! : plain).set(keyOf(o), o);
  }
  if (!step('route_created_fast_path_precondition', plain, (i, s) => routesCreated(i, s, plain)))
    return undefined;
  for (const one of withSet.values()) {
    if (!step('listenerset_fast_path_precondition', one, (i, s) => listenerSetAdded(i, s, one)))
      return undefined;
  }
  return {
    touched: [...touched],
    fleets: [...updated.values()],
    state,
    changed: [...statuses.values()],
    removed: [...removed],
    listeners,
    learn: (index) => {
      for (const learn of learns) learn(index);
      for (const r of skipped) index.addRoute(r);
    },
  };
}

/** True when `route` (an HTTPRoute/GRPCRoute) is compiled in the state from this very version. */
function attachedAlready(state: BuildState, route: KubeObject): boolean {
  if (route.kind !== 'HTTPRoute' && route.kind !== 'GRPCRoute') return false;
  return state.routes.get(routeIdentity(route.kind, route).key)?.object === route;
}
