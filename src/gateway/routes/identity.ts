import type { KubeObject } from '../../store/objects';
import { namespacedName, objectKey, objectNamespace } from '../../store/objects';
import type { RouteIdentity, RouteKind } from './types';
import { compareStrings } from '../../util/compare';

/** Returns the identity of a route object: kind, namespace, name, key, generation, creation time. */
export function routeIdentity(kind: RouteKind, obj: KubeObject): RouteIdentity {
  const namespace = objectNamespace(obj);
  return {
    kind,
    namespace,
    name: obj.metadata.name,
    key: objectKey(kind, namespace, obj.metadata.name),
    generation: obj.metadata.generation,
    created: timeKey(obj.metadata.creationTimestamp ?? ''),
  };
}

/** Orders routes for conflicts: oldest first, then namespace/name, then kind. */
export function compareRouteIds(a: RouteIdentity, b: RouteIdentity): number {
  return (
    compareStrings(a.created, b.created) ||
    compareStrings(namespacedName(a.namespace, a.name), namespacedName(b.namespace, b.name)) ||
    compareStrings(a.kind, b.kind)
  );
}

/**
 * Returns a creationTimestamp normalised to ISO-8601 UTC ('' when absent, as is when unparseable).
 *
 * RFC 3339 timestamps compare as strings once normalised this way.
 */
function timeKey(ts: string): string {
  if (!ts) return '';
  const ms = Date.parse(ts);
  return Number.isNaN(ms) ? ts : new Date(ms).toISOString();
}
