/**
 * Attaches routes to listeners (docs/gateway-api.md §10): which listeners each parentRef of a route
 * reaches, the per-parentRef Accepted/ResolvedRefs conditions, and attachedRoutes counts.
 *
 * - A Gateway parentRef reaches only the Gateway's own listeners; a ListenerSet parentRef only that
 *   set's listeners ("direct parent" rule).
 * - sectionName and port (GEP-957) narrow the listeners; both must match when both are set.
 * - allowedRoutes (kinds and namespaces) and hostname intersection decide attachment.
 * - Each parentRef is evaluated independently; status entries echo the parentRef as written.
 */
import type {
  ListenerOwner,
  ListenerOwnerKind,
  ResolvedGateway,
  ResolvedListener,
  StoreView,
  BuildOptions,
} from '../resolved';
import type { Condition, ObjectStatus } from '../../status/types';
import { objectNamespace } from '../../store/objects';
import type { ParentReference, RouteParentStatus } from '../api';
import { GATEWAY_API_GROUP, GATEWAY_API_VERSION } from '../api';
import { ConditionType, Reason, makeCondition } from '../../status/conditions';
import { intersectHostnames } from '../hostnames';
import { labelsMatch, namespaceLabels } from '../selectors';
import type { AttachedRoute, CompiledRoute } from './types';
import { XLISTENERSET_GROUP, XLISTENERSET_KIND, objectKey } from '../../store/objects';

/** A Gateway, ListenerSet or XListenerSet Convoy owns, as a route parent. */
export interface ParentTarget {
  kind: ListenerOwnerKind;
  namespace: string;
  name: string;
  /** The fleet (`namespace/name` of the Gateway) the parent's listeners belong to. */
  fleet: string;
  /** The parent's own listeners, in precedence order. */
  listeners: ResolvedListener[];
  /** A ListenerSet not accepted by its Gateway serves nothing. Always true for Gateways. */
  accepted: boolean;
}

/** Returns whether listener `l` belongs to `owner` (the same Gateway or ListenerSet). */
function ownedBy(l: ResolvedListener, owner: ListenerOwner): boolean {
  return l.owner.kind === owner.kind && l.owner.namespace === owner.namespace && l.owner.name === owner.name;
}

/** Indexes every Gateway and ListenerSet of the resolved Gateways as a route parent, by objectKey. */
export function indexParents(gateways: ResolvedGateway[]): Map<string, ParentTarget> {
  const out = new Map<string, ParentTarget>();
  for (const gw of gateways) {
    const namespace = objectNamespace(gw.object);
    const name = gw.object.metadata.name;
    const owner: ListenerOwner = { kind: 'Gateway', namespace, name };
    out.set(objectKey('Gateway', namespace, name), {
      kind: 'Gateway',
      namespace,
      name,
      fleet: gw.fleet,
      listeners: gw.listeners.filter((l) => ownedBy(l, owner)),
      accepted: true,
    });
    for (const set of gw.listenerSets) {
      const sns = objectNamespace(set.object);
      const sname = set.object.metadata.name;
      const kind = set.object.kind === XLISTENERSET_KIND ? 'XListenerSet' : 'ListenerSet';
      const key = objectKey(kind, sns, sname);
      if (out.has(key)) continue;
      out.set(key, {
        kind,
        namespace: sns,
        name: sname,
        fleet: gw.fleet,
        listeners: set.listeners,
        accepted: set.accepted,
      });
    }
  }
  return out;
}

export interface AttachmentResult {
  /** Routes attached to each ready or unready listener (by qualifiedName), sorted by route. */
  attached: Map<string, AttachedRoute[]>;
  /** attachedRoutes per listener qualifiedName. */
  counts: Map<string, number>;
  /** Route statuses (only routes with at least one parentRef to a parent Convoy owns). */
  statuses: ObjectStatus[];
}

interface ParentOutcome {
  accepted: boolean;
  reason: string;
  message: string;
  listeners: { listener: ResolvedListener; hostnames: string[] }[];
}

/** Returns whether a listener's supportedKinds include Gateway API route kind `kind`. */
function kindAllowed(l: ResolvedListener, kind: string): boolean {
  return l.supportedKinds.some(
    (k) => (k.group || GATEWAY_API_GROUP) === GATEWAY_API_GROUP && k.kind === kind,
  );
}

/** Returns whether a listener's allowedRoutes.namespaces admits routes from `routeNamespace`. */
function namespaceAllowed(view: StoreView, l: ResolvedListener, routeNamespace: string): boolean {
  switch (l.allowedNamespaces.from) {
    case 'All':
      return true;
    case 'Same':
      return routeNamespace === l.owner.namespace;
    case 'Selector':
      return (
        !!l.allowedNamespaces.selector &&
        labelsMatch(l.allowedNamespaces.selector, namespaceLabels(view, routeNamespace))
      );
    default:
      return false;
  }
}

/** Returns a parent as `Kind namespace/name` for condition messages. */
function describeParent(t: ParentTarget): string {
  return `${t.kind} ${t.namespace}/${t.name}`;
}

/** Evaluates one parentRef against its (owned) parent; independent of other parentRefs. */
export function evaluateParentRef(
  view: StoreView,
  route: CompiledRoute,
  ref: ParentReference,
  target: ParentTarget,
): ParentOutcome {
  const none = (reason: string, message: string): ParentOutcome => ({
    accepted: false,
    reason,
    message,
    listeners: [],
  });
  if (!target.accepted) {
    return none(Reason.NoMatchingParent, `${describeParent(target)} is not accepted by its parent Gateway`);
  }
  let candidates = target.listeners;
  if (ref.sectionName !== undefined) candidates = candidates.filter((l) => l.name === ref.sectionName);
  if (ref.port !== undefined) candidates = candidates.filter((l) => l.port === ref.port);
  if (candidates.length === 0) {
    const what = [
      ref.sectionName !== undefined ? `named ${ref.sectionName}` : '',
      ref.port !== undefined ? `on port ${ref.port}` : '',
    ]
      .filter(Boolean)
      .join(' and ');
    return none(
      Reason.NoMatchingParent,
      `${describeParent(target)} has no listener${what ? ` ${what}` : ''}`,
    );
  }
  const kind = route.id.kind;
  const byKind = candidates.filter((l) => kindAllowed(l, kind));
  if (byKind.length === 0) {
    return none(Reason.NotAllowedByListeners, `no listener of ${describeParent(target)} allows kind ${kind}`);
  }
  const allowed = byKind.filter((l) => namespaceAllowed(view, l, route.id.namespace));
  if (allowed.length === 0) {
    return none(
      Reason.NotAllowedByListeners,
      `no listener of ${describeParent(target)} allows ${kind} from namespace ${route.id.namespace}`,
    );
  }
  const matched: ParentOutcome['listeners'] = [];
  for (const listener of allowed) {
    const hostnames = intersectHostnames(listener.hostname, route.hostnames);
    if (hostnames.length > 0) matched.push({ listener, hostnames });
  }
  if (matched.length === 0) {
    return none(
      Reason.NoMatchingListenerHostname,
      `no hostname of the route matches a listener hostname of ${describeParent(target)}`,
    );
  }
  return { accepted: true, reason: Reason.Accepted, message: 'Route is accepted', listeners: matched };
}

/** Returns a parentRef's group and kind with the defaults (Gateway API group, Gateway) applied. */
function normalizedParentKind(ref: ParentReference): { group: string; kind: string } {
  return { group: ref.group === undefined ? GATEWAY_API_GROUP : ref.group, kind: ref.kind ?? 'Gateway' };
}

/** Returns the parent a parentRef names if Convoy owns it; undefined means no status entry for it. */
export function targetOf(
  parents: ReadonlyMap<string, ParentTarget>,
  ref: ParentReference,
  routeNamespace: string,
): ParentTarget | undefined {
  if (!ref || typeof ref !== 'object' || typeof ref.name !== 'string') return undefined;
  const { group, kind } = normalizedParentKind(ref);
  // The legacy XListenerSet is named with its own group (docs/gateway-api.md §29).
  const known =
    group === GATEWAY_API_GROUP
      ? kind === 'Gateway' || kind === 'ListenerSet'
      : group === XLISTENERSET_GROUP && kind === XLISTENERSET_KIND;
  if (!known) return undefined;
  return parents.get(objectKey(kind, ref.namespace || routeNamespace, ref.name));
}

/**
 * Attaches every route to the listeners its parentRefs reach and computes route statuses.
 *
 * `routes` must be sorted (compareRouteIds) so attachment lists come out in a stable order.
 */
export function attachRoutes(
  view: StoreView,
  opts: BuildOptions,
  gateways: ResolvedGateway[],
  routes: CompiledRoute[],
): AttachmentResult {
  const parents = indexParents(gateways);
  const attachedByListener = new Map<string, Map<string, AttachedRoute>>();
  const statuses: ObjectStatus[] = [];
  for (const route of routes) {
    const one = attachRoute(view, opts, parents, route);
    for (const [qn, hostnames] of one.listeners) {
      let m = attachedByListener.get(qn);
      if (!m) attachedByListener.set(qn, (m = new Map()));
      m.set(route.id.key, { route, hostnames });
    }
    if (one.status) statuses.push(one.status);
  }
  const attached = new Map<string, AttachedRoute[]>();
  const counts = new Map<string, number>();
  for (const [qn, m] of attachedByListener) {
    attached.set(qn, [...m.values()]);
    counts.set(qn, m.size);
  }
  return { attached, counts, statuses };
}

/** Holds where one route attaches and its status: what attachRoutes computes for each route. */
export interface RouteAttachment {
  /** Listener qualifiedName → the route's hostnames on it (merged over its parentRefs). */
  listeners: Map<string, string[]>;
  /** Undefined when no parentRef names a parent Convoy owns. */
  status: ObjectStatus | undefined;
}

/** Returns whether the route has a valid rule (or no rules); a route without one attaches nowhere. */
export function hasValidRules(route: CompiledRoute): boolean {
  return route.ruleCount === 0 || route.ruleProblems.length < route.ruleCount;
}

/** Attaches one route and returns its listeners and status; the result depends on no other route. */
export function attachRoute(
  view: StoreView,
  opts: BuildOptions,
  parents: ReadonlyMap<string, ParentTarget>,
  route: CompiledRoute,
): RouteAttachment {
  const refs = (route.object.spec as { parentRefs?: ParentReference[] } | undefined)?.parentRefs;
  const entries: RouteParentStatus[] = [];
  const listeners = new Map<string, string[]>();
  const validRules = hasValidRules(route);
  for (const ref of Array.isArray(refs) ? refs : []) {
    const target = targetOf(parents, ref, route.id.namespace);
    if (!target) continue;
    let outcome = evaluateParentRef(view, route, ref, target);
    if (outcome.accepted && !validRules) {
      const first = route.ruleProblems[0];
      outcome = { accepted: false, reason: first.reason, message: allRulesMessage(route), listeners: [] };
    }
    for (const { listener, hostnames } of outcome.listeners) {
      const prev = listeners.get(listener.qualifiedName);
      listeners.set(listener.qualifiedName, prev ? [...new Set([...prev, ...hostnames])].sort() : hostnames);
    }
    entries.push({
      parentRef: { ...ref },
      controllerName: opts.controllerName,
      conditions: routeConditions(route, outcome, opts),
    });
  }
  if (entries.length === 0) return { listeners, status: undefined };
  return {
    listeners,
    status: {
      apiVersion: GATEWAY_API_VERSION,
      kind: route.id.kind,
      metadata: {
        namespace: route.id.namespace,
        name: route.id.name,
        generation: route.object.metadata.generation,
      },
      status: { parents: entries },
    },
  };
}

/** Returns the condition message of a route whose every rule was dropped. */
function allRulesMessage(route: CompiledRoute): string {
  return `no valid rule: ${route.ruleProblems.map((p) => p.message).join('; ')}`;
}

/**
 * Returns the conditions of one route parent status: Accepted, ResolvedRefs, and PartiallyInvalid
 * when an accepted route dropped rules.
 */
function routeConditions(route: CompiledRoute, outcome: ParentOutcome, opts: BuildOptions): Condition[] {
  const gen = route.object.metadata.generation;
  const conditions: Condition[] = [
    makeCondition(
      ConditionType.Accepted,
      outcome.accepted ? 'True' : 'False',
      outcome.reason,
      outcome.message,
      gen,
      opts.now,
    ),
    route.refProblem
      ? makeCondition(
          ConditionType.ResolvedRefs,
          'False',
          route.refProblem.reason,
          route.refProblem.message,
          gen,
          opts.now,
        )
      : makeCondition(
          ConditionType.ResolvedRefs,
          'True',
          Reason.ResolvedRefs,
          'All references are resolved',
          gen,
          opts.now,
        ),
  ];
  if (outcome.accepted && route.ruleProblems.length > 0) {
    conditions.push(
      makeCondition(
        ConditionType.PartiallyInvalid,
        'True',
        route.ruleProblems[0].reason,
        `Dropped Rule(s): ${route.ruleProblems.map((p) => p.message).join('; ')}`,
        gen,
        opts.now,
      ),
    );
  }
  return conditions;
}
