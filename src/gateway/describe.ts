/**
 * Explains a build for `convoy describe` (docs/operations.md §18): which Gateway or ListenerSet
 * listener serves a hostname on each port of each Gateway, with its certificates, the routes and
 * backends that answer the hostname there, and why every other listener that could have served
 * it did not (a conflict, a refused ListenerSet, an invalid listener, a more specific hostname or
 * an earlier listener in precedence order). Pure: it reads a BuildState and nothing else.
 */
import { certificateInfo, pemCertificates } from '../pki/certificate-info';
import type { Condition } from '../status/types';
import type { BuildState } from './incremental/state';
import type { ResolvedGateway, ResolvedListener } from './resolved';

export interface CertificateDescription {
  secret: string;
  subject?: string;
  dnsNames?: string[];
  notBefore?: string;
  notAfter?: string;
  /** Set when the chain does not parse (the listener would not be ready then). */
  error?: string;
}

export interface RouteDescription {
  /** `Kind/namespace/name`. */
  route: string;
  /** The hostnames it serves on this listener (`*`: any). */
  hostnames: string[];
  /** Clusters `namespace/service/port` its rules send to. */
  backends: string[];
  /** The first unresolved backend reference, if any. */
  problem?: string;
}

export interface ListenerDescription {
  gateway: string;
  /** `Gateway/ns/name/section` or `ListenerSet/ns/name/section`. */
  listener: string;
  port: number;
  protocol: string;
  hostname?: string;
  tlsMode?: string;
  ready: boolean;
  certificates: CertificateDescription[];
  routes: RouteDescription[];
  /** Conditions that are not healthy (Accepted/Programmed/ResolvedRefs not True, Conflicted True). */
  problems: { type: string; status: string; reason: string; message: string }[];
}

export interface Candidate {
  listener: string;
  hostname?: string;
  reason: string;
}

export interface PortExplanation {
  gateway: string;
  port: number;
  serving?: ListenerDescription;
  /** Listeners on this port whose hostname matches and that do not serve it, and why. */
  lost: Candidate[];
}

/** Lower-cased, without a trailing dot. */
function norm(h: string): string {
  return h.trim().toLowerCase().replace(/\.$/, '');
}

/**
 * How specifically a listener hostname matches `host`: 0 no match; 1 no hostname (any host);
 * 2 + length for a wildcard covering it; 1000 + length for the exact name. More specific wins,
 * as Envoy's domain and server-name matching pick the most specific (docs/gateway-api.md §11).
 */
export function hostnameSpecificity(listenerHostname: string | undefined, host: string): number {
  const h = norm(host);
  if (listenerHostname === undefined || norm(listenerHostname) === '' || norm(listenerHostname) === '*')
    return 1;
  const l = norm(listenerHostname);
  if (l === h) return 1000 + l.length;
  if (l.startsWith('*.') && h.length > l.length - 1 && h.endsWith(l.slice(1))) return 2 + l.length;
  return 0;
}

function healthy(c: Condition): boolean {
  return c.type === 'Conflicted' || c.type === 'OverlappingTLSConfig'
    ? c.status === 'False'
    : c.status === 'True';
}

function certificates(l: ResolvedListener): CertificateDescription[] {
  return l.certificates.map((s) => {
    try {
      const [leaf] = pemCertificates(s.certificateChain);
      const info = certificateInfo(leaf);
      return {
        secret: s.name,
        subject: info.subject.replace(/\n/g, ', '),
        dnsNames: info.dnsNames,
        notBefore: info.notBefore.toISOString(),
        notAfter: info.notAfter.toISOString(),
      };
    } catch (err) {
      return { secret: s.name, error: (err as Error).message };
    }
  });
}

/** `host` is answered by a route hostname (`*` for any, or a wildcard covering it). */
function routeServes(routeHostname: string, host: string): boolean {
  return routeHostname === '*' || hostnameSpecificity(routeHostname, host) > 0;
}

/** A listener as describe shows it; with `host`, only the routes that answer that host. */
export function describeListener(
  state: BuildState,
  gateway: string,
  l: ResolvedListener,
  host?: string,
): ListenerDescription {
  const routes = (state.attached.get(l.qualifiedName) ?? [])
    .filter((a) => host === undefined || a.hostnames.some((h) => routeServes(h, host)))
    .map((a) => ({
      route: a.route.id.key,
      hostnames: a.hostnames,
      backends: [...new Set(a.route.clusters.map((c) => c.name))].sort(),
      ...(a.route.refProblem
        ? { problem: `${a.route.refProblem.reason}: ${a.route.refProblem.message}` }
        : {}),
    }));
  return {
    gateway,
    listener: l.qualifiedName,
    port: l.port,
    protocol: l.protocol,
    ...(l.hostname !== undefined ? { hostname: l.hostname } : {}),
    ...(l.tlsMode !== undefined ? { tlsMode: l.tlsMode } : {}),
    ready: l.ready,
    certificates: certificates(l),
    routes,
    problems: l.conditions
      .filter((c) => !healthy(c))
      .map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })),
  };
}

/** Why a listener that is not ready cannot serve anything, from its conditions. */
function notReadyReason(l: ResolvedListener): string {
  const by = (type: string) => l.conditions.find((c) => c.type === type);
  const conflicted = by('Conflicted');
  if (conflicted?.status === 'True') return `conflict: ${conflicted.reason}: ${conflicted.message}`;
  const bad = l.conditions.find((c) => !healthy(c));
  return bad ? `not ready: ${bad.type}=${bad.status} ${bad.reason}: ${bad.message}` : 'not ready';
}

/** Every listener of a Gateway, with ListenerSets that are not accepted and why. */
function listenersOf(gw: ResolvedGateway): { l: ResolvedListener; refused?: string }[] {
  const out: { l: ResolvedListener; refused?: string }[] = gw.listeners.map((l) => ({ l }));
  const seen = new Set(gw.listeners.map((l) => l.qualifiedName));
  for (const set of gw.listenerSets) {
    const why = !set.allowed
      ? `not allowed: the Gateway's allowedListeners does not admit namespace ${set.object.metadata.namespace ?? ''}`
      : 'the ListenerSet is not accepted by its Gateway';
    for (const l of set.listeners) if (!seen.has(l.qualifiedName)) out.push({ l, refused: why });
  }
  return out;
}

/**
 * For each Gateway and port with a listener whose hostname matches `host`: the listener that
 * serves it (ready, most specific hostname, earliest in precedence order) and why the others
 * lost. Sorted by Gateway, then port.
 */
export function explainHost(state: BuildState, host: string): PortExplanation[] {
  const out: PortExplanation[] = [];
  for (const gw of [...state.gateways].sort((a, b) => a.fleet.localeCompare(b.fleet))) {
    const byPort = new Map<
      number,
      { l: ResolvedListener; refused?: string; specificity: number; order: number }[]
    >();
    listenersOf(gw).forEach(({ l, refused }, order) => {
      const specificity = hostnameSpecificity(l.hostname, host);
      if (specificity === 0) return;
      byPort.set(l.port, [...(byPort.get(l.port) ?? []), { l, refused, specificity, order }]);
    });
    for (const port of [...byPort.keys()].sort((a, b) => a - b)) {
      const all = byPort.get(port)!;
      const usable = all
        .filter((c) => c.refused === undefined && c.l.ready && gw.accepted)
        .sort((a, b) => b.specificity - a.specificity || a.order - b.order);
      const winner = usable[0];
      const lost: Candidate[] = [];
      for (const c of all) {
        if (c === winner) continue;
        let reason: string;
        if (!gw.accepted)
          reason = `the Gateway is not accepted${gw.problem ? `: ${gw.problem.message}` : ''}`;
        else if (c.refused !== undefined) reason = c.refused;
        else if (!c.l.ready) reason = notReadyReason(c.l);
        else if (c.specificity < winner.specificity)
          reason = `a more specific hostname wins: ${winner.l.hostname ?? '(none)'} of ${winner.l.qualifiedName}`;
        else reason = `precedence: ${winner.l.qualifiedName} comes first`;
        lost.push({
          listener: c.l.qualifiedName,
          ...(c.l.hostname ? { hostname: c.l.hostname } : {}),
          reason,
        });
      }
      out.push({
        gateway: gw.fleet,
        port,
        ...(winner ? { serving: describeListener(state, gw.fleet, winner.l, host) } : {}),
        lost,
      });
    }
  }
  return out;
}

/**
 * The listeners named `section` of the Gateway or ListenerSet `namespace/owner`, each with the
 * other listeners of its Gateway on the same port (which share its Envoy listener).
 */
export function explainListener(
  state: BuildState,
  namespace: string,
  owner: string,
  section: string,
): { listener: ListenerDescription; samePort: Candidate[] }[] {
  const out: { listener: ListenerDescription; samePort: Candidate[] }[] = [];
  for (const gw of state.gateways) {
    const all = listenersOf(gw);
    for (const { l, refused } of all) {
      if (l.owner.namespace !== namespace || l.owner.name !== owner || l.name !== section) continue;
      const description = describeListener(state, gw.fleet, l);
      if (refused)
        description.problems.unshift({
          type: 'Accepted',
          status: 'False',
          reason: 'NotAllowed',
          message: refused,
        });
      const samePort = all
        .filter((o) => o.l !== l && o.l.port === l.port)
        .map((o) => ({
          listener: o.l.qualifiedName,
          ...(o.l.hostname ? { hostname: o.l.hostname } : {}),
          reason: o.refused ?? (o.l.ready ? 'serves on the same port' : notReadyReason(o.l)),
        }));
      out.push({ listener: description, samePort });
    }
  }
  return out;
}
