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
  /** The claims layered under these (over), nearest first; never changed through this object. */
  private readonly lower: readonly PortClaims[];

  private constructor(below?: PortClaims) {
    this.lower = below ? [below, ...below.lower] : [];
  }

  /** This layer and those under it. */
  private layers(): PortClaims[] {
    return [this, ...this.lower];
  }

  /** No claims yet. */
  static empty(): PortClaims {
    return new PortClaims();
  }

  /**
   * Claims that start as `base`'s, which stays as it is: what the ListenerSet fast path adds a new
   * set's listeners to without rebuilding the port's claims from its thousands of listeners
   * (docs/architecture.md §8). Once layers pile up (more than MAX_DEPTH), they are merged into one,
   * so a question asks at most MAX_DEPTH + 1 maps.
   */
  static over(base: PortClaims): PortClaims {
    if (base.lower.length < MAX_DEPTH) return new PortClaims(base);
    const flat = new PortClaims();
    for (const layer of base.layers()) {
      for (const [f, n] of layer.families) flat.families.set(f, (flat.families.get(f) ?? 0) + n);
      for (const [key, protocols] of layer.hosts) {
        const all = flat.hosts.get(key) ?? new Set<string>();
        for (const p of protocols) all.add(p);
        flat.hosts.set(key, all);
      }
      for (const m of layer.tlsModes) flat.tlsModes.add(m);
    }
    return new PortClaims(flat);
  }

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
      for (const layer of this.layers()) {
        for (const [g, n] of layer.families) {
          if (n > 0 && g !== f && g !== 'udp') return Reason.ProtocolConflict;
        }
      }
    }
    if (!this.claimsFamily(f)) return undefined;
    if (f === 'tcp' || f === 'udp') return Reason.HostnameConflict;
    const sameHost = this.protocolsAt(`${f}|${normHost(c.hostname)}`);
    if (f === 'tls') {
      if (sameHost.some((p) => p !== c.protocol)) return Reason.ProtocolConflict;
      if (c.protocol === 'TLS' && !SUPPORTS_TLS_MODE_MIXED && this.hasOtherTlsMode(c.tlsMode)) {
        return Reason.ProtocolConflict;
      }
    }
    return sameHost.includes(c.protocol) ? Reason.HostnameConflict : undefined;
  }

  private claimsFamily(f: string): boolean {
    for (const layer of this.layers()) if (layer.families.get(f)) return true;
    return false;
  }

  private protocolsAt(key: string): string[] {
    const out: string[] = [];
    for (const layer of this.layers()) for (const p of layer.hosts.get(key) ?? []) out.push(p);
    return out;
  }

  private hasOtherTlsMode(mode: string | undefined): boolean {
    for (const layer of this.layers()) for (const m of layer.tlsModes) if (m !== mode) return true;
    return false;
  }
}

/** Layers of PortClaims.over before they are merged into one. */
const MAX_DEPTH = 16;

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
      pc = PortClaims.empty();
      claims.set(c.port, pc);
    }
    pc.add(c);
  }
  return result;
}
