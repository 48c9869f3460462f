/**
 * What a BuildState (gateway/incremental/state.ts) holds, as plain data, so tests can compare the
 * state a fast path returns with the state of a full build of the same store.
 */
import type { BuildState } from '../../src/gateway/incremental/state';

function sorted<T>(entries: Iterable<[string, T]>): [string, T][] {
  return [...entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** Everything a state holds, as plain data (listeners by name, routes by key and generation). */
export function stateContents(state: BuildState): unknown {
  return JSON.parse(
    JSON.stringify({
      gateways: state.gateways.map((g) => ({
        fleet: g.fleet,
        accepted: g.accepted,
        listeners: g.listeners.map((l) => [l.qualifiedName, l.ready, l.attachedRoutes, l.conditions]),
        listenerSets: g.listenerSets.map((s) => [
          s.object.metadata.name,
          s.accepted,
          s.listeners.map((l) => [l.qualifiedName, l.ready, l.attachedRoutes, l.conditions]),
        ]),
      })),
      parents: sorted(
        [...state.parents].map(([k, t]) => [
          k,
          [t.fleet, t.accepted, t.listeners.map((l) => [l.qualifiedName, l.attachedRoutes])],
        ]),
      ),
      routes: sorted([...state.routes].map(([k, r]) => [k, r.object.metadata.generation])),
      attached: sorted(
        [...state.attached].map(([qn, list]) => [
          qn,
          list.map((a) => [a.route.id.key, a.route.object.metadata.generation, a.hostnames]),
        ]),
      ),
      statuses: sorted(
        state.statuses.map((s) => [`${s.kind}/${s.metadata.namespace}/${s.metadata.name}`, s]),
      ),
      statusIndex: sorted(
        [...state.statusIndex].map(([k, i]) => {
          const s = state.statuses[i];
          return [k, `${s.kind}/${s.metadata.namespace ?? ''}/${s.metadata.name}`];
        }),
      ),
      listenerFleet: sorted(state.listenerFleet),
      namedParents: [...state.namedParents].sort(),
      policy: state.policy,
    }),
  );
}
