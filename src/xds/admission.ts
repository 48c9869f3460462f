/**
 * Admission control for ADS streams (docs/security.md §2): a cap on open streams in total
 * and per client address, so one client (or a crowd of idle ones) cannot hold the server's
 * memory. Pure bookkeeping; the server refuses with RESOURCE_EXHAUSTED when a slot is denied.
 */

export interface StreamLimits {
  /** Most open streams overall; undefined: no limit. */
  maxStreams?: number;
  /** Most open streams from one client IP address; undefined: no limit. */
  maxStreamsPerPeer?: number;
}

export interface AdmissionRefusal {
  /** Bounded metric label. */
  reason: 'stream_limit' | 'peer_stream_limit';
  details: string;
}

/**
 * The IP address of a gRPC peer string (`1.2.3.4:5678`, `::1:5678` or `[::1]:5678` as grpc-js
 * writes them), with IPv4-mapped IPv6 folded to IPv4 so one client is one key.
 */
export function peerAddress(peer: string): string {
  let host = peer;
  if (host.startsWith('[')) host = host.slice(1, host.indexOf(']') > 0 ? host.indexOf(']') : undefined);
  // grpc-js always appends ":port", also to a bare IPv6 address: the last colon starts it.
  else if (/:\d+$/.test(host)) host = host.slice(0, host.lastIndexOf(':'));
  return host.startsWith('::ffff:') && host.includes('.') ? host.slice(7) : host;
}

export class StreamAdmission {
  private total = 0;
  private readonly perPeer = new Map<string, number>();

  constructor(private readonly limits: StreamLimits) {}

  /** Takes a slot for a stream from `peer` (an address from peerAddress), or says why not. */
  admit(peer: string): AdmissionRefusal | undefined {
    const { maxStreams, maxStreamsPerPeer } = this.limits;
    if (maxStreams !== undefined && this.total >= maxStreams) {
      return {
        reason: 'stream_limit',
        details: `this server already holds its limit of ${maxStreams} ADS streams`,
      };
    }
    const mine = this.perPeer.get(peer) ?? 0;
    if (maxStreamsPerPeer !== undefined && mine >= maxStreamsPerPeer) {
      return {
        reason: 'peer_stream_limit',
        details: `this client address already holds its limit of ${maxStreamsPerPeer} ADS streams`,
      };
    }
    this.total++;
    this.perPeer.set(peer, mine + 1);
    return undefined;
  }

  /** Gives back the slot of a stream from `peer` (once per admitted stream). */
  release(peer: string): void {
    const mine = this.perPeer.get(peer);
    if (mine === undefined) return;
    this.total--;
    if (mine <= 1) this.perPeer.delete(peer);
    else this.perPeer.set(peer, mine - 1);
  }

  get open(): number {
    return this.total;
  }

  /** Distinct client addresses with open streams. */
  get peers(): number {
    return this.perPeer.size;
  }
}
