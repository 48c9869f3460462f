/**
 * What the removal fast paths (listenerset-removed.ts, route-removed.ts; docs/architecture.md §8)
 * share: editing the state's statuses with removals, and pruning a fleet's clusters, secrets and
 * CA bundles to what its remaining chains still name.
 */
import type { ClusterModel, FleetModel, PortModel, VirtualHostModel } from '../../model/fleet';
import type { ObjectStatus } from '../../status/types';
import { statusKey } from '../../status/types';
import type { ClusterRef } from '../backends';
import type { BuildMemo } from '../build-memo';
import type { LayeredMap } from '../../util/layered-map';
import type { BuildState } from './state';
import { commonEnds } from '../../util/common-ends';

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
 *
 * Only what the previous ports named and `ports` may no longer name can go: the names of the
 * chains, route configurations and TCP backends `ports` no longer hold (the same objects are the
 * same names) and of `removedRefs`. Those candidates alone are looked for in `ports`, and the look
 * stops once each is found, so a removal costs membership tests instead of collecting every name
 * of 5,000 chains (docs/architecture.md §8, "Pruning by candidates").
 */
export function prunedFleet(
  memo: BuildMemo,
  previous: FleetModel,
  ports: PortModel[],
  removedRefs: Iterable<ClusterRef>,
): FleetModel | undefined {
  for (const c of previous.clusters) if (c.tls) return undefined;
  const refs = [...removedRefs];
  const candidates = namesNoLongerHeld(memo, previous.ports, ports);
  for (const r of refs) candidates.clusters.add(r.name);
  // Only an http1 reference to an http1 cluster asks whether a TCP backend names the cluster.
  const tcpWanted = new Set(refs.filter((r) => r.protocol === 'http1').map((r) => r.name));
  const found = namedAmong(memo, ports, candidates, tcpWanted);
  const gone = (set: Set<string>, seen: Set<string>, name: string): boolean =>
    set.has(name) && !seen.has(name);
  const clusters = previous.clusters.filter((c) => !gone(candidates.clusters, found.clusters, c.name));
  const byName = new Map<string, ClusterModel>();
  for (const c of clusters) if (candidates.clusters.has(c.name)) byName.set(c.name, c);
  for (const ref of refs) {
    const c = byName.get(ref.name);
    if (!c || ref.protocol !== c.protocol) continue;
    if (c.protocol !== 'http1' || found.tcp.has(c.name)) return undefined;
  }
  const keptSecrets = previous.secrets.filter((s) => !gone(candidates.secrets, found.secrets, s.name));
  const keptBundles = previous.caBundles?.filter((b) => !gone(candidates.bundles, found.bundles, b.name));
  const out: FleetModel = {
    ...previous,
    ports,
    clusters: clusters.length === previous.clusters.length ? previous.clusters : clusters,
    secrets: keptSecrets.length === previous.secrets.length ? previous.secrets : keptSecrets,
  };
  if (!keptBundles || keptBundles.length === 0) delete out.caBundles;
  else if (keptBundles.length < previous.caBundles!.length) out.caBundles = keptBundles;
  return out;
}

/** Cluster, secret and CA bundle names. */
interface Names {
  clusters: Set<string>;
  secrets: Set<string>;
  bundles: Set<string>;
}

/**
 * The names `before`'s ports give through parts `after` no longer holds: chains gone from a port
 * (those between the chain lists' common head and tail, compared by identity), a port's HTTP
 * route configuration or TCP backends replaced, a port gone. Parts `after` still holds name the
 * same as before, so no other name can stop being named.
 */
function namesNoLongerHeld(
  memo: BuildMemo,
  before: readonly PortModel[],
  after: readonly PortModel[],
): Names {
  const out: Names = { clusters: new Set(), secrets: new Set(), bundles: new Set() };
  const afterByName = new Map(after.map((p) => [p.name, p] as const));
  for (const q of before) {
    const p = afterByName.get(q.name);
    if (p === q) continue;
    if (q.http && q.http.virtualHosts !== p?.http?.virtualHosts)
      for (const n of memo.virtualHosts.clusterNamesOf(q.http.virtualHosts)) out.clusters.add(n);
    if (q.l4 && q.l4 !== p?.l4) for (const b of q.l4.backends) out.clusters.add(b.cluster);
    const was = q.filterChains;
    const now = p?.filterChains ?? [];
    const { head, tail } = commonEnds(was, now);
    for (let i = head; i < was.length - tail; i++) {
      const fc = was[i];
      if (fc.virtualHosts)
        for (const n of memo.virtualHosts.clusterNamesOf(fc.virtualHosts)) out.clusters.add(n);
      for (const b of fc.tcpBackends ?? []) out.clusters.add(b.cluster);
      for (const s of fc.secretNames) out.secrets.add(s);
      if (fc.clientValidation) out.bundles.add(fc.clientValidation.caBundle);
    }
  }
  return out;
}

/**
 * Which of `wanted` the ports name, and which of `tcpWanted` they name as a TCP backend; stops
 * once everything wanted is found.
 */
function namedAmong(
  memo: BuildMemo,
  ports: readonly PortModel[],
  wanted: Names,
  tcpWanted: ReadonlySet<string>,
): Names & { tcp: Set<string> } {
  const found = {
    clusters: new Set<string>(),
    secrets: new Set<string>(),
    bundles: new Set<string>(),
    tcp: new Set<string>(),
  };
  const complete = (): boolean =>
    found.clusters.size === wanted.clusters.size &&
    found.tcp.size === tcpWanted.size &&
    found.secrets.size === wanted.secrets.size &&
    found.bundles.size === wanted.bundles.size;
  const viaRoutes = (vhosts: VirtualHostModel[]): void => {
    if (found.clusters.size === wanted.clusters.size) return;
    for (const n of memo.virtualHosts.clusterNamesOf(vhosts))
      if (wanted.clusters.has(n)) found.clusters.add(n);
  };
  const viaTcp = (name: string): void => {
    if (wanted.clusters.has(name)) found.clusters.add(name);
    if (tcpWanted.has(name)) found.tcp.add(name);
  };
  for (const p of ports) {
    if (complete()) break;
    if (p.http) viaRoutes(p.http.virtualHosts);
    for (const fc of p.filterChains) {
      if (fc.virtualHosts) viaRoutes(fc.virtualHosts);
      for (const b of fc.tcpBackends ?? []) viaTcp(b.cluster);
      if (found.secrets.size < wanted.secrets.size)
        for (const s of fc.secretNames) if (wanted.secrets.has(s)) found.secrets.add(s);
      if (fc.clientValidation && wanted.bundles.has(fc.clientValidation.caBundle))
        found.bundles.add(fc.clientValidation.caBundle);
    }
    for (const b of p.l4?.backends ?? []) viaTcp(b.cluster);
  }
  return found;
}
