/** JSON shape of AdsServer.debugState() (served by the admin server at /debug/xds). */
import type { FleetRejections } from './rejections';

/** How many subscribed names a TypeDebug lists (an Envoy may subscribe to thousands). */
export const SUBSCRIBED_NAMES_SHOWN = 50;

export interface TypeDebug {
  /**
   * synced: the last response was ACKed and nothing newer is waiting;
   * stale: a response is waiting to be sent or has not been answered yet;
   * not_sent: requested, but nothing was ever sent (e.g. the names do not exist yet);
   * nacked: the last response was rejected (see lastNack).
   */
  state: 'synced' | 'stale' | 'not_sent' | 'nacked';
  wildcard: boolean;
  /** Number of explicitly subscribed names (besides a wildcard). */
  subscribed: number;
  /** The first SUBSCRIBED_NAMES_SHOWN explicitly subscribed names, sorted. */
  subscribedNames: string[];
  sent?: { version: string; nonce: string; time: string; resources: number; removed: number; bytes: number };
  ackedVersion?: string;
  ackedTime?: string;
  lastNack?: { version: string; nonce: string; message: string; acceptedVersion: string; time: string };
}

export interface StreamDebug {
  id: number;
  nodeId: string;
  fleet: string;
  variant: 'sotw' | 'delta';
  connectedSince: string;
  peer: string;
  /** The fleet has no snapshot yet: the stream is held (no response, never an empty LDS/CDS). */
  held: boolean;
  /** The Envoy stopped reading: nothing more is sent until it flushed what it holds (docs/xds.md §11). */
  stalled: boolean;
  /** Responses handed to gRPC and not yet flushed to the connection (at most 4), and their bytes. */
  unflushed: { responses: number; bytes: number };
  userAgent: string;
  /** Keyed by type URL. */
  types: Record<string, TypeDebug>;
}

export interface FleetDebug {
  fleet: string;
  streams: number;
  /** Per type URL: SotW version and resource count. */
  types: Record<string, { version: string; resources: number }>;
}

export interface XdsDebugState {
  time: string;
  streams: StreamDebug[];
  fleets: FleetDebug[];
  /** Per fleet with rejected resources: which Envoys rejected what (rejections.ts). */
  rejections: FleetRejections[];
  cache: { fleets: number; entries: number; bytes: number };
  sendBudget: { limitBytes: number; inflightBytes: number; waitingStreams: number };
}

/**
 * Counts (stream, type) pairs per fleet and sync state, for the convoy_xds_type_states gauge; a
 * stream naming a fleet without a snapshot counts under "unknown" (invented names never become
 * series, as for convoy_xds_streams).
 */
export function typeStateCounts(
  state: Pick<XdsDebugState, 'streams' | 'fleets'>,
): { fleet: string; state: string; count: number }[] {
  const served = new Set(state.fleets.filter((f) => Object.keys(f.types).length > 0).map((f) => f.fleet));
  const counts = new Map<string, { fleet: string; state: string; count: number }>();
  for (const s of state.streams) {
    const fleet = served.has(s.fleet) ? s.fleet : 'unknown';
    for (const t of Object.values(s.types)) {
      const key = `${fleet}\0${t.state}`;
      const c = counts.get(key) ?? { fleet, state: t.state, count: 0 };
      c.count++;
      counts.set(key, c);
    }
  }
  return [...counts.values()];
}
