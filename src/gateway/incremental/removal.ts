/**
 * What the removal fast paths (listenerset-removed.ts, route-removed.ts; docs/architecture.md §8)
 * share: editing the state's statuses with removals, and pruning a fleet's clusters, secrets and
 * CA bundles to what its remaining chains still name.
 */
import type { ClusterModel, FleetModel, PortModel } from '../../model/fleet';
import type { ObjectStatus } from '../../status/types';
import { statusKey } from '../../status/types';
import type { ClusterRef } from '../backends';
import type { BuildMemo } from '../build-memo';
import type { LayeredMap } from '../../util/layered-map';
import type { BuildState } from './state';

/**
 * Replaces and removes statuses of a state's status list, copied once; removal moves the last
 * status into the hole, so each costs O(1) and the index changes by two entries.
 *
 * The list's order is not the build's after that (fast paths already append new statuses at the
 * end): what a status list means is its set of statuses by key, which the index keeps exact.
 */
export class StatusEdits {
  private readonly statuses: ObjectStatus[];
  private readonly moved = new Map<string, number>();
  private readonly gone = new Set<string>();
  private readonly changedByKey = new Map<string, ObjectStatus>();

  constructor(private readonly state: BuildState) {
    this.statuses = state.statuses.slice();
  }

  /** Returns whether the state (as edited so far) has a status for `key`. */
  has(key: string): boolean {
    return this.position(key) !== undefined;
  }

  /** Replaces the status of its object; false when there is none to replace. */
  replace(s: ObjectStatus): boolean {
    const key = statusKey(s);
    const at = this.position(key);
    if (at === undefined) return false;
    this.statuses[at] = s;
    this.changedByKey.set(key, s);
    return true;
  }

  /** Removes the status of `key`; false when there is none. */
  remove(key: string): boolean {
    const at = this.position(key);
    if (at === undefined) return false;
    const last = this.statuses.pop()!;
    if (at < this.statuses.length) {
      this.statuses[at] = last;
      this.moved.set(statusKey(last), at);
    }
    this.moved.delete(key);
    this.gone.add(key);
    this.changedByKey.delete(key);
    return true;
  }

  /** The edited list and index, the statuses built anew and the keys gone. */
  result(): {
    statuses: ObjectStatus[];
    statusIndex: LayeredMap<string, number>;
    changed: ObjectStatus[];
    removed: string[];
  } {
    return {
      statuses: this.statuses,
      statusIndex: this.state.statusIndex.without(this.gone).with(this.moved),
      changed: [...this.changedByKey.values()],
      removed: [...this.gone],
    };
  }

  private position(key: string): number | undefined {
    if (this.gone.has(key)) return undefined;
    return this.moved.get(key) ?? this.state.statusIndex.get(key);
  }
}

/**
 * Returns `previous` with `ports` (its ports with chains removed or route configurations
 * recomputed) and the clusters, secrets and CA bundles buildFleet would derive from them, or
 * undefined when that cannot be shown without buildFleet.
 *
 * buildFleet has one cluster per cluster name its route configurations and TCP backends name, one
 * secret per name a chain presents and one CA bundle per bundle a chain validates with: so those
 * of `previous` that `ports` still name, when each kept cluster keeps its protocol (buildClusters
 * takes the strongest of its references). `removedRefs` are the references of routes that may no
 * longer be used; one asking for a kept cluster's own protocol could have been the only one to,
 * which is provably not the case only for http1 (a name route configurations use has an HTTP
 * reference, and any http2 one would have made the cluster http2) unless a TCP backend names it.
 * Fleets whose clusters carry upstream TLS (their client certificate is a secret too) decline.
 */
export function prunedFleet(
  memo: BuildMemo,
  previous: FleetModel,
  ports: PortModel[],
  removedRefs: Iterable<ClusterRef>,
): FleetModel | undefined {
  const names = new Set<string>();
  const tcpNames = new Set<string>();
  const secrets = new Set<string>();
  const bundles = new Set<string>();
  for (const p of ports) {
    if (p.http) for (const n of memo.virtualHosts.clusterNamesOf(p.http.virtualHosts)) names.add(n);
    for (const fc of p.filterChains) {
      if (fc.virtualHosts) for (const n of memo.virtualHosts.clusterNamesOf(fc.virtualHosts)) names.add(n);
      for (const b of fc.tcpBackends ?? []) tcpNames.add(b.cluster);
      for (const s of fc.secretNames) secrets.add(s);
      if (fc.clientValidation) bundles.add(fc.clientValidation.caBundle);
    }
    for (const b of p.l4?.backends ?? []) tcpNames.add(b.cluster);
  }
  for (const n of tcpNames) names.add(n);
  const kept = new Map<string, ClusterModel>();
  for (const c of previous.clusters) {
    if (c.tls) return undefined;
    if (names.has(c.name)) kept.set(c.name, c);
  }
  for (const ref of removedRefs) {
    const c = kept.get(ref.name);
    if (!c || ref.protocol !== c.protocol) continue;
    if (c.protocol !== 'http1' || tcpNames.has(c.name)) return undefined;
  }
  const clusters = kept.size === previous.clusters.length ? previous.clusters : [...kept.values()];
  const keptSecrets = previous.secrets.filter((s) => secrets.has(s.name));
  const keptBundles = previous.caBundles?.filter((b) => bundles.has(b.name));
  const out: FleetModel = {
    ...previous,
    ports,
    clusters,
    secrets: keptSecrets.length === previous.secrets.length ? previous.secrets : keptSecrets,
  };
  if (!keptBundles || keptBundles.length === 0) delete out.caBundles;
  else if (keptBundles.length < previous.caBundles!.length) out.caBundles = keptBundles;
  return out;
}
