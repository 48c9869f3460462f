/**
 * Kubernetes label selectors (metav1.LabelSelector semantics) and namespace labels.
 */
import type { StoreView, LabelSelector } from './resolved';

export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * Returns whether `labels` satisfy every matchLabels entry and every matchExpressions requirement.
 *
 * An empty selector matches everything (as in Kubernetes). An unknown operator matches nothing,
 * so a malformed selector never widens access.
 */
export function labelsMatch(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const have = labels ?? {};
  const own = (k: string) => Object.prototype.hasOwnProperty.call(have, k);
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!own(key) || have[key] !== value) return false;
  }
  for (const expr of selector.matchExpressions ?? []) {
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
        if (!own(expr.key) || !values.includes(have[expr.key])) return false;
        break;
      case 'NotIn':
        if (own(expr.key) && values.includes(have[expr.key])) return false;
        break;
      case 'Exists':
        if (!own(expr.key)) return false;
        break;
      case 'DoesNotExist':
        if (own(expr.key)) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/**
 * Returns the labels of a namespace, from its Namespace object when the store has one.
 *
 * The `kubernetes.io/metadata.name` label is always present (the API server sets it on every
 * namespace, and file mode may have no Namespace objects at all).
 */
export function namespaceLabels(view: StoreView, namespace: string): Record<string, string> {
  const ns = view.get('Namespace', '', namespace);
  return { ...(ns?.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: namespace };
}
