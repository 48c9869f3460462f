/**
 * Operator views over decoded CSDS answers (docs/xds.md §15): `convoy proxy-status` groups the
 * connected Envoys by Gateway and sums each xDS type up (csds-state.ts summarizeType), `convoy
 * config-dump` lists what one Envoy received with secrets redacted. Pure: no I/O.
 */
import { TypeUrl } from '../envoy/resources';
import { compareStrings } from '../util/compare';
import { summarizeType } from './csds-state';
import type { ConfigStatus, TypeSummary } from './csds-state';
import { redactSecrets } from './redact';
import { renderTable, shortTypeName } from './sync-view';

/** A decoded envoy.service.status.v3.ClientConfig (proto JSON, snake_case). */
export interface ClientConfigJson {
  node?: { id?: string; cluster?: string; user_agent_name?: string; user_agent_version?: string };
  generic_xds_configs?: GenericXdsConfigJson[];
}

export interface ProtoTimestamp {
  seconds?: string | number;
  nanos?: number;
}

export interface GenericXdsConfigJson {
  type_url?: string;
  name?: string;
  version_info?: string;
  /** The resource, decoded: `@type` plus its fields. */
  xds_config?: Record<string, unknown>;
  last_updated?: ProtoTimestamp;
  config_status?: string;
  client_status?: string;
  error_state?: { details?: string; version_info?: string; last_update_attempt?: ProtoTimestamp };
}

/** ISO time of a decoded proto Timestamp. */
export function timestampIso(t: ProtoTimestamp | undefined): string | undefined {
  if (!t) return undefined;
  const ms = Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/** Column order: the push order without SDS first, as operators read it. */
const TYPE_ORDER = ['CDS', 'EDS', 'LDS', 'RDS', 'SDS'];

export interface RejectedResource {
  type: string;
  name: string;
  /** The version Envoy rejected. */
  version: string;
  message: string;
  since?: string;
}

export interface EnvoyStatus {
  node: string;
  userAgent: string;
  /** Per short type name: the summary and how many resources of interest it has. */
  types: Record<string, { state: TypeSummary; resources: number; notSynced: number }>;
  rejected: RejectedResource[];
}

export interface GatewayProxyStatus {
  gateway: string;
  envoys: EnvoyStatus[];
}

const CONFIG_STATUSES: ReadonlySet<string> = new Set(['SYNCED', 'NOT_SENT', 'STALE', 'ERROR']);

/** Groups the CSDS answer by Gateway (node.cluster) and sums up each Envoy's types; sorted. */
export function proxyStatusReport(configs: readonly ClientConfigJson[]): GatewayProxyStatus[] {
  const byGateway = new Map<string, EnvoyStatus[]>();
  for (const c of configs) {
    const perType = new Map<string, { config: ConfigStatus }[]>();
    const rejected: RejectedResource[] = [];
    for (const g of c.generic_xds_configs ?? []) {
      const type = shortTypeName(g.type_url ?? '');
      const config = CONFIG_STATUSES.has(g.config_status ?? '')
        ? (g.config_status as ConfigStatus)
        : 'SYNCED';
      perType.set(type, [...(perType.get(type) ?? []), { config }]);
      if (g.client_status === 'NACKED') {
        const since = timestampIso(g.error_state?.last_update_attempt);
        rejected.push({
          type,
          name: g.name ?? '',
          version: g.error_state?.version_info ?? '',
          message: g.error_state?.details ?? '',
          ...(since ? { since } : {}),
        });
      }
    }
    const types: EnvoyStatus['types'] = {};
    for (const type of sortTypes([...perType.keys()])) {
      const list = perType.get(type)!;
      types[type] = {
        state: summarizeType(list),
        resources: list.length,
        notSynced: list.filter((r) => r.config !== 'SYNCED').length,
      };
    }
    const gateway = c.node?.cluster ?? '';
    const userAgent = [c.node?.user_agent_name, c.node?.user_agent_version].filter(Boolean).join('/');
    byGateway.set(gateway, [
      ...(byGateway.get(gateway) ?? []),
      { node: c.node?.id ?? '', userAgent, types, rejected },
    ]);
  }
  return [...byGateway.entries()]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([gateway, envoys]) => ({ gateway, envoys: envoys.sort((a, b) => compareStrings(a.node, b.node)) }));
}

function sortTypes(types: string[]): string[] {
  const rank = (t: string) => (TYPE_ORDER.includes(t) ? TYPE_ORDER.indexOf(t) : TYPE_ORDER.length);
  return types.sort((a, b) => rank(a) - rank(b) || compareStrings(a, b));
}

/** `synced (3)`, `stale (1 of 3)`, `rejected (1 of 3)`. */
function cell(t: { state: TypeSummary; resources: number; notSynced: number } | undefined): string {
  if (!t) return '-';
  if (t.state === 'synced') return `synced (${t.resources})`;
  return `${t.state} (${t.notSynced} of ${t.resources})`;
}

/** The `convoy proxy-status` table: one block per Gateway, then every rejected resource. */
export function renderProxyStatusReport(report: readonly GatewayProxyStatus[]): string {
  if (report.length === 0) return 'No Envoy is connected.\n';
  const blocks: string[] = [];
  for (const g of report) {
    const columns = sortTypes([...new Set(g.envoys.flatMap((e) => Object.keys(e.types)))]);
    const rows = g.envoys.map((e) => [e.node, e.userAgent || '-', ...columns.map((c) => cell(e.types[c]))]);
    const n = g.envoys.length;
    blocks.push(
      `Gateway ${g.gateway || '(none)'}: ${n} Envoy${n === 1 ? '' : 's'}\n` +
        renderTable(['NODE', 'AGENT', ...columns], rows).replace(/^(?=.)/gm, '  '),
    );
  }
  let text = blocks.join('\n');
  const rejected = report.flatMap((g) => g.envoys.flatMap((e) => e.rejected.map((r) => ({ g, e, r }))));
  if (rejected.length > 0) {
    text += '\nRejected:\n';
    for (const { g, e, r } of rejected)
      text += `  ${g.gateway} ${e.node} ${r.type} ${r.name} (version ${r.version || '?'}): ${oneLine(r.message)}\n`;
  }
  return text;
}

function oneLine(s: string, max = 400): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}

/** Short names and plural words operators type for `--type`, by type URL. */
const TYPE_ALIASES: Record<string, string> = {
  cds: TypeUrl.Cluster,
  cluster: TypeUrl.Cluster,
  clusters: TypeUrl.Cluster,
  eds: TypeUrl.Endpoint,
  endpoint: TypeUrl.Endpoint,
  endpoints: TypeUrl.Endpoint,
  lds: TypeUrl.Listener,
  listener: TypeUrl.Listener,
  listeners: TypeUrl.Listener,
  rds: TypeUrl.Route,
  route: TypeUrl.Route,
  routes: TypeUrl.Route,
  sds: TypeUrl.Secret,
  secret: TypeUrl.Secret,
  secrets: TypeUrl.Secret,
};

/** The type URL `--type` names (CDS, clusters, or a type URL), or undefined when it names none. */
export function typeUrlOf(text: string): string | undefined {
  const alias = TYPE_ALIASES[text.toLowerCase()];
  if (alias) return alias;
  return (Object.values(TypeUrl) as string[]).includes(text) ? text : undefined;
}

export interface DumpedResource {
  type: string;
  name: string;
  version: string;
  clientStatus: string;
  configStatus: string;
  lastUpdated?: string;
  error?: { version: string; message: string; at?: string };
  /** The resource as the Envoy received it, secrets redacted; absent when Convoy no longer has it. */
  resource?: Record<string, unknown>;
}

/** One Envoy's resources (optionally of one type URL), with secrets redacted, in answer order. */
export function configDump(config: ClientConfigJson, typeUrl?: string): DumpedResource[] {
  return (config.generic_xds_configs ?? [])
    .filter((g) => typeUrl === undefined || g.type_url === typeUrl)
    .map((g) => {
      const lastUpdated = timestampIso(g.last_updated);
      const at = timestampIso(g.error_state?.last_update_attempt);
      return {
        type: shortTypeName(g.type_url ?? ''),
        name: g.name ?? '',
        version: g.version_info ?? '',
        clientStatus: g.client_status ?? 'UNKNOWN',
        configStatus: g.config_status ?? 'UNKNOWN',
        ...(lastUpdated ? { lastUpdated } : {}),
        ...(g.error_state
          ? {
              error: {
                version: g.error_state.version_info ?? '',
                message: g.error_state.details ?? '',
                ...(at ? { at } : {}),
              },
            }
          : {}),
        ...(g.xds_config ? { resource: redactSecrets(g.xds_config) } : {}),
      };
    });
}

/** The table form of a config dump: one row per resource, no contents. */
export function renderConfigDump(node: string, resources: readonly DumpedResource[]): string {
  const rows = resources.map((r) => [
    r.type,
    r.name,
    r.version || '-',
    r.clientStatus,
    r.configStatus,
    r.error ? oneLine(r.error.message, 120) : '',
  ]);
  return `Envoy ${node}\n` + renderTable(['TYPE', 'NAME', 'VERSION', 'CLIENT', 'CONVOY', 'ERROR'], rows);
}
