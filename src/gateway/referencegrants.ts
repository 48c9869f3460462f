/**
 * ReferenceGrant (gateway.networking.k8s.io v1/v1beta1): cross-namespace references are allowed
 * only when a grant in the *target* namespace lists the referrer's {group, kind, namespace} in
 * `from` and the target's {group, kind, optional name} in `to`.
 */
import type { StoreView } from './resolved';
import { objectNamespace } from '../store/objects';
import { normalizeGroup, referenceGrantSpec } from './api';

export interface ReferenceFrom {
  group: string;
  kind: string;
  namespace: string;
}

export interface ReferenceTo {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/**
 * Returns whether a reference from `from` to `to` is allowed: always within one namespace, else
 * only when a ReferenceGrant in the target's namespace permits it (docs/gateway-api.md §9).
 */
export function isReferenceAllowed(view: StoreView, from: ReferenceFrom, to: ReferenceTo): boolean {
  if (from.namespace === to.namespace) return true;
  for (const grant of view.list('ReferenceGrant')) {
    if (objectNamespace(grant) !== to.namespace) continue;
    const spec = referenceGrantSpec(grant);
    const fromOk = (spec.from ?? []).some(
      (f) =>
        normalizeGroup(f.group) === normalizeGroup(from.group) &&
        f.kind === from.kind &&
        f.namespace === from.namespace,
    );
    if (!fromOk) continue;
    const toOk = (spec.to ?? []).some(
      (t) =>
        normalizeGroup(t.group) === normalizeGroup(to.group) &&
        t.kind === to.kind &&
        (t.name === undefined || t.name === '' || t.name === to.name),
    );
    if (toOk) return true;
  }
  return false;
}
