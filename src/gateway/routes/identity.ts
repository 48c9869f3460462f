import type { KubeObject } from '../../store/objects';
import { namespacedName, objectKey, objectNamespace } from '../../store/objects';
import type { RouteIdentity, RouteKind } from './types';
import { compareStrings } from '../../util/compare';

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

/** Route order for conflicts: oldest first, then namespace/name, then kind. */
export function compareRouteIds(a: RouteIdentity, b: RouteIdentity): number {
  return (
    compareStrings(a.created, b.created) ||
    compareStrings(namespacedName(a.namespace, a.name), namespacedName(b.namespace, b.name)) ||
    compareStrings(a.kind, b.kind)
  );
}

/** RFC 3339 timestamps compare as strings once normalised to UTC with second precision. */
function timeKey(ts: string): string {
  if (!ts) return '';
  const ms = Date.parse(ts);
  return Number.isNaN(ms) ? ts : new Date(ms).toISOString();
}
