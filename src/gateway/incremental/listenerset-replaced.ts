/**
 * Replaces a ListenerSet in the state of the last build by what the store holds now: removal
 * (listenerset-removed.ts) then addition (listenerset.ts), the fast path of a ListenerSet updated
 * and of a Secret its listeners name created or deleted (docs/architecture.md §8).
 */
import type { FleetModel } from '../../model/fleet';
import type { KubeObject } from '../../store/objects';
import { objectKey, objectNamespace } from '../../store/objects';
import { deepEqual } from '../../util/deep-equal';
import type { BuildMemo } from '../build-memo';
import type { BuildOptions, StoreView } from '../resolved';
import { addListenerSet } from './listenerset';
import { removeListenerSet } from './listenerset-removed';
import type { ListenerSetRemoved } from './listenerset-removed';
import type { BuildState } from './state';

/**
 * The result of replaceListenerSet, shaped as removeListenerSet's: `changed` holds the statuses
 * built anew in order (a later one of a key replaces an earlier), `listeners` the qualified names
 * of the old set's listeners the new one does not have.
 */
export type ListenerSetReplaced = Omit<ListenerSetRemoved, 'place'>;

/**
 * Returns the state with ListenerSet `current` (as the store holds it) in place of the version the
 * state's build resolved, its Gateway's patched fleet and the statuses changed; or undefined when a
 * full build is needed.
 *
 * Removing the old version and adding the current one gives what a full build gives when each
 * step does: removeListenerSet shows no other listener, route or chain depends on the set, and
 * addListenerSet that the set added last in precedence (it must be its Gateway's newest) changes
 * nothing but its own chains and the statuses of it, its Gateway and the routes that name it
 * (re-attached as waiting routes: the removal dropped those that name no other parent). A set
 * whose spec and creation time did not change (only a Secret it names came or went) need not be
 * its Gateway's newest: it goes back at its own place, where it claims what it claimed before, so
 * no other listener's conflict changes (addListenerSet declines if any of its own is conflicted).
 * That is the order Kubernetes' separate watches may give a set deleted with its Secret: the
 * Secret's deletion first (bench/README.md "Kubernetes mode (session 18)"). The
 * listeners' memory of served certificates is kept between the two, as a full build keeps it.
 */
export function replaceListenerSet(
  view: StoreView,
  opts: BuildOptions,
  memo: BuildMemo,
  state: BuildState,
  current: KubeObject,
  previousFleet: (fleet: string) => FleetModel | undefined,
): ListenerSetReplaced | undefined {
  const ns = objectNamespace(current);
  const before = state.parents.get(objectKey('ListenerSet', ns, current.metadata.name));
  const old = before && state.gateways.find((g) => g.fleet === before.fleet);
  const was = old?.listenerSets.find((s) => s.object.kind === 'ListenerSet' && sameSet(s.object, current));
  const removed = removeListenerSet(view, opts, memo, state, ns, current.metadata.name, previousFleet);
  if (!removed) return undefined;
  const fleetAfter = (f: string) =>
    f === removed.touched && removed.fleet ? removed.fleet : previousFleet(f);
  // The same set (its Secret came or went): it goes back where it was, not last.
  const place = was && deepEqual(was.object.spec, current.spec) ? removed.place : undefined;
  const added = addListenerSet(view, opts, memo, removed.state, current, [], fleetAfter, place);
  if (!added) return undefined;
  const kept = added.state.listenerFleet;
  return {
    touched: removed.touched,
    fleet: added.fleet ?? removed.fleet,
    changed: [...removed.changed, ...added.changed],
    removed: removed.removed,
    listeners: removed.listeners.filter((qn) => !kept.has(qn)),
    state: added.state,
  };
}

/** True when `a` and `b` are the same ListenerSet at the same precedence (name and creation time). */
function sameSet(a: KubeObject, b: KubeObject): boolean {
  return (
    objectNamespace(a) === objectNamespace(b) &&
    a.metadata.name === b.metadata.name &&
    a.metadata.creationTimestamp === b.metadata.creationTimestamp &&
    !Number.isNaN(Date.parse(b.metadata.creationTimestamp ?? ''))
  );
}
