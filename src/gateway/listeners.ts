/**
 * Gateways and their listeners: merge a Gateway's own listeners with those of the ListenerSets it
 * admits, detect conflicts over the merged list, validate each listener (protocol, route kinds,
 * TLS), and produce Gateway and ListenerSet status.
 *
 * Conflict rules (docs/gateway-api.md §5, §6; conformance wins over prose):
 *  - Conflicts are evaluated before protocol support, so an unsupported TCP listener sharing
 *    port 80 with HTTP reports ProtocolConflict, not UnsupportedProtocol.
 *  - Among a Gateway's own listeners no winner is picked: every indistinct listener is Conflicted.
 *  - A ListenerSet listener loses to any Gateway listener it conflicts with, and to any earlier
 *    (higher-precedence) ListenerSet listener that is not itself conflicted.
 *  - A conflicted listener has Accepted=False, Programmed=False and Conflicted=True, all three with
 *    reason HostnameConflict or ProtocolConflict.
 */
import type { KubeObject } from '../store/objects';
import { namespacedName, objectNamespace } from '../store/objects';
import type { Condition, ObjectStatus } from '../status/types';
import { statusKey } from '../status/types';
import type {
  BuildOptions,
  ListenerOwner,
  ResolvedGateway,
  ResolvedListener,
  ResolvedListenerSet,
  RouteGroupKind,
  StoreView,
} from './resolved';
import type { AllowedRouteKind, GatewayStatus, GatewayStatusAddress, Listener } from './api';
import { GATEWAY_API_GROUP, GATEWAY_API_VERSION, gatewaySpec, listenerSetSpec } from './api';
import { ConditionType, Reason, makeCondition, sortConditions } from '../status/conditions';
import { acceptedGatewayClasses, ownedGatewayClasses } from './gatewayclass';
import { SUPPORTS_TLS_MODE_MIXED } from './features';
import {
  listenerSetAllowed,
  listenerSetsByParent,
  listenerSetStatus,
  listenerSetVerdict,
  listenerStatus,
} from './listenersets';
import { resolveListenerCertificates } from './certificates';
import { compareStrings } from '../util/compare';
import { fleetName, listenerQualifiedName } from '../model/names';

// ---------------------------------------------------------------------------------------------
// Protocols and route kinds

/** Protocols Convoy serves. */
export const SUPPORTED_PROTOCOLS: ReadonlySet<string> = new Set(['HTTP', 'HTTPS', 'TLS']);

/** Route kinds each supported protocol accepts (also the default supportedKinds). */
export const ROUTE_KINDS_BY_PROTOCOL: Readonly<Record<string, readonly string[]>> = {
  HTTP: ['HTTPRoute', 'GRPCRoute'],
  HTTPS: ['HTTPRoute', 'GRPCRoute'],
  TLS: ['TLSRoute'],
};

export interface KindResolution {
  supportedKinds: RouteGroupKind[];
  /** Requested kinds that are not supported on this protocol, as "group/kind". */
  invalid: string[];
}

/** allowedRoutes.kinds filtered to what the protocol supports; defaults per protocol when unset. */
export function resolveRouteKinds(protocol: string, kinds: AllowedRouteKind[] | undefined): KindResolution {
  const allowed = ROUTE_KINDS_BY_PROTOCOL[protocol] ?? [];
  if (!kinds || kinds.length === 0) {
    return { supportedKinds: allowed.map((kind) => ({ group: GATEWAY_API_GROUP, kind })), invalid: [] };
  }
  const supportedKinds: RouteGroupKind[] = [];
  const invalid: string[] = [];
  const seen = new Set<string>();
  for (const k of kinds) {
    const group = k.group ?? GATEWAY_API_GROUP;
    if (group === GATEWAY_API_GROUP && allowed.includes(k.kind)) {
      if (!seen.has(k.kind)) {
        seen.add(k.kind);
        supportedKinds.push({ group, kind: k.kind });
      }
    } else {
      invalid.push(`${group || 'core'}/${k.kind}`);
    }
  }
  return { supportedKinds, invalid };
}

// ---------------------------------------------------------------------------------------------
// Conflicts

export type ConflictReason = typeof Reason.HostnameConflict | typeof Reason.ProtocolConflict;

interface ConflictInput {
  port: number;
  protocol: string;
  hostname?: string;
  tlsMode?: 'Terminate' | 'Passthrough';
}

/** Port-sharing family: HTTPS and TLS both select by SNI; unknown protocols do not bind ports. */
function family(protocol: string): 'http' | 'tls' | 'tcp' | 'udp' | undefined {
  switch (protocol) {
    case 'HTTP':
      return 'http';
    case 'HTTPS':
    case 'TLS':
      return 'tls';
    case 'TCP':
      return 'tcp';
    case 'UDP':
      return 'udp';
    default:
      return undefined;
  }
}

function normHost(h: string | undefined): string {
  return (h ?? '').toLowerCase();
}

/** Why two listeners cannot coexist, or undefined when they are distinct. */
export function listenerConflict(a: ConflictInput, b: ConflictInput): ConflictReason | undefined {
  if (a.port !== b.port) return undefined;
  const fa = family(a.protocol);
  const fb = family(b.protocol);
  if (!fa || !fb) return undefined;
  // UDP and the TCP-based protocols use different transports and may share a port number.
  if ((fa === 'udp') !== (fb === 'udp')) return undefined;
  if (fa !== fb) return Reason.ProtocolConflict;
  if (fa === 'tcp' || fa === 'udp') return Reason.HostnameConflict;
  const sameHost = normHost(a.hostname) === normHost(b.hostname);
  if (fa === 'http') return sameHost ? Reason.HostnameConflict : undefined;
  // tls family
  if (a.protocol !== b.protocol) return sameHost ? Reason.ProtocolConflict : undefined;
  if (a.protocol === 'TLS' && a.tlsMode !== b.tlsMode && !SUPPORTS_TLS_MODE_MIXED)
    return Reason.ProtocolConflict;
  return sameHost ? Reason.HostnameConflict : undefined;
}

/**
 * The listeners that hold one port, indexed so that `conflict(c)` gives the same answer as
 * checking `listenerConflict(c, claim)` against every claim (ProtocolConflict outranking
 * HostnameConflict) without scanning them all.
 */
class PortClaims {
  private readonly families = new Map<string, number>();
  /** "family|hostname" → protocols claimed there. */
  private readonly hosts = new Map<string, Set<string>>();
  /** tls.mode of claims with protocol TLS. */
  private readonly tlsModes = new Set<string | undefined>();

  add(c: ConflictInput): void {
    const f = family(c.protocol);
    if (!f) return;
    this.families.set(f, (this.families.get(f) ?? 0) + 1);
    const key = `${f}|${normHost(c.hostname)}`;
    let protocols = this.hosts.get(key);
    if (!protocols) {
      protocols = new Set();
      this.hosts.set(key, protocols);
    }
    protocols.add(c.protocol);
    if (c.protocol === 'TLS') this.tlsModes.add(c.tlsMode);
  }

  conflict(c: ConflictInput): ConflictReason | undefined {
    const f = family(c.protocol);
    if (!f) return undefined;
    if (f !== 'udp') {
      for (const [g, n] of this.families) {
        if (n > 0 && g !== f && g !== 'udp') return Reason.ProtocolConflict;
      }
    }
    if (!this.families.get(f)) return undefined;
    if (f === 'tcp' || f === 'udp') return Reason.HostnameConflict;
    const sameHost = this.hosts.get(`${f}|${normHost(c.hostname)}`);
    if (f === 'tls') {
      if (sameHost && [...sameHost].some((p) => p !== c.protocol)) return Reason.ProtocolConflict;
      if (
        c.protocol === 'TLS' &&
        !SUPPORTS_TLS_MODE_MIXED &&
        [...this.tlsModes].some((m) => m !== c.tlsMode)
      ) {
        return Reason.ProtocolConflict;
      }
    }
    return sameHost?.has(c.protocol) ? Reason.HostnameConflict : undefined;
  }
}

export interface MergedCandidate extends ConflictInput {
  /** Gateway listeners precede all ListenerSet listeners. */
  fromGateway: boolean;
}

/**
 * Conflicts over a merged, precedence-ordered listener list. Returns, per index, the reason the
 * listener is conflicted (undefined = not conflicted). See the file comment for the rules.
 */
export function detectConflicts(candidates: MergedCandidate[]): (ConflictReason | undefined)[] {
  const result: (ConflictReason | undefined)[] = candidates.map(() => undefined);
  // 1. Gateway listeners among themselves: every indistinct one is conflicted.
  for (let i = 0; i < candidates.length; i++) {
    if (!candidates[i].fromGateway) continue;
    for (let j = 0; j < candidates.length; j++) {
      if (i === j || !candidates[j].fromGateway) continue;
      const reason = listenerConflict(candidates[i], candidates[j]);
      if (reason && (!result[i] || reason === Reason.ProtocolConflict)) result[i] = reason;
    }
  }
  // 2. ListenerSet listeners, in precedence order, against Gateway listeners and earlier winners.
  //    Indexed per port, so thousands of ListenerSet listeners on one port stay linear.
  const claims = new Map<number, PortClaims>();
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i];
    if (!c.fromGateway) {
      result[i] = claims.get(c.port)?.conflict(c);
      if (result[i]) continue;
    }
    let pc = claims.get(c.port);
    if (!pc) {
      pc = new PortClaims();
      claims.set(c.port, pc);
    }
    pc.add(c);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Listener validation

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Problem with a listener hostname, or undefined when valid: RFC 1123 DNS name, lower case,
 * at most 253 characters, not an IP address, `*.` only as the whole first label. The CRD
 * enforces this in Kubernetes; file mode has no CRD, so it is checked here.
 */
export function listenerHostnameProblem(hostname: string | undefined): string | undefined {
  if (hostname === undefined || hostname === '') return undefined;
  if (hostname.length > 253) return 'hostname is longer than 253 characters';
  if (/^[0-9.]+$/.test(hostname) || hostname.includes(':')) return 'hostname must not be an IP address';
  const labels = hostname.startsWith('*.') ? hostname.slice(2).split('.') : hostname.split('.');
  if (labels.some((l) => !DNS_LABEL.test(l))) {
    return 'hostname must be a lower-case RFC 1123 DNS name, optionally prefixed by "*."';
  }
  return undefined;
}

/** Normalised tls.mode for TLS-carrying protocols. */
function tlsModeOf(spec: Listener): 'Terminate' | 'Passthrough' | undefined {
  if (spec.protocol !== 'HTTPS' && spec.protocol !== 'TLS') return undefined;
  return spec.tls?.mode === 'Passthrough' ? 'Passthrough' : 'Terminate';
}

function allowedNamespacesOf(spec: Listener): ResolvedListener['allowedNamespaces'] {
  const ns = spec.allowedRoutes?.namespaces;
  const from = ns?.from ?? 'Same';
  if (from === 'All') return { from: 'All' };
  if (from === 'Selector') return { from: 'Selector', selector: ns?.selector };
  return { from: 'Same' };
}

interface ValidateInput {
  owner: ListenerOwner;
  spec: Listener;
  generation: number | undefined;
  conflict?: ConflictReason;
}

/** Validates one listener of an admitted owner and builds its ResolvedListener. */
export function validateListener(
  view: StoreView,
  opts: BuildOptions,
  input: ValidateInput,
): ResolvedListener {
  const { owner, spec, conflict } = input;
  const cond = (type: string, status: Condition['status'], reason: string, message: string) =>
    makeCondition(type, status, reason, message, input.generation, opts.now);
  const protocol = spec.protocol;
  const tlsMode = tlsModeOf(spec);
  const kinds = resolveRouteKinds(protocol, spec.allowedRoutes?.kinds);
  const hostnameProblem = listenerHostnameProblem(spec.hostname);

  // Accepted
  let accepted: Condition;
  if (conflict) {
    accepted = cond(ConditionType.Accepted, 'False', conflict, conflictMessage(conflict));
  } else if (!SUPPORTED_PROTOCOLS.has(protocol)) {
    accepted = cond(
      ConditionType.Accepted,
      'False',
      Reason.UnsupportedProtocol,
      `protocol ${JSON.stringify(protocol)} is not supported; supported protocols are HTTP, HTTPS and TLS`,
    );
  } else if (protocol === 'HTTPS' && tlsMode === 'Passthrough') {
    accepted = cond(
      ConditionType.Accepted,
      'False',
      Reason.UnsupportedValue,
      'HTTPS listeners terminate TLS; use protocol TLS for Passthrough',
    );
  } else if (!Number.isInteger(spec.port) || spec.port < 1 || spec.port > 65535) {
    accepted = cond(
      ConditionType.Accepted,
      'False',
      Reason.PortUnavailable,
      `port ${spec.port} is out of range`,
    );
  } else if (hostnameProblem) {
    accepted = cond(ConditionType.Accepted, 'False', Reason.UnsupportedValue, hostnameProblem);
  } else {
    accepted = cond(ConditionType.Accepted, 'True', Reason.Accepted, 'listener is accepted');
  }
  const isAccepted = accepted.status === 'True';

  // Certificates (only for supported TLS-terminating listeners).
  const terminates = SUPPORTED_PROTOCOLS.has(protocol) && tlsMode === 'Terminate';
  let certificates: ResolvedListener['certificates'] = [];
  let certProblem: { reason: string; message: string } | undefined;
  if (terminates) {
    const refs = spec.tls?.certificateRefs ?? [];
    if (refs.length === 0) {
      certProblem = {
        reason: Reason.InvalidCertificateRef,
        message: `${protocol} listener in Terminate mode needs at least one certificateRef`,
      };
    } else {
      const res = resolveListenerCertificates(view, owner, refs);
      certificates = res.certificates;
      certProblem = res.problem;
    }
  }

  // ResolvedRefs
  let resolvedRefs: Condition;
  if (certProblem) {
    resolvedRefs = cond(ConditionType.ResolvedRefs, 'False', certProblem.reason, certProblem.message);
  } else if (kinds.invalid.length > 0) {
    resolvedRefs = cond(
      ConditionType.ResolvedRefs,
      'False',
      Reason.InvalidRouteKinds,
      `route kinds not supported on ${protocol} listeners: ${kinds.invalid.join(', ')}`,
    );
  } else {
    resolvedRefs = cond(
      ConditionType.ResolvedRefs,
      'True',
      Reason.ResolvedRefs,
      'all references are resolved',
    );
  }
  if (certProblem && kinds.invalid.length > 0) {
    resolvedRefs.message += `; route kinds not supported on ${protocol} listeners: ${kinds.invalid.join(', ')}`;
  }

  // Programmed / ready
  let programmed: Condition;
  let ready = false;
  if (conflict) {
    programmed = cond(ConditionType.Programmed, 'False', conflict, conflictMessage(conflict));
  } else if (!isAccepted) {
    programmed = cond(ConditionType.Programmed, 'False', Reason.Invalid, 'listener is not accepted');
  } else if (terminates && certificates.length === 0) {
    programmed = cond(ConditionType.Programmed, 'False', Reason.Invalid, 'listener has no valid certificate');
  } else if (kinds.supportedKinds.length === 0) {
    programmed = cond(ConditionType.Programmed, 'False', Reason.Invalid, 'listener supports no route kind');
  } else {
    programmed = cond(ConditionType.Programmed, 'True', Reason.Programmed, 'listener is programmed');
    ready = true;
  }

  const conflicted = conflict
    ? cond(ConditionType.Conflicted, 'True', conflict, conflictMessage(conflict))
    : cond(ConditionType.Conflicted, 'False', Reason.NoConflicts, 'listener does not conflict');

  return {
    owner,
    name: spec.name,
    qualifiedName: listenerQualifiedName(owner, spec.name),
    port: spec.port,
    protocol,
    ...(spec.hostname ? { hostname: spec.hostname } : {}),
    ...(tlsMode ? { tlsMode } : {}),
    certificates: ready ? certificates : [],
    allowedNamespaces: allowedNamespacesOf(spec),
    // A listener that is not accepted (conflicted, unsupported protocol, ...) supports no kind:
    // nothing can attach to it (conformance expects an empty list, e.g. for ProtocolConflict).
    supportedKinds: isAccepted ? kinds.supportedKinds : [],
    ready,
    conditions: sortConditions([accepted, programmed, resolvedRefs, conflicted]),
    attachedRoutes: 0,
  };
}

function conflictMessage(reason: ConflictReason): string {
  return reason === Reason.HostnameConflict
    ? 'another listener with higher precedence uses the same port and hostname'
    : 'another listener with higher precedence uses the same port with an incompatible protocol';
}

/** A listener of a ListenerSet the Gateway does not admit: never programmed, refs not resolved. */
function notAllowedListener(
  opts: BuildOptions,
  owner: ListenerOwner,
  spec: Listener,
  gen?: number,
): ResolvedListener {
  const msg = "the parent Gateway's allowedListeners does not admit this ListenerSet";
  const tlsMode = tlsModeOf(spec);
  return {
    owner,
    name: spec.name,
    qualifiedName: listenerQualifiedName(owner, spec.name),
    port: spec.port,
    protocol: spec.protocol,
    ...(spec.hostname ? { hostname: spec.hostname } : {}),
    ...(tlsMode ? { tlsMode } : {}),
    certificates: [],
    allowedNamespaces: allowedNamespacesOf(spec),
    supportedKinds: [],
    ready: false,
    conditions: [
      makeCondition(ConditionType.Accepted, 'False', Reason.NotAllowed, msg, gen, opts.now),
      makeCondition(ConditionType.Programmed, 'False', Reason.NotAllowed, msg, gen, opts.now),
    ],
    attachedRoutes: 0,
  };
}

/** Marks a listener unusable because its Gateway (or its ListenerSet's parent) is not accepted. */
function gatewayNotAccepted(l: ResolvedListener, opts: BuildOptions, gen?: number): ResolvedListener {
  if (!l.ready) return l;
  const message =
    l.owner.kind === 'Gateway' ? 'the Gateway is not accepted' : 'the parent Gateway is not accepted';
  const programmed = makeCondition(ConditionType.Programmed, 'False', Reason.Invalid, message, gen, opts.now);
  return {
    ...l,
    ready: false,
    certificates: [],
    conditions: sortConditions([
      ...l.conditions.filter((c) => c.type !== ConditionType.Programmed),
      programmed,
    ]),
  };
}

/**
 * OverlappingTLSConfig=True/OverlappingHostnames on accepted HTTPS listeners that share a port
 * and whose hostnames overlap without being equal (e.g. `*.example.com` and `foo.example.com`,
 * or a listener without hostname and any other). The condition is only ever written when True.
 * It is informational: both listeners stay programmed. Messages name no other listener, so a
 * ListenerSet learns nothing about its siblings.
 */
export function markOverlappingTLS(listeners: ResolvedListener[], opts: BuildOptions): void {
  const byPort = new Map<number, ResolvedListener[]>();
  for (const l of listeners) {
    if (l.protocol !== 'HTTPS') continue;
    if (!l.conditions.some((c) => c.type === ConditionType.Accepted && c.status === 'True')) continue;
    const list = byPort.get(l.port);
    if (list) list.push(l);
    else byPort.set(l.port, [l]);
  }
  const overlapping = new Set<ResolvedListener>();
  for (const group of byPort.values()) {
    if (group.length < 2) continue;
    // A listener without hostname overlaps every listener with a hostname on its port.
    const bare = group.filter((l) => !l.hostname).length;
    if (bare > 0) {
      if (bare < group.length) for (const l of group) overlapping.add(l);
      continue;
    }
    const wildcards = new Map<string, ResolvedListener[]>();
    for (const l of group) {
      const h = (l.hostname as string).toLowerCase();
      if (!h.startsWith('*.')) continue;
      const list = wildcards.get(h);
      if (list) list.push(l);
      else wildcards.set(h, [l]);
    }
    if (wildcards.size === 0) continue;
    for (const l of group) {
      // Every wildcard strictly covering this hostname: *.b.c and *.c for a.b.c or *.b.c.
      const h = (l.hostname as string).toLowerCase();
      const labels = (h.startsWith('*.') ? h.slice(2) : h).split('.');
      for (let i = 1; i < labels.length; i++) {
        const covering = wildcards.get(`*.${labels.slice(i).join('.')}`);
        if (!covering) continue;
        overlapping.add(l);
        for (const w of covering) overlapping.add(w);
      }
    }
  }
  for (const l of overlapping) {
    const gen = l.conditions[0]?.observedGeneration;
    l.conditions = sortConditions([
      ...l.conditions,
      makeCondition(
        ConditionType.OverlappingTLSConfig,
        'True',
        Reason.OverlappingHostnames,
        `hostname overlaps with another HTTPS listener on port ${l.port}`,
        gen,
        opts.now,
      ),
    ]);
  }
}

// ---------------------------------------------------------------------------------------------
// Gateways

function compareObjects(a: KubeObject, b: KubeObject): number {
  const ka = namespacedName(objectNamespace(a), a.metadata.name);
  const kb = namespacedName(objectNamespace(b), b.metadata.name);
  return compareStrings(ka, kb);
}

/** Gateways of Convoy's classes, sorted by namespace/name; deleting ones are skipped. */
export function ownedGateways(view: StoreView, opts: BuildOptions): KubeObject[] {
  const classes = ownedGatewayClasses(view, opts);
  return view
    .list('Gateway')
    .filter((gw) => !gw.metadata.deletionTimestamp && classes.has(gatewaySpec(gw).gatewayClassName))
    .sort(compareObjects);
}

/**
 * A reason the Gateway as a whole cannot be accepted, independent of its listeners: its class is
 * ours but not accepted, or it names infrastructure parameters (Convoy supports none).
 */
export function gatewayProblem(
  view: StoreView,
  opts: BuildOptions,
  gw: KubeObject,
  acceptedClasses: Set<string> = acceptedGatewayClasses(view, opts),
): { reason: string; message: string } | undefined {
  const spec = gatewaySpec(gw);
  if (!acceptedClasses.has(spec.gatewayClassName)) {
    return { reason: Reason.Invalid, message: `GatewayClass ${spec.gatewayClassName} is not accepted` };
  }
  const ref = spec.infrastructure?.parametersRef;
  if (ref) {
    return {
      reason: Reason.InvalidParameters,
      message: `infrastructure.parametersRef ${ref.group || 'core'}/${ref.kind} ${ref.name}: Convoy supports no Gateway parameters`,
    };
  }
  return undefined;
}

/** Whether a Gateway is accepted, given its own resolved listeners. */
function gatewayAccepted(own: ResolvedListener[]): boolean {
  return own.some((l) => l.conditions.some((c) => c.type === ConditionType.Accepted && c.status === 'True'));
}

interface SetInfo {
  object: KubeObject;
  owner: ListenerOwner;
  allowed: boolean;
  specs: Listener[];
}

function resolveGateway(
  view: StoreView,
  opts: BuildOptions,
  gw: KubeObject,
  setsByParent: Map<string, KubeObject[]>,
  acceptedClasses: Set<string>,
): ResolvedGateway {
  const ns = objectNamespace(gw);
  const gwOwner: ListenerOwner = { kind: 'Gateway', namespace: ns, name: gw.metadata.name };
  const ownSpecs = gatewaySpec(gw).listeners ?? [];
  const sets: SetInfo[] = (setsByParent.get(`${ns}/${gw.metadata.name}`) ?? []).map((ls) => {
    const lsNs = objectNamespace(ls);
    return {
      object: ls,
      owner: { kind: 'ListenerSet', namespace: lsNs, name: ls.metadata.name },
      allowed: listenerSetAllowed(view, gw, lsNs),
      specs: listenerSetSpec(ls)?.listeners ?? [],
    };
  });

  // Merged list: Gateway listeners, then admitted sets' listeners in precedence order.
  const merged: { owner: ListenerOwner; spec: Listener; gen?: number; fromGateway: boolean; set?: number }[] =
    [];
  for (const spec of ownSpecs)
    merged.push({ owner: gwOwner, spec, gen: gw.metadata.generation, fromGateway: true });
  sets.forEach((s, idx) => {
    if (!s.allowed) return;
    for (const spec of s.specs) {
      merged.push({ owner: s.owner, spec, gen: s.object.metadata.generation, fromGateway: false, set: idx });
    }
  });
  const conflicts = detectConflicts(
    merged.map((m) => ({
      port: m.spec.port,
      protocol: m.spec.protocol,
      hostname: m.spec.hostname,
      tlsMode: tlsModeOf(m.spec),
      fromGateway: m.fromGateway,
    })),
  );
  const resolved = merged.map((m, i) =>
    validateListener(view, opts, { owner: m.owner, spec: m.spec, generation: m.gen, conflict: conflicts[i] }),
  );

  markOverlappingTLS(resolved, opts);
  const problem = gatewayProblem(view, opts, gw, acceptedClasses);
  let own = resolved.slice(0, ownSpecs.length);
  const accepted = !problem && gatewayAccepted(own);
  if (!accepted) own = own.map((l) => gatewayNotAccepted(l, opts, gw.metadata.generation));
  const listeners: ResolvedListener[] = [...own];
  const bySet = new Map<number, ResolvedListener[]>();
  resolved.forEach((l, i) => {
    const set = merged[i].set;
    if (set === undefined) return;
    const list = bySet.get(set);
    if (list) list.push(l);
    else bySet.set(set, [l]);
  });
  const listenerSets: ResolvedListenerSet[] = sets.map((s, idx) => {
    const gen = s.object.metadata.generation;
    if (!s.allowed) {
      return {
        object: s.object,
        accepted: false,
        listeners: s.specs.map((spec) => notAllowedListener(opts, s.owner, spec, gen)),
      };
    }
    let setListeners = bySet.get(idx) ?? [];
    if (!accepted) setListeners = setListeners.map((l) => gatewayNotAccepted(l, opts, gen));
    listeners.push(...setListeners);
    return {
      object: s.object,
      accepted: accepted && setListeners.some((l) => l.ready),
      listeners: setListeners,
    };
  });

  return { object: gw, fleet: fleetName(ns, gw.metadata.name), accepted, listeners, listenerSets };
}

/**
 * What resolveGateway would give for `ls`, a ListenerSet that sorts last in precedence among the
 * sets of the accepted Gateway `g` (g as resolved without it): its ResolvedListenerSet, and whether
 * g admits it. Its listeners are checked against the claims detectConflicts would hold when it
 * reaches them (every listener of the Gateway's own, and the non-conflicted ones of admitted sets,
 * which are exactly g.listeners), so existing outcomes cannot change. Returns undefined when the
 * Gateway is not accepted or when adding the set would give an existing listener an
 * OverlappingTLSConfig condition it did not have: a full build is needed then.
 */
export function resolveAddedListenerSet(
  view: StoreView,
  opts: BuildOptions,
  g: ResolvedGateway,
  ls: KubeObject,
): { set: ResolvedListenerSet; allowed: boolean } | undefined {
  if (!g.accepted) return undefined;
  const lsNs = objectNamespace(ls);
  const owner: ListenerOwner = { kind: 'ListenerSet', namespace: lsNs, name: ls.metadata.name };
  const specs = listenerSetSpec(ls)?.listeners ?? [];
  const gen = ls.metadata.generation;
  const allowed = listenerSetAllowed(view, g.object, lsNs);
  if (!allowed) {
    const listeners = specs.map((spec) => notAllowedListener(opts, owner, spec, gen));
    return { allowed, set: { object: ls, accepted: false, listeners } };
  }
  const ports = new Set(specs.map((s) => s.port));
  const claims = new Map<number, PortClaims>();
  const claim = (c: ConflictInput) => {
    let pc = claims.get(c.port);
    if (!pc) {
      pc = new PortClaims();
      claims.set(c.port, pc);
    }
    pc.add(c);
  };
  const existing: ResolvedListener[] = [];
  for (const l of g.listeners) {
    if (!ports.has(l.port)) continue;
    existing.push(l);
    const conflicted = l.conditions.some((c) => c.type === ConditionType.Conflicted && c.status === 'True');
    if (l.owner.kind !== 'Gateway' && conflicted) continue;
    claim({ port: l.port, protocol: l.protocol, hostname: l.hostname, tlsMode: l.tlsMode });
  }
  const listeners: ResolvedListener[] = [];
  for (const spec of specs) {
    const input: ConflictInput = {
      port: spec.port,
      protocol: spec.protocol,
      hostname: spec.hostname,
      tlsMode: tlsModeOf(spec),
    };
    const conflict = claims.get(spec.port)?.conflict(input);
    if (!conflict) claim(input);
    listeners.push(validateListener(view, opts, { owner, spec, generation: gen, conflict }));
  }
  // Overlap marking over copies: an existing listener newly marked would change its status.
  // markOverlappingTLS marks nothing on a port whose accepted HTTPS listeners all have a hostname
  // and none a wildcard one: skip it then (the common case, and 5,000 copies otherwise).
  const accepted = (l: ResolvedListener) =>
    l.protocol === 'HTTPS' &&
    l.conditions.some((c) => c.type === ConditionType.Accepted && c.status === 'True');
  const mayOverlap = (l: ResolvedListener) => accepted(l) && (!l.hostname || l.hostname.startsWith('*.'));
  if (!existing.some(mayOverlap) && !listeners.some(mayOverlap)) {
    return { allowed, set: { object: ls, accepted: listeners.some((l) => l.ready), listeners } };
  }
  const copies = existing.map((l) => ({ ...l }));
  markOverlappingTLS([...copies, ...listeners], opts);
  for (let i = 0; i < copies.length; i++) {
    if (copies[i].conditions === existing[i].conditions) continue;
    if (!existing[i].conditions.some((c) => c.type === ConditionType.OverlappingTLSConfig)) return undefined;
  }
  return { allowed, set: { object: ls, accepted: listeners.some((l) => l.ready), listeners } };
}

export function resolveGateways(view: StoreView, opts: BuildOptions): ResolvedGateway[] {
  const setsByParent = listenerSetsByParent(view);
  const acceptedClasses = acceptedGatewayClasses(view, opts);
  return ownedGateways(view, opts).map((gw) => resolveGateway(view, opts, gw, setsByParent, acceptedClasses));
}

// ---------------------------------------------------------------------------------------------
// Status

function gatewayAddresses(gw: KubeObject, view: StoreView, opts: BuildOptions): GatewayStatusAddress[] {
  const out: GatewayStatusAddress[] = [];
  for (const a of gatewaySpec(gw).addresses ?? []) {
    if (!a.value) continue;
    out.push({ type: a.type || 'IPAddress', value: a.value });
  }
  if (out.length > 0) return out;
  return dataPlaneAddresses(view, opts);
}

const IPV4 = /^(\d{1,3}\.){3}\d{1,3}$/;

/** The Envoy fleet's reachable addresses: from the configured Service's LB ingress, then flags. */
export function dataPlaneAddresses(view: StoreView, opts: BuildOptions): GatewayStatusAddress[] {
  const source = opts.gatewayAddresses;
  if (!source) return [];
  const values: string[] = [];
  if (source.service) {
    const svc = view.get('Service', source.service.namespace, source.service.name);
    const ingress = svc?.loadBalancerIngress;
    if (Array.isArray(ingress)) {
      for (const i of ingress as { ip?: unknown; hostname?: unknown }[]) {
        if (typeof i?.ip === 'string' && i.ip) values.push(i.ip);
        else if (typeof i?.hostname === 'string' && i.hostname) values.push(i.hostname);
      }
    }
  }
  for (const v of source.static ?? []) if (v && !values.includes(v)) values.push(v);
  return values.map((value) => ({
    type: IPV4.test(value) || value.includes(':') ? 'IPAddress' : 'Hostname',
    value,
  }));
}

export function gatewayStatus(
  g: ResolvedGateway,
  view: StoreView,
  opts: BuildOptions,
  acceptedClasses: Set<string>,
): ObjectStatus {
  const gw = g.object;
  const gen = gw.metadata.generation;
  const own = g.listeners.filter((l) => l.owner.kind === 'Gateway');
  const cond = (type: string, status: Condition['status'], reason: string, message: string) =>
    makeCondition(type, status, reason, message, gen, opts.now);
  let conditions: Condition[];
  const problem = gatewayProblem(view, opts, gw, acceptedClasses);
  if (problem) {
    conditions = [
      cond(ConditionType.Accepted, 'False', problem.reason, problem.message),
      cond(ConditionType.Programmed, 'False', Reason.Invalid, 'the Gateway is not accepted'),
    ];
  } else if (!g.accepted) {
    const msg = own.length === 0 ? 'the Gateway has no listeners' : 'no listener is valid';
    conditions = [
      cond(ConditionType.Accepted, 'False', Reason.ListenersNotValid, msg),
      cond(ConditionType.Programmed, 'False', Reason.Invalid, 'the Gateway is not accepted'),
    ];
  } else {
    const invalid = own.filter((l) => !l.ready).map((l) => l.name);
    conditions = [
      invalid.length > 0
        ? cond(
            ConditionType.Accepted,
            'True',
            Reason.ListenersNotValid,
            `listeners not valid: ${invalid.join(', ')}`,
          )
        : cond(ConditionType.Accepted, 'True', Reason.Accepted, 'Gateway is accepted'),
      cond(ConditionType.Programmed, 'True', Reason.Programmed, 'Gateway is programmed on its Envoy fleet'),
    ];
  }
  const status: GatewayStatus = {
    addresses: gatewayAddresses(gw, view, opts),
    conditions,
    listeners: own.map((l) => listenerStatus(l)),
    attachedListenerSets: g.listenerSets.filter((s) => s.accepted).length,
  };
  return {
    apiVersion: GATEWAY_API_VERSION,
    kind: 'Gateway',
    metadata: { namespace: objectNamespace(gw), name: gw.metadata.name, generation: gen },
    status: status as unknown as Record<string, unknown>,
  };
}

/**
 * Statuses of every resolved Gateway and of every ListenerSet whose parent is one of them
 * (admitted or not). Call after route attachment has filled listener.attachedRoutes.
 * Sorted by kind, then namespace/name.
 */
export function gatewayAndListenerSetStatuses(
  gateways: ResolvedGateway[],
  view: StoreView,
  opts: BuildOptions,
): ObjectStatus[] {
  const out: ObjectStatus[] = [];
  const acceptedClasses = acceptedGatewayClasses(view, opts);
  for (const g of gateways) {
    out.push(gatewayStatus(g, view, opts, acceptedClasses));
    for (const set of g.listenerSets) {
      const allowed = listenerSetAllowed(view, g.object, objectNamespace(set.object));
      out.push(listenerSetStatus(set, listenerSetVerdict(set, allowed, g.accepted), opts));
    }
  }
  return out.sort((a, b) => compareStrings(statusKey(a), statusKey(b)));
}
