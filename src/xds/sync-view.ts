import { TypeUrl } from '../envoy/resources';

/**
 * Renders the ADS server's per-stream bookkeeping (AdsServer.debugState()) as an operator view,
 * in the spirit of `istioctl proxy-status`: one row per connected Envoy, one column per xDS type,
 * each cell SYNCED / STALE / NOT SENT / NACKED with its age. Used by GET /debug/xds?format=text and
 * `convoy proxy-status`.
 *
 * The state rules are Istio's (docs/xds.md §14): NACKED if the latest answer for the type was
 * a NACK, NOT SENT if nothing was ever sent, SYNCED if the last sent response is acknowledged,
 * STALE otherwise. The normaliser accepts the server's own `state` when it reports one.
 */

export type SyncState = 'SYNCED' | 'STALE' | 'NOT SENT' | 'NACKED';

export interface TypeSync {
  /** Short name: CDS, EDS, LDS, RDS, SDS (or the type URL for anything else). */
  type: string;
  state: SyncState;
  /** Last version sent (SotW version_info or a summary for delta). */
  sentVersion?: string;
  /** Last version the Envoy acknowledged. */
  ackedVersion?: string;
  /** When the state began (ISO time or epoch ms). */
  since?: string | number;
  /** Envoy's error text for a NACK. */
  error?: string;
  /** Subscribed resource names, when the server reports them. */
  subscribed?: number;
}

export interface ProxySync {
  node: string;
  fleet: string;
  variant?: string;
  connectedAt?: string | number;
  address?: string;
  /** The fleet has no snapshot yet, so the stream is held unanswered. */
  held?: boolean;
  /** The Envoy stopped reading its stream (docs/xds.md §11). */
  stalled?: boolean;
  types: TypeSync[];
}

const SHORT: Record<string, string> = {
  [TypeUrl.Cluster]: 'CDS',
  [TypeUrl.Endpoint]: 'EDS',
  [TypeUrl.Listener]: 'LDS',
  [TypeUrl.Route]: 'RDS',
  [TypeUrl.Secret]: 'SDS',
};
/** Column order in the table: the push order without SDS first, as operators read it. */
const COLUMN_ORDER = ['CDS', 'EDS', 'LDS', 'RDS', 'SDS'];

export function shortTypeName(typeUrl: string): string {
  if (SHORT[typeUrl]) return SHORT[typeUrl];
  const upper = typeUrl.toUpperCase();
  if (COLUMN_ORDER.includes(upper)) return upper;
  return typeUrl;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
function pick(o: Obj, ...keys: string[]): unknown {
  for (const k of keys) if (o[k] !== undefined && o[k] !== null) return o[k];
  return undefined;
}
function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return undefined;
}
function time(v: unknown): string | number | undefined {
  if (typeof v === 'string' || typeof v === 'number') return v;
  if (v instanceof Date) return v.toISOString();
  return undefined;
}

function normaliseState(v: unknown): SyncState | undefined {
  if (typeof v !== 'string') return undefined;
  const s = v.toUpperCase().replace(/[_-]/g, ' ');
  if (s === 'SYNCED' || s === 'STALE' || s === 'NOT SENT' || s === 'NACKED') return s;
  if (s === 'ERROR' || s === 'NACK' || s === 'REJECTED') return 'NACKED';
  if (s === 'ACKED' || s === 'ACK') return 'SYNCED';
  if (s === 'SENT' || s === 'PENDING') return 'STALE';
  if (s === 'NOTSENT' || s === 'NONE') return 'NOT SENT';
  return undefined;
}

function normaliseType(typeKey: string, raw: Obj): TypeSync {
  const type = shortTypeName(str(pick(raw, 'typeUrl', 'type_url', 'type')) ?? typeKey);
  const nack = pick(raw, 'lastNack', 'nack', 'lastNACK', 'rejected');
  const nackObj = isObj(nack) ? nack : undefined;
  const sentRaw = pick(raw, 'sent', 'lastSent');
  const sent = isObj(sentRaw) ? sentRaw : {};
  const sentNonce = str(pick(raw, 'lastSentNonce', 'sentNonce', 'nonce') ?? sent.nonce);
  const ackedNonce = str(pick(raw, 'lastAckedNonce', 'ackedNonce', 'ackNonce'));
  let sentVersion = str(pick(raw, 'lastSentVersion', 'sentVersion', 'version') ?? sent.version);
  let ackedVersion = str(pick(raw, 'lastAckedVersion', 'ackedVersion', 'ackVersion'));
  const nackNonce = nackObj ? str(pick(nackObj, 'nonce', 'responseNonce')) : undefined;
  let state = normaliseState(pick(raw, 'state', 'status'));
  if (!state) {
    if (nackObj && (nackNonce === undefined || nackNonce === sentNonce)) state = 'NACKED';
    else if (sentNonce === undefined && sentVersion === undefined) state = 'NOT SENT';
    else if (sentNonce !== undefined ? ackedNonce === sentNonce : ackedVersion === sentVersion)
      state = 'SYNCED';
    else state = 'STALE';
  }
  if (state === 'NACKED' && nackObj) {
    // Report the rejected version and the one the Envoy kept.
    sentVersion = str(nackObj.version) ?? sentVersion;
    ackedVersion = str(pick(nackObj, 'acceptedVersion', 'keptVersion')) ?? ackedVersion;
  }
  const out: TypeSync = { type, state };
  if (sentVersion !== undefined) out.sentVersion = sentVersion;
  if (ackedVersion !== undefined) out.ackedVersion = ackedVersion;
  const error = nackObj ? str(pick(nackObj, 'message', 'error', 'errorDetail')) : str(pick(raw, 'error'));
  if (error !== undefined && state === 'NACKED') out.error = error;
  let since: string | number | undefined;
  if (state === 'NACKED' && nackObj) since = time(pick(nackObj, 'time', 'at', 'receivedAt'));
  else if (state === 'SYNCED') since = time(pick(raw, 'ackedTime', 'lastAckAt', 'ackedAt', 'since'));
  else if (state === 'STALE') since = time(pick(raw, 'lastSentAt', 'sentAt', 'since') ?? sent.time);
  if (since !== undefined) out.since = since;
  const subs = pick(raw, 'subscribed', 'subscriptions', 'resourceNames', 'names');
  if (Array.isArray(subs)) out.subscribed = subs.length;
  else if (typeof subs === 'number') out.subscribed = subs;
  return out;
}

/** Accepts the debug state in the shapes an ADS server reasonably reports and normalises it. */
export function normaliseXdsDebug(state: unknown): ProxySync[] {
  let streams: unknown = state;
  if (isObj(state)) streams = pick(state, 'streams', 'proxies', 'connections', 'nodes') ?? [];
  if (isObj(streams)) streams = Object.entries(streams).map(([k, v]) => (isObj(v) ? { id: k, ...v } : v));
  if (!Array.isArray(streams)) return [];
  const rows: ProxySync[] = [];
  for (const s of streams) {
    if (!isObj(s)) continue;
    const nodeRaw = pick(s, 'node', 'nodeId', 'node_id', 'id');
    const node = isObj(nodeRaw) ? (str(nodeRaw.id) ?? '?') : (str(nodeRaw) ?? '?');
    const fleet =
      str(pick(s, 'fleet', 'cluster', 'group')) ?? (isObj(nodeRaw) ? str(nodeRaw.cluster) : undefined) ?? '?';
    const variantRaw = pick(s, 'variant', 'protocol', 'mode');
    const delta = pick(s, 'delta', 'isDelta');
    const variant = str(variantRaw) ?? (typeof delta === 'boolean' ? (delta ? 'delta' : 'sotw') : undefined);
    const typesRaw = pick(s, 'types', 'perType', 'resources', 'typeStates');
    const types: TypeSync[] = [];
    if (isObj(typesRaw)) {
      for (const [k, v] of Object.entries(typesRaw)) if (isObj(v)) types.push(normaliseType(k, v));
    } else if (Array.isArray(typesRaw)) {
      for (const v of typesRaw) if (isObj(v)) types.push(normaliseType('', v));
    }
    const row: ProxySync = { node, fleet, types };
    if (variant !== undefined) row.variant = variant;
    if (s.held === true) row.held = true;
    if (s.stalled === true) row.stalled = true;
    const connectedAt = time(pick(s, 'connectedSince', 'connectedAt', 'since', 'startedAt'));
    if (connectedAt !== undefined) row.connectedAt = connectedAt;
    const address = str(pick(s, 'peer', 'address', 'remoteAddress'));
    if (address !== undefined) row.address = address;
    rows.push(row);
  }
  rows.sort((a, b) => a.fleet.localeCompare(b.fleet) || a.node.localeCompare(b.node));
  return rows;
}

/** "3s", "4m", "2h", "5d" — Istio-style ages. */
export function formatAge(since: string | number | undefined, now: number): string | undefined {
  if (since === undefined) return undefined;
  const t = typeof since === 'number' ? since : Date.parse(since);
  if (!Number.isFinite(t)) return undefined;
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** Left-aligned columns separated by three spaces, like kubectl. */
export function renderTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('   ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

export function renderProxyStatus(proxies: ProxySync[], now: number = Date.now()): string {
  if (proxies.length === 0) return 'No Envoy is connected.\n';
  const seen = new Set<string>();
  for (const p of proxies) for (const t of p.types) seen.add(t.type);
  const columns = [
    ...COLUMN_ORDER.filter((c) => seen.has(c)),
    ...[...seen].filter((c) => !COLUMN_ORDER.includes(c)),
  ];
  const rows = proxies.map((p) => {
    const byType = new Map(p.types.map((t) => [t.type, t]));
    const cells = columns.map((c) => {
      const t = byType.get(c);
      if (!t) return '-';
      const age = formatAge(t.since, now);
      return age ? `${t.state} (${age})` : t.state;
    });
    const notes = `${p.held ? ' (held: no snapshot)' : ''}${p.stalled ? ' (stalled: not reading)' : ''}`;
    return [p.node, p.fleet, `${p.variant ?? '-'}${notes}`, ...cells];
  });
  let text = renderTable(['NODE', 'FLEET', 'VARIANT', ...columns], rows);
  const nacks = proxies.flatMap((p) =>
    p.types.filter((t) => t.state === 'NACKED').map((t) => ({ node: p.node, fleet: p.fleet, t })),
  );
  if (nacks.length > 0) {
    text += '\nRejected (NACK):\n';
    for (const { node, fleet, t } of nacks) {
      const version = t.sentVersion ? ` version ${t.sentVersion}` : '';
      const kept = t.ackedVersion ? ` (keeps ${t.ackedVersion})` : '';
      text += `  ${node} [${fleet}] ${t.type}${version}${kept}: ${oneLine(t.error ?? 'no message')}\n`;
    }
  }
  return text;
}

function oneLine(s: string, max = 400): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}

/** The text served by /debug/xds?format=text. */
export function renderXdsDebugText(state: unknown, now: number = Date.now()): string {
  return renderProxyStatus(normaliseXdsDebug(state), now);
}
