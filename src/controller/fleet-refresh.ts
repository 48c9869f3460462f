/**
 * The fast paths' reads of the store and the certificate and endpoint fast paths' work on the last
 * FleetModels (docs/architecture.md §8): what a full build would change in them when only Secret
 * contents or EndpointSlices changed.
 */
import type { KubeObject } from '../store/objects';
import { objectNamespace } from '../store/objects';
import type { ObjectStore } from '../store/store';
import type { FleetModel, SecretModel } from '../model/fleet';
import { clusterService } from '../model/names';
import type { BuildMemo } from '../gateway/build-memo';
import { refreshClusterEndpoints } from '../gateway/backends';
import { secretToModel } from '../gateway/certificates';
import type { EndpointPolicy } from '../gateway/endpoint-guard';

/**
 * The store's current versions of `objects`, or undefined when one is gone: a deletion, which
 * pending work (pending-work.ts) already asks a full build for.
 */
export function currentVersions(store: ObjectStore, objects: Iterable<KubeObject>): KubeObject[] | undefined {
  const current: KubeObject[] = [];
  for (const o of objects) {
    const now = store.get(o.kind, objectNamespace(o), o.metadata.name);
    if (!now) return undefined;
    current.push(now);
  }
  return current;
}

/**
 * Returns the SecretModels of the changed Secrets (`changed` holds the versions the last build
 * saw), or undefined when a full build is needed instead.
 *
 * A Secret's only influence on a build is through `secretToModel` (certificates.ts): whether it is
 * a valid key pair (listener ResolvedRefs/Programmed, whether the listener's chains exist at all,
 * and whether a last good version is served instead) and, when valid, its SecretModel, which also
 * becomes its last good version. So when every changed Secret was valid at the last build and is
 * valid now, under the same name, the listeners, routes and statuses of a full build are the
 * same, and the only difference in its FleetModels is the SecretModel of each changed Secret,
 * which `secretToModel` gives exactly as the full build would.
 */
export function replacedSecrets(
  changed: Iterable<KubeObject>,
  store: ObjectStore,
  memo: BuildMemo,
): Map<string, SecretModel> | undefined {
  const replaced = new Map<string, SecretModel>();
  for (const before of changed) {
    const namespace = objectNamespace(before);
    const current = store.get('Secret', namespace, before.metadata.name);
    if (!current) return undefined;
    const was = secretToModel(before, namespace, memo.certificates);
    const now = secretToModel(current, namespace, memo.certificates);
    if (!was.ok || !now.ok || was.secret.name !== now.secret.name) return undefined;
    replaced.set(now.secret.name, now.secret);
  }
  return replaced;
}

/** The fleets that serve one of the `replaced` Secrets, with those swapped in (every other node kept). */
export function fleetsWithSecrets(
  fleets: Iterable<FleetModel>,
  replaced: ReadonlyMap<string, SecretModel>,
): FleetModel[] {
  const updates: FleetModel[] = [];
  for (const model of fleets) {
    if (!model.secrets.some((s) => replaced.has(s.name))) continue;
    updates.push({ ...model, secrets: model.secrets.map((s) => replaced.get(s.name) ?? s) });
  }
  return updates;
}

/**
 * The fleets with a cluster of one of `services`, with those clusters' endpoints recomputed (every
 * other cluster kept). Only EndpointSlices changed, so listeners, routes and statuses cannot have;
 * memoized translation then gives new bytes for the changed ClusterLoadAssignments only.
 */
export function fleetsWithEndpoints(
  fleets: Iterable<FleetModel>,
  services: ReadonlySet<string>,
  store: ObjectStore,
  endpoints: EndpointPolicy,
): FleetModel[] {
  const updates: FleetModel[] = [];
  for (const model of fleets) {
    const affected = model.clusters.filter((c) => services.has(clusterService(c.name) ?? ''));
    if (affected.length === 0) continue;
    const refreshed = new Map(refreshClusterEndpoints(store, affected, endpoints).map((c) => [c.name, c]));
    updates.push({ ...model, clusters: model.clusters.map((c) => refreshed.get(c.name) ?? c) });
  }
  return updates;
}
