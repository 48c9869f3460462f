/**
 * Translating a fleet's long lists (clusters, secrets, route configurations) by reusing, per
 * fleet, what the same list gave last time.
 *
 * Every per-node translation is memoized by node identity (memoByNode), yet looking 45,000 nodes
 * up in those memos on every change of a 20,000-ListenerSet fleet costs ~20 ms. The model builder
 * reuses unchanged nodes, so a list that changed in a few places holds the very same nodes at the
 * other indices as the last list translated for that fleet; their translations are taken from the
 * last output by index, and only the replaced nodes are translated (from their memo, or anew).
 */

import { commonEnds } from '../../util/common-ends';

/** The last list translated under one key, and its translation (index by index). */
interface LastList {
  readonly input: readonly object[];
  readonly output: readonly unknown[];
}

/**
 * Per fleet and list key, the last input list and its output. The caller forgets a fleet when it
 * goes (forget), so a removed fleet's last translation is not kept.
 */
export class ListReuse {
  private readonly fleets = new Map<string, Map<string, LastList>>();

  /**
   * Returns `input.map(translate)`, reusing the last output under (fleet, key) for every index
   * that holds the very same node as then, or, when the length changed, for the common head and
   * tail of the two lists. The returned array is shared: callers must not modify it.
   *
   * Correct when `translate` is a pure function of its node that returns the same object for the
   * same node (memoByNode): then a reused element is exactly what translating it would give, so
   * the result equals a full translation element for element, by identity. Input nodes are
   * immutable model data (src/model/fleet.ts), so holding the input list is enough to compare.
   */
  map<K extends object, V>(
    fleet: string,
    key: string,
    input: readonly K[],
    translate: (node: K) => V,
  ): readonly V[] {
    let lists = this.fleets.get(fleet);
    if (!lists) {
      lists = new Map();
      this.fleets.set(fleet, lists);
    }
    const last = lists.get(key);
    let output: V[];
    if (last && last.input === input) {
      output = last.output as V[];
    } else if (last && last.input.length === input.length) {
      output = (last.output as V[]).slice();
      for (let i = 0; i < input.length; i++) if (input[i] !== last.input[i]) output[i] = translate(input[i]);
    } else if (last) {
      // A node added or removed: the common head and tail are reused, the nodes between translated.
      const was = last.input;
      const { head, tail } = commonEnds(was, input);
      const old = last.output as V[];
      output = old.slice(0, head);
      for (let i = head; i < input.length - tail; i++) output.push(translate(input[i]));
      for (let i = old.length - tail; i < old.length; i++) output.push(old[i]);
    } else {
      output = input.map((node) => translate(node));
    }
    lists.set(key, { input, output });
    return output;
  }

  /** Keeps only the given keys of a fleet (the lists its last translation used). */
  retain(fleet: string, keys: ReadonlySet<string>): void {
    const lists = this.fleets.get(fleet);
    if (!lists) return;
    for (const key of [...lists.keys()]) if (!keys.has(key)) lists.delete(key);
  }

  /** Drops everything remembered of a fleet. */
  forget(fleet: string): void {
    this.fleets.delete(fleet);
  }
}
