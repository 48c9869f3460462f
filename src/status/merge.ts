/**
 * Merges a freshly computed status with the previous one:
 *  - lastTransitionTime is kept for conditions whose status did not change, so a rebuild that
 *    changes nothing writes nothing;
 *  - conditions are matched by type within the same place: top-level `status.conditions`,
 *    `status.listeners[name].conditions`, `status.parents[parentRef+controllerName].conditions`,
 *    a policy's `status.ancestors[ancestorRef+controllerName].conditions`;
 *  - conditions of types Convoy never writes (another controller's, see OWNED_CONDITION_TYPES)
 *    are kept untouched after ours, so a read-modify-write never removes or alters them.
 */
import type { Condition, ObjectStatus } from './types';
import { OWNED_CONDITION_TYPES } from './conditions';
import { deepEqual } from '../util/deep-equal';

type Json = unknown;

/** Returns whether `v` is a plain object (not null, not an array). */
function isRecord(v: Json): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Returns whether `v` looks like a condition (string type and status). */
function isCondition(v: Json): v is Condition {
  return isRecord(v) && typeof v.type === 'string' && typeof v.status === 'string';
}

/**
 * Returns `next` with the previous lastTransitionTime kept where a condition's status did not
 * change, followed by the previous conditions of types Convoy does not own.
 */
function mergeConditions(prev: Json, next: Condition[]): Condition[] {
  const old = new Map<string, Condition>();
  if (Array.isArray(prev)) for (const c of prev) if (isCondition(c)) old.set(c.type, c);
  const merged = next.map((c) => {
    const p = old.get(c.type);
    if (p && p.status === c.status && typeof p.lastTransitionTime === 'string' && p.lastTransitionTime) {
      return { ...c, lastTransitionTime: p.lastTransitionTime };
    }
    return c;
  });
  const written = new Set(next.map((c) => c.type));
  if (Array.isArray(prev)) {
    for (const c of prev) {
      if (isCondition(c) && !OWNED_CONDITION_TYPES.has(c.type) && !written.has(c.type)) merged.push(c);
    }
  }
  return merged;
}

/** Returns stable JSON with sorted keys (undefined values left out), used to match parentRefs. */
export function canonicalJson(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isRecord(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** Returns the key of a status.parents entry: its parentRef and controllerName. */
function parentKey(entry: Record<string, unknown>): string {
  return `${canonicalJson(entry.parentRef)}|${String(entry.controllerName ?? '')}`;
}

/** Returns the key of a policy's status.ancestors entry: its ancestorRef and controllerName. */
function ancestorKey(entry: Record<string, unknown>): string {
  return `${canonicalJson(entry.ancestorRef)}|${String(entry.controllerName ?? '')}`;
}

/** Merges a keyed list (listeners by name, parents by parentRef+controllerName). */
function mergeKeyedList(prev: Json, next: Json[], key: (e: Record<string, unknown>) => string): Json[] {
  const old = new Map<string, Record<string, unknown>>();
  if (Array.isArray(prev)) for (const e of prev) if (isRecord(e)) old.set(key(e), e);
  return next.map((e) => {
    if (!isRecord(e) || !Array.isArray(e.conditions)) return e;
    const p = old.get(key(e));
    return { ...e, conditions: mergeConditions(p?.conditions, e.conditions as Condition[]) };
  });
}

/**
 * Returns `next` merged with the previous status of the same object (see the file comment): top-level
 * conditions, listeners' and parents' conditions.
 */
export function mergeStatus(previous: ObjectStatus | undefined, next: ObjectStatus): ObjectStatus {
  if (!previous) return next;
  const prev = previous.status ?? {};
  const status: Record<string, unknown> = { ...next.status };
  if (Array.isArray(status.conditions)) {
    status.conditions = mergeConditions(prev.conditions, status.conditions as Condition[]);
  }
  if (Array.isArray(status.listeners)) {
    status.listeners = mergeKeyedList(prev.listeners, status.listeners, (e) => String(e.name));
  }
  if (Array.isArray(status.parents)) {
    status.parents = mergeKeyedList(prev.parents, status.parents, parentKey);
  }
  if (Array.isArray(status.ancestors)) {
    status.ancestors = mergeKeyedList(prev.ancestors, status.ancestors, ancestorKey);
  }
  return { ...next, status };
}

/** Returns a deep copy of `v` without conditions' lastTransitionTime. */
function stripTransitionTimes(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripTransitionTimes);
  if (isRecord(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v)) {
      if (k === 'lastTransitionTime' && isCondition(v)) continue;
      out[k] = stripTransitionTimes(val);
    }
    return out;
  }
  return v;
}

/**
 * Returns whether two statuses are equal apart from conditions' lastTransitionTime.
 *
 * Key order does not matter; list order does.
 */
export function statusesEqual(a: ObjectStatus, b: ObjectStatus): boolean {
  return canonicalJson(stripTransitionTimes(a)) === canonicalJson(stripTransitionTimes(b));
}

/**
 * Returns whether two freshly built statuses are deeply equal, ignoring conditions'
 * lastTransitionTime (a build stamps new conditions with its own time).
 *
 * When a build's status for an object equals the last build's this way, merging it gives the last
 * merged status again, so the merge can be skipped.
 */
export function sameBuiltStatus(a: Json, b: Json): boolean {
  return deepEqual(a, b, 'lastTransitionTime');
}
