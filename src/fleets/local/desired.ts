import * as path from 'node:path';
import { parseFleetKey } from '../../pki/gateway-identity';

/**
 * The local Envoys `convoy serve --from-dir` should be running (docs/operations.md §14), as a
 * pure function of the fleets Convoy serves: one Envoy per Gateway, with a state folder of its
 * own. Same fleets in, same list out, in the same order.
 */

export interface LocalEnvoySpec {
  /** The fleet key `NAMESPACE/NAME`: the Gateway, node.cluster and the client certificate's identity. */
  fleet: string;
  namespace: string;
  name: string;
  /** Folder for this Envoy's bootstrap, SDS files, admin address, base id and log. */
  dir: string;
  /** node.id: unique per Envoy; stable across restarts so Convoy sees the same client come back. */
  nodeId: string;
}

/**
 * One spec per distinct, well-formed fleet key, sorted by key. Keys that are not
 * `NAMESPACE/NAME` (which Convoy never produces) are skipped rather than turned into paths.
 */
export function desiredLocalEnvoys(fleets: Iterable<string>, stateDir: string): LocalEnvoySpec[] {
  const out = new Map<string, LocalEnvoySpec>();
  for (const fleet of fleets) {
    const ref = parseFleetKey(fleet);
    if (!ref || out.has(fleet)) continue;
    out.set(fleet, {
      fleet,
      namespace: ref.namespace,
      name: ref.name,
      dir: path.join(stateDir, ref.namespace, ref.name),
      nodeId: `convoy-local-${ref.namespace}.${ref.name}`,
    });
  }
  return [...out.values()].sort((a, b) => (a.fleet < b.fleet ? -1 : a.fleet > b.fleet ? 1 : 0));
}

/** What to change to go from the running fleets to the desired ones. */
export interface FleetPlan {
  start: LocalEnvoySpec[];
  stop: string[];
}

/** Envoys to start (desired, not running) and to stop (running, no longer desired), both sorted. */
export function planLocalEnvoys(running: Iterable<string>, desired: readonly LocalEnvoySpec[]): FleetPlan {
  const runningSet = new Set(running);
  const desiredSet = new Set(desired.map((d) => d.fleet));
  return {
    start: desired.filter((d) => !runningSet.has(d.fleet)),
    stop: [...runningSet].filter((f) => !desiredSet.has(f)).sort(),
  };
}
