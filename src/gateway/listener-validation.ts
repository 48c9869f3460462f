/**
 * Validates listeners: protocol, port, hostname, route kinds and TLS certificates of one listener
 * of an admitted Gateway or ListenerSet → its ResolvedListener with Accepted, Programmed,
 * ResolvedRefs and Conflicted conditions; and the conditions that depend on other listeners
 * (Gateway not accepted, overlapping TLS hostnames). The rules are docs/gateway-api.md §7.
 */
import type { Condition } from '../status/types';
import type { BuildOptions, ListenerOwner, ResolvedListener, RouteGroupKind, StoreView } from './resolved';
import type { AllowedRouteKind, Listener } from './api';
import { GATEWAY_API_GROUP } from './api';
import { ConditionType, Reason, makeCondition, sortConditions } from '../status/conditions';
import type { ConflictReason } from './conflicts';
import type { BuildMemo } from './build-memo';
import { resolveListenerCertificates } from './certificates';
import { flatKey } from '../store/objects';
import type { PortClientValidation } from './frontend-validation';

/** The parts of BuildMemo listener validation uses: Secret checks and last good certificates. */
export type CertificateState = Pick<BuildMemo, 'certificates' | 'lastGoodCertificates'>;

// ---------------------------------------------------------------------------------------------
// Protocols and route kinds

/** Protocols Convoy serves. */
export const SUPPORTED_PROTOCOLS: ReadonlySet<string> = new Set(['HTTP', 'HTTPS', 'TLS', 'TCP', 'UDP']);

/** Route kinds each supported protocol accepts (also the default supportedKinds). */
export const ROUTE_KINDS_BY_PROTOCOL: Readonly<Record<string, readonly string[]>> = {
  HTTP: ['HTTPRoute', 'GRPCRoute'],
  HTTPS: ['HTTPRoute', 'GRPCRoute'],
  TLS: ['TLSRoute'],
  TCP: ['TCPRoute'],
  UDP: ['UDPRoute'],
};

export interface KindResolution {
  supportedKinds: RouteGroupKind[];
  /** Requested kinds that are not supported on this protocol, as "group/kind". */
  invalid: string[];
}

/** Returns allowedRoutes.kinds filtered to what the protocol supports; the protocol's defaults when unset. */
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
// Listener validation

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Returns the problem with a listener hostname, or undefined when it is valid: an RFC 1123 DNS name,
 * lower case, at most 253 characters, not an IP address, `*.` only as the whole first label.
 *
 * The CRD enforces this in Kubernetes; file mode has no CRD, so it is checked here.
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

/** Returns a listener's qualified name `Kind/namespace/name/listener` (its Envoy filter chain name). */
function qualifiedName(owner: ListenerOwner, listener: string): string {
  return flatKey(owner.kind, owner.namespace, owner.name, listener);
}

/** Returns the tls.mode of an HTTPS or TLS listener (Terminate by default); undefined for others. */
export function tlsModeOf(spec: Listener): 'Terminate' | 'Passthrough' | undefined {
  if (spec.protocol !== 'HTTPS' && spec.protocol !== 'TLS') return undefined;
  return spec.tls?.mode === 'Passthrough' ? 'Passthrough' : 'Terminate';
}

/** Returns a listener's allowedRoutes.namespaces with the default (Same) applied. */
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
  /** Replaces the conflict's usual message (a listener on a port of another's range, port-ranges.ts). */
  conflictMessage?: string;
  /** The Gateway's client certificate validation on this listener's port (frontend-validation.ts). */
  frontend?: PortClientValidation;
}

/**
 * Validates one listener of an admitted owner and builds its ResolvedListener; `state` keeps the
 * checks of unchanged Secrets and the last good certificates, which a listener that has served
 * keeps serving while its Secret is invalid (docs/gateway-api.md §8); the outcome is recorded there.
 */
export function validateListener(
  view: StoreView,
  opts: BuildOptions,
  input: ValidateInput,
  state?: CertificateState,
): ResolvedListener {
  const { owner, spec, conflict } = input;
  const conflictText = (reason: ConflictReason) => input.conflictMessage ?? conflictMessage(reason);
  const cond = (type: string, status: Condition['status'], reason: string, message: string) =>
    makeCondition(type, status, reason, message, input.generation, opts.now);
  const protocol = spec.protocol;
  const tlsMode = tlsModeOf(spec);
  const kinds = resolveRouteKinds(protocol, spec.allowedRoutes?.kinds);
  const hostnameProblem = listenerHostnameProblem(spec.hostname);
  // Client certificate validation applies to the listeners handling HTTPS traffic only.
  const frontend = protocol === 'HTTPS' && tlsMode === 'Terminate' ? input.frontend : undefined;

  // Accepted
  let accepted: Condition;
  if (conflict) {
    accepted = cond(ConditionType.Accepted, 'False', conflict, conflictText(conflict));
  } else if (!SUPPORTED_PROTOCOLS.has(protocol)) {
    accepted = cond(
      ConditionType.Accepted,
      'False',
      Reason.UnsupportedProtocol,
      `protocol ${JSON.stringify(protocol)} is not supported; supported protocols are HTTP, HTTPS, TLS, TCP and UDP`,
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
  } else if (frontend && !frontend.bundle) {
    accepted = cond(
      ConditionType.Accepted,
      'False',
      Reason.NoValidCACertificate,
      `no caCertificateRef of the Gateway's client certificate validation for port ${spec.port} is usable (see ResolvedRefs)`,
    );
  } else {
    accepted = cond(ConditionType.Accepted, 'True', Reason.Accepted, 'listener is accepted');
  }
  const isAccepted = accepted.status === 'True';

  // Certificates (only for supported TLS-terminating listeners).
  const terminates = SUPPORTED_PROTOCOLS.has(protocol) && tlsMode === 'Terminate';
  const name = qualifiedName(owner, spec.name);
  let certificates: ResolvedListener['certificates'] = [];
  let fresh: ResolvedListener['certificates'] = [];
  let invalid: string[] = [];
  let lastGood: string[] = [];
  let certProblem: { reason: string; message: string } | undefined;
  if (terminates) {
    const refs = spec.tls?.certificateRefs ?? [];
    if (refs.length === 0) {
      certProblem = {
        reason: Reason.InvalidCertificateRef,
        message: `${protocol} listener in Terminate mode needs at least one certificateRef`,
      };
    } else {
      const memory = state?.lastGoodCertificates;
      const recall = memory && ((secret: string) => memory.recall(name, secret));
      const res = resolveListenerCertificates(view, owner, refs, state?.certificates, recall);
      ({ certificates, fresh, invalid, lastGood } = res);
      certProblem = res.problem;
    }
  }

  // ResolvedRefs: the certificates' problem first, then the CA bundle's.
  certProblem ??= frontend?.problem;
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
    programmed = cond(ConditionType.Programmed, 'False', conflict, conflictText(conflict));
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
    ? cond(ConditionType.Conflicted, 'True', conflict, conflictText(conflict))
    : cond(ConditionType.Conflicted, 'False', Reason.NoConflicts, 'listener does not conflict');
  const conditions = [accepted, programmed, resolvedRefs, conflicted];
  if (terminates) state?.lastGoodCertificates.record(name, ready, fresh, invalid);
  if (ready && lastGood.length > 0) {
    conditions.push(
      cond(
        ConditionType.ServingLastGoodCertificate,
        'True',
        Reason.LastGoodCertificate,
        `the current version of Secret ${lastGood.join(', ')} is invalid (see ResolvedRefs); its last valid version is still served`,
      ),
    );
  }

  return {
    owner,
    name: spec.name,
    qualifiedName: name,
    port: spec.port,
    protocol,
    ...(spec.hostname ? { hostname: spec.hostname } : {}),
    ...(tlsMode ? { tlsMode } : {}),
    certificates: ready ? certificates : [],
    ...(ready && frontend?.bundle
      ? { clientValidation: { bundle: frontend.bundle, mode: frontend.mode } }
      : {}),
    allowedNamespaces: allowedNamespacesOf(spec),
    // A listener that is not accepted (conflicted, unsupported protocol, ...) supports no kind:
    // nothing can attach to it (conformance expects an empty list, e.g. for ProtocolConflict).
    supportedKinds: isAccepted ? kinds.supportedKinds : [],
    ready,
    conditions: sortConditions(conditions),
    attachedRoutes: 0,
  };
}

/** Returns the condition message for a conflicted listener (it names no other listener). */
function conflictMessage(reason: ConflictReason): string {
  return reason === Reason.HostnameConflict
    ? 'another listener with higher precedence uses the same port and hostname'
    : 'another listener with higher precedence uses the same port with an incompatible protocol';
}

/**
 * Returns the ResolvedListener of a listener of a ListenerSet its Gateway does not admit: never
 * programmed, its refs not resolved.
 */
export function notAllowedListener(
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
    qualifiedName: qualifiedName(owner, spec.name),
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
export function gatewayNotAccepted(l: ResolvedListener, opts: BuildOptions, gen?: number): ResolvedListener {
  if (!l.ready) return l;
  const message =
    l.owner.kind === 'Gateway' ? 'the Gateway is not accepted' : 'the parent Gateway is not accepted';
  const programmed = makeCondition(ConditionType.Programmed, 'False', Reason.Invalid, message, gen, opts.now);
  const { clientValidation: _served, ...rest } = l;
  return {
    ...rest,
    ready: false,
    certificates: [],
    conditions: sortConditions([
      ...l.conditions.filter((c) => c.type !== ConditionType.Programmed),
      programmed,
    ]),
  };
}

/**
 * Adds OverlappingTLSConfig=True/OverlappingHostnames to accepted HTTPS listeners that share a port
 * and whose hostnames overlap without being equal (e.g. `*.example.com` and `foo.example.com`, or a
 * listener without hostname and any other).
 *
 * The condition is only ever written when True. It is informational: both listeners stay
 * programmed. Messages name no other listener, so a ListenerSet learns nothing about its siblings.
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
