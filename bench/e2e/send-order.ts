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
  connectedSince: string;
  stalled: boolean;
  unflushed: { responses: number; bytes: number };
  types: Record<
    string,
    { sent?: { time: string; version: string }; ackedTime?: string; ackedVersion?: string }
  >;
}

/** One stream's state for a type: whether its last send is ACKed and what it has not flushed. */
export interface StreamState {
  connectedSince: string;
  stalled: boolean;
  unflushedBytes: number;
  /** The type's last send is ACKed (false: a response of it is still unanswered). */
  acked: boolean;
}

/** The state of node `node`'s stream for `typeUrl` (null when it has none). */
export async function streamState(
  convoy: ConvoyProcess,
  typeUrl: string,
  node: string,
): Promise<StreamState | null> {
  const r = await convoy.get('/debug/xds');
  if (r.status !== 200) return null;
  const s = (JSON.parse(r.body) as { streams: DebugStream[] }).streams.find((x) => x.nodeId === node);
  if (!s) return null;
  const t = s.types[typeUrl];
  return {
    connectedSince: s.connectedSince,
    stalled: s.stalled,
    unflushedBytes: s.unflushed.bytes,
    acked: !t?.sent || t.ackedVersion === t.sent.version,
  };
}

/**
 * Returns the send order of `typeUrl` over Convoy's attached streams, relative to wall-clock
 * `from` (ms); `realNode` is the real Envoy's node id. Only streams that were sent the type since
 * `since` (ms before `from`: the change's start) count (a stream sent nothing for this change
 * keeps an older time).
 */
export async function sendOrder(
  convoy: ConvoyProcess,
  typeUrl: string,
  from: number,
  since: number,
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
    .filter((x) => x.sent >= since - from)
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
