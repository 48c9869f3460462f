/**
 * Detects listener conflicts over a Gateway's merged listener list (its own, then those of the
 * ListenerSets it admits, in precedence order).
 *
 * Conflict rules (docs/gateway-api.md §6; conformance wins over prose):
 *  - Conflicts are evaluated before protocol support, so an unsupported TCP listener sharing
 *    port 80 with HTTP reports ProtocolConflict, not UnsupportedProtocol.
 *  - Among a Gateway's own listeners no winner is picked: every indistinct listener is Conflicted.
 *  - A ListenerSet listener loses to any Gateway listener it conflicts with, and to any earlier
 *    (higher-precedence) ListenerSet listener that is not itself conflicted.
 *  - A conflicted listener has Accepted=False, Programmed=False and Conflicted=True, all three with
 *    reason HostnameConflict or ProtocolConflict.
 */
import { Reason } from '../status/conditions';
import { SUPPORTS_TLS_MODE_MIXED } from './features';

export type ConflictReason = typeof Reason.HostnameConflict | typeof Reason.ProtocolConflict;

export interface ConflictInput {
  port: number;
  protocol: string;
  hostname?: string;
  tlsMode?: 'Terminate' | 'Passthrough';
}

/**
 * Returns the port-sharing family of a protocol, or undefined for unknown protocols.
 *
 * HTTPS and TLS share the family `tls` because both select by SNI; unknown protocols do not bind
 * ports, so they conflict with nothing.
 */
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

/** Returns a listener hostname lower-cased, with none as "". */
function normHost(h: string | undefined): string {
  return (h ?? '').toLowerCase();
}

/** Returns why two listeners cannot coexist, or undefined when they are distinct. */
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
 * Indexes the listeners that hold one port, to tell whether another listener conflicts with them.
 *
 * `conflict(c)` gives the same answer as checking `listenerConflict(c, claim)` against every claim
 * (ProtocolConflict outranking HostnameConflict) without scanning them all.
 */
export class PortClaims {
  private readonly families = new Map<string, number>();
  /** "family|hostname" → protocols claimed there. */
  private readonly hosts = new Map<string, Set<string>>();
  /** tls.mode of claims with protocol TLS. */
  private readonly tlsModes = new Set<string | undefined>();

  /** Records that listener `c` holds the port (listeners of unknown protocols hold nothing). */
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

  /** Returns why `c` conflicts with the claims recorded so far, or undefined when it does not. */
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
 * Returns, per index of a merged, precedence-ordered listener list, the reason that listener is
 * conflicted (undefined = not conflicted).
 *
 * See the file comment for the rules.
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
