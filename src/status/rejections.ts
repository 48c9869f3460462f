/**
 * Envoy's rejections laid over a build's statuses: a listener whose configuration the fleet
 * rejected is not programmed, whatever the build decided, and the objects concerned say so with
 * a `convoy.dev/EnvoyRejected` condition (docs/gateway-api.md §16).
 *
 * The overlay is a pure function of the build's statuses and the current rejections, applied
 * after every build and whenever the rejections change, so a rebuild never erases a rejection that
 * still holds and a fixed rejection disappears with the next publication. Statuses it does not
 * change are returned as the same objects.
 */
import type { Condition, ObjectStatus } from './types';
import { ConditionType, Reason, findCondition, makeCondition, sortConditions } from './conditions';
import { objectKey } from '../store/objects';

/** One rejected Envoy resource, as reported on an object it comes from. */
export interface RejectionNote {
  /** The resource, e.g. `Listener https-8443`. */
  resource: string;
  /** Envoys of the fleet that rejected its current version. */
  rejectedBy: number;
  /** Envoys of the fleet connected. */
  envoys: number;
  /** Envoy's message about it, one line. */
  message: string;
}

/** Notes on a route, for its status.parents entries that name one of `parents`. */
export interface RouteRejections {
  /** Keys (objectKey) of the Gateway and ListenerSets of the fleet that rejected. */
  parents: ReadonlySet<string>;
  notes: RejectionNote[];
}

/** Every note, by the status it belongs on (keys are statusKey / objectKey). */
export interface ObjectRejections {
  /** Gateway or ListenerSet → listener name → notes. */
  listeners: Map<string, Map<string, RejectionNote[]>>;
  /** HTTPRoute or GRPCRoute → notes per fleet. */
  routes: Map<string, RouteRejections[]>;
  /** Gateway → notes about resources no listener or route could be found for. */
  objects: Map<string, RejectionNote[]>;
}

export function emptyRejections(): ObjectRejections {
  return { listeners: new Map(), routes: new Map(), objects: new Map() };
}

export function hasRejections(r: ObjectRejections): boolean {
  return r.listeners.size + r.routes.size + r.objects.size > 0;
}

/** The longest condition message the overlay writes (the API allows 32768 bytes). */
const MESSAGE_LIMIT = 4096;

function clip(message: string): string {
  return message.length > MESSAGE_LIMIT ? message.slice(0, MESSAGE_LIMIT - 1) + '…' : message;
}

function rejectedBy(n: RejectionNote): string {
  return `rejected by ${n.rejectedBy} of ${n.envoys} Envoys of the fleet: ${n.message}`;
}

/** `Listener https-8443 rejected by 1 of 2 Envoys of the fleet: …`, joined by `; `. */
export function describeNotes(notes: readonly RejectionNote[]): string {
  return notes.map((n) => `${n.resource} ${rejectedBy(n)}`).join('; ');
}

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `statuses` with the rejections laid over them:
 *  - a listener entry with notes whose Programmed is True gets `Programmed=False/Invalid`
 *    ("rejected by N of M Envoys of the fleet: …") and `convoy.dev/EnvoyRejected=True`;
 *  - its Gateway or ListenerSet gets `convoy.dev/EnvoyRejected=True` naming those listeners, and
 *    `Programmed=False/Invalid` when every listener the build programmed is rejected (a partial
 *    rejection leaves the object Programmed, as a partly invalid one is, §3 and §5 of
 *    docs/gateway-api.md);
 *  - a route gets `convoy.dev/EnvoyRejected=True` on each parent entry naming the fleet's Gateway
 *    or one of its ListenerSets;
 *  - a Gateway gets `convoy.dev/EnvoyRejected=True` for rejected resources of its fleet that no
 *    listener or route could be found for.
 */
export function applyRejections(
  statuses: readonly ObjectStatus[],
  rejections: ObjectRejections,
  now: string,
): ObjectStatus[] {
  if (!hasRejections(rejections)) return statuses as ObjectStatus[];
  return statuses.map((s) => {
    const key = objectKey(s.kind, s.metadata.namespace ?? '', s.metadata.name);
    const listenerNotes = rejections.listeners.get(key);
    const objectNotes = rejections.objects.get(key);
    const routeNotes = rejections.routes.get(key);
    if (!listenerNotes && !objectNotes && !routeNotes) return s;
    const gen = s.metadata.generation;
    const cond = (type: string, status: Condition['status'], reason: string, message: string) =>
      makeCondition(type, status, reason, clip(message), gen, now);
    let status = s.status;
    if (listenerNotes || objectNotes) status = overlayOwner(status, listenerNotes, objectNotes ?? [], cond);
    if (routeNotes) status = overlayRoute(status, s.metadata.namespace ?? '', routeNotes, cond);
    return status === s.status ? s : { ...s, status };
  });
}

type MakeCondition = (
  type: string,
  status: Condition['status'],
  reason: string,
  message: string,
) => Condition;

/** A Gateway's or ListenerSet's status with its listeners' and its own notes. */
function overlayOwner(
  status: Json,
  listenerNotes: ReadonlyMap<string, RejectionNote[]> | undefined,
  objectNotes: readonly RejectionNote[],
  cond: MakeCondition,
): Json {
  const entries = Array.isArray(status.listeners) ? status.listeners : [];
  let programmedListeners = 0;
  const rejected: string[] = [];
  const summary: string[] = [];
  const listeners = entries.map((entry: unknown) => {
    if (!isRecord(entry) || !Array.isArray(entry.conditions)) return entry;
    const conditions = entry.conditions as Condition[];
    if (findCondition(conditions, ConditionType.Programmed)?.status !== 'True') return entry;
    programmedListeners++;
    const notes = listenerNotes?.get(String(entry.name));
    if (!notes?.length) return entry;
    rejected.push(String(entry.name));
    summary.push(`listener ${String(entry.name)}: ${describeNotes(notes)}`);
    const programmed = cond(
      ConditionType.Programmed,
      'False',
      Reason.Invalid,
      notes.map((n) => (notes.length === 1 ? rejectedBy(n) : `${n.resource} ${rejectedBy(n)}`)).join('; '),
    );
    const envoyRejected = cond(ConditionType.EnvoyRejected, 'True', Reason.Rejected, describeNotes(notes));
    return {
      ...entry,
      conditions: sortConditions([
        ...conditions.filter(
          (c) => c.type !== ConditionType.Programmed && c.type !== ConditionType.EnvoyRejected,
        ),
        programmed,
        envoyRejected,
      ]),
    };
  });
  if (objectNotes.length > 0) summary.push(describeNotes(objectNotes));
  if (summary.length === 0) return status;
  const own = Array.isArray(status.conditions) ? (status.conditions as Condition[]) : [];
  let conditions = own.filter((c) => c.type !== ConditionType.EnvoyRejected);
  conditions.push(cond(ConditionType.EnvoyRejected, 'True', Reason.Rejected, summary.join('; ')));
  if (
    programmedListeners > 0 &&
    rejected.length === programmedListeners &&
    findCondition(own, ConditionType.Programmed)?.status === 'True'
  ) {
    conditions = conditions.filter((c) => c.type !== ConditionType.Programmed);
    conditions.push(
      cond(
        ConditionType.Programmed,
        'False',
        Reason.Invalid,
        `every programmed listener is rejected by Envoys of the fleet: ${rejected.join(', ')}`,
      ),
    );
  }
  return {
    ...status,
    conditions: sortConditions(conditions),
    ...(Array.isArray(status.listeners) ? { listeners } : {}),
  };
}

/** A route's status with EnvoyRejected on the parent entries of the fleets that rejected. */
function overlayRoute(
  status: Json,
  routeNamespace: string,
  groups: readonly RouteRejections[],
  cond: MakeCondition,
): Json {
  if (!Array.isArray(status.parents)) return status;
  let changed = false;
  const parents = status.parents.map((entry: unknown) => {
    if (!isRecord(entry) || !Array.isArray(entry.conditions) || !isRecord(entry.parentRef)) return entry;
    const ref = entry.parentRef;
    const parentKey = objectKey(
      typeof ref.kind === 'string' && ref.kind ? ref.kind : 'Gateway',
      typeof ref.namespace === 'string' && ref.namespace ? ref.namespace : routeNamespace,
      String(ref.name),
    );
    const notes = groups.filter((g) => g.parents.has(parentKey)).flatMap((g) => g.notes);
    if (notes.length === 0) return entry;
    changed = true;
    const conditions = (entry.conditions as Condition[]).filter(
      (c) => c.type !== ConditionType.EnvoyRejected,
    );
    conditions.push(cond(ConditionType.EnvoyRejected, 'True', Reason.Rejected, describeNotes(notes)));
    return { ...entry, conditions: sortConditions(conditions) };
  });
  return changed ? { ...status, parents } : status;
}
