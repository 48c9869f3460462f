import type { KubeObject } from '../../store/objects';
import { compareListenerSets } from '../listenersets';
import type { ResolvedListenerSet } from '../resolved';

/**
 * Whether a new ListenerSet sorts after every set a Gateway has (docs/gateway-api.md §5), the
 * ListenerSet fast path's precondition (docs/architecture.md §8), in one comparison instead of one
 * per set.
 */

/**
 * Per list of a Gateway's sets (lists are never changed once built): whether every timestamp
 * parses and the last set sorts strictly after every other.
 */
const lastIsGreatest = new WeakMap<readonly ResolvedListenerSet[], boolean>();

/**
 * True when every timestamp of `sets` and of `ls` parses and `ls` sorts strictly after every set:
 * what comparing it with each set gives. With every timestamp parsed, compareListenerSets orders
 * lexicographically by (instant, timestamp text, namespace/name, kind), a total order, so when the
 * last set is known to be the greatest, one comparison with it decides. That is found out once
 * per list (O(n)) and carried to the list with `ls` appended (rememberAppended).
 */
export function sortsLast(sets: readonly ResolvedListenerSet[], ls: KubeObject): boolean {
  if (!parses(ls)) return false;
  if (sets.length > 0 && isLastGreatest(sets))
    return compareListenerSets(sets[sets.length - 1].object, ls) < 0;
  for (const s of sets) {
    if (!parses(s.object)) return false;
    if (compareListenerSets(s.object, ls) >= 0) return false;
  }
  return true;
}

/**
 * Records that `appended` is `sets` with a set for which sortsLast was true appended: its last
 * set is then the greatest, so the next ListenerSet added to the same Gateway costs one comparison.
 */
export function rememberAppended(
  sets: readonly ResolvedListenerSet[],
  appended: readonly ResolvedListenerSet[],
): void {
  if (appended.length === sets.length + 1) lastIsGreatest.set(appended, true);
}

function isLastGreatest(sets: readonly ResolvedListenerSet[]): boolean {
  let known = lastIsGreatest.get(sets);
  if (known === undefined) {
    const last = sets[sets.length - 1].object;
    known =
      parses(last) &&
      sets.every(
        (s, i) => i === sets.length - 1 || (parses(s.object) && compareListenerSets(s.object, last) < 0),
      );
    lastIsGreatest.set(sets, known);
  }
  return known;
}

function parses(obj: KubeObject): boolean {
  return !Number.isNaN(Date.parse(obj.metadata.creationTimestamp ?? ''));
}
