/**
 * Reads, from Convoy's /debug/xds, when each stream was last sent and ACKed one type (the change's
 * resource), so a change's time after the snapshot can be split: the spread of the sends over the
 * fleet (the push's FIFO and the send budget, docs/xds.md §11), and where the real Envoy's stream
 * stood in it (bench/README.md "Kubernetes mode (session 18)").
 */
import type { ConvoyProcess } from '../../e2e/harness';

/** One type's sends over the streams, times in ms from `from` (wall clock). */
export interface SendOrder {
  streams: number;
  /** First, median and last stream's send of the type. */
  firstSentMs: number;
  medianSentMs: number;
  lastSentMs: number;
  /** The real Envoy's stream: its place in the send order (1 = first), its send and its ACK. */
  realRank: number | null;
  realSentMs: number | null;
  realAckedMs: number | null;
  /** Last ACK over the simulated streams. */
  lastAckedMs: number;
}

interface DebugStream {
  nodeId: string;
  types: Record<string, { sent?: { time: string }; ackedTime?: string }>;
}

/**
 * Returns the send order of `typeUrl` over Convoy's attached streams, relative to wall-clock
 * `from` (ms); `realNode` is the real Envoy's node id. Only streams that were sent the type since
 * `from` count (a stream sent nothing for this change keeps an older time).
 */
export async function sendOrder(
  convoy: ConvoyProcess,
  typeUrl: string,
  from: number,
  realNode: string,
): Promise<SendOrder | null> {
  const r = await convoy.get('/debug/xds');
  if (r.status !== 200) return null;
  const streams = (JSON.parse(r.body) as { streams: DebugStream[] }).streams;
  const rows = streams
    .map((s) => {
      const t = s.types[typeUrl];
      const sent = t?.sent ? Date.parse(t.sent.time) - from : NaN;
      const acked = t?.ackedTime ? Date.parse(t.ackedTime) - from : NaN;
      return { node: s.nodeId, sent, acked };
    })
    .filter((x) => x.sent >= 0)
    .sort((a, b) => a.sent - b.sent);
  if (rows.length === 0) return null;
  const at = rows.findIndex((x) => x.node === realNode);
  const real = at >= 0 ? rows[at] : undefined;
  const sims = rows.filter((x) => x.node !== realNode && x.acked >= 0);
  return {
    streams: rows.length,
    firstSentMs: rows[0]!.sent,
    medianSentMs: rows[Math.floor(rows.length / 2)]!.sent,
    lastSentMs: rows[rows.length - 1]!.sent,
    realRank: real ? at + 1 : null,
    realSentMs: real ? real.sent : null,
    realAckedMs: real && real.acked >= 0 ? real.acked : null,
    lastAckedMs: Math.max(...sims.map((x) => x.acked)),
  };
}
