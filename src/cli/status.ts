import { renderTable } from '../xds/sync-view';
import { DEFAULT_ADMIN_SERVER_ADDRESS } from '../observability/admin-server';
import { parseHostPort } from '../util/host-port';
import { ConditionType } from '../status/conditions';
import { defineCommand, parseCommand } from './args';
import { formatOutput, outputOption } from './output';

/**
 * `convoy status` and `convoy proxy-status`: read-only views over a running Convoy's admin
 * endpoints (GET /status, /status/problems, /debug/xds). They work the same in file and
 * Kubernetes mode, with nothing but HTTP to the admin address.
 */

const ADMIN_OPTION = {
  type: 'string',
  valueName: 'HOST:PORT',
  description: "Convoy's admin address.",
  default: DEFAULT_ADMIN_SERVER_ADDRESS,
} as const;

export const statusSpec = defineCommand({
  name: 'status',
  summary: 'show the Gateway API status Convoy computed: conditions per object, listener and route parent',
  options: {
    'admin-address': ADMIN_OPTION,
    output: outputOption('table'),
    namespace: {
      type: 'string',
      short: 'n',
      valueName: 'NS',
      description: 'Only objects in this namespace.',
    },
    kind: { type: 'string', valueName: 'KIND', description: 'Only objects of this kind (e.g. HTTPRoute).' },
  },
  details: `Exit status: 0 with the statuses (healthy or not), 1 when Convoy's admin server cannot be read,
2 for a bad flag.

Examples:
  convoy status
  convoy status -n team-a --kind HTTPRoute -o yaml
  CONVOY_ADMIN_TOKEN=... convoy status --admin-address 10.0.0.5:9090`,
});

export interface StatusObject {
  apiVersion?: string;
  kind: string;
  metadata: { namespace?: string; name: string; generation?: number };
  status?: Record<string, unknown>;
}

interface Cond {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

/** Conditions whose True status is the unhealthy one. */
const NEGATIVE_POLARITY = new Set([
  'Conflicted',
  'OverlappingTLSConfig',
  'PartiallyInvalid',
  'Degraded',
  ConditionType.EnvoyRejected,
]);
const PREFERRED_COLUMNS = ['Accepted', 'Programmed', 'ResolvedRefs'];

function conditionsOf(v: unknown): Cond[] {
  if (!Array.isArray(v)) return [];
  return v.filter(
    (c): c is Cond =>
      typeof c === 'object' && c !== null && typeof c.type === 'string' && typeof c.status === 'string',
  );
}

function isHealthy(c: Cond): boolean {
  return NEGATIVE_POLARITY.has(c.type) ? c.status === 'False' : c.status === 'True';
}

function cell(c: Cond | undefined, generation: number | undefined): string {
  if (!c) return '-';
  let s = c.status;
  if (!isHealthy(c) && c.reason) s += ` (${c.reason})`;
  if (generation !== undefined && c.observedGeneration !== undefined && c.observedGeneration < generation) {
    s += ' [stale]';
  }
  return s;
}

function parentName(ref: unknown, routeNamespace: string | undefined): string {
  if (typeof ref !== 'object' || ref === null) return '?';
  const r = ref as Record<string, unknown>;
  const kind = typeof r.kind === 'string' ? r.kind : 'Gateway';
  const ns = typeof r.namespace === 'string' ? r.namespace : (routeNamespace ?? '');
  let s = `${kind}/${ns ? ns + '/' : ''}${String(r.name ?? '?')}`;
  if (typeof r.sectionName === 'string') s += `/${r.sectionName}`;
  if (typeof r.port === 'number') s += `:${r.port}`;
  return s;
}

interface Row {
  kind: string;
  namespace: string;
  name: string;
  sub: string;
  generation?: number;
  conditions: Cond[];
  extra?: string;
}

function rowsOf(obj: StatusObject): Row[] {
  const ns = obj.metadata.namespace;
  const base = {
    kind: obj.kind,
    namespace: ns ?? '-',
    name: obj.metadata.name,
    generation: obj.metadata.generation,
  };
  const status = obj.status ?? {};
  const rows: Row[] = [];
  const parents = status.parents;
  if (Array.isArray(parents)) {
    // Routes (and policies): one row per parent they tried to attach to.
    if (parents.length === 0) rows.push({ ...base, sub: '(no parents)', conditions: [] });
    for (const p of parents) {
      const pr = (p ?? {}) as Record<string, unknown>;
      rows.push({ ...base, sub: parentName(pr.parentRef, ns), conditions: conditionsOf(pr.conditions) });
    }
    return rows;
  }
  rows.push({ ...base, sub: '', conditions: conditionsOf(status.conditions) });
  if (Array.isArray(status.listeners)) {
    // Gateways and ListenerSets: most debugging is per listener (docs/operations.md §4).
    for (const l of status.listeners) {
      const lr = (l ?? {}) as Record<string, unknown>;
      const attached = typeof lr.attachedRoutes === 'number' ? `routes: ${lr.attachedRoutes}` : undefined;
      rows.push({
        ...base,
        sub: `listener ${String(lr.name ?? '?')}`,
        conditions: conditionsOf(lr.conditions),
        extra: attached,
      });
    }
  }
  return rows;
}

/** Renders statuses as a table plus a list of unhealthy conditions with their messages. */
export function renderStatusTable(objects: StatusObject[]): string {
  if (objects.length === 0) return 'No objects.\n';
  const sorted = [...objects].sort(
    (a, b) =>
      kindRank(a.kind) - kindRank(b.kind) ||
      a.kind.localeCompare(b.kind) ||
      (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') ||
      a.metadata.name.localeCompare(b.metadata.name),
  );
  const rows = sorted.flatMap(rowsOf);
  const seen = new Set<string>();
  for (const r of rows) for (const c of r.conditions) seen.add(c.type);
  const columns = [
    ...PREFERRED_COLUMNS.filter((c) => seen.has(c)),
    ...[...seen].filter((c) => !PREFERRED_COLUMNS.includes(c)).sort(),
  ];
  const header = [
    'KIND',
    'NAMESPACE',
    'NAME',
    'LISTENER/PARENT',
    ...columns.map((c) => c.toUpperCase()),
    'INFO',
  ];
  const body = rows.map((r) => {
    const byType = new Map(r.conditions.map((c) => [c.type, c]));
    return [
      r.kind,
      r.namespace,
      r.name,
      r.sub || '-',
      ...columns.map((c) => cell(byType.get(c), r.generation)),
      r.extra ?? '',
    ];
  });
  let text = renderTable(header, body);
  const problems = rows.flatMap((r) => r.conditions.filter((c) => !isHealthy(c)).map((c) => ({ r, c })));
  if (problems.length > 0) {
    text += '\nProblems:\n';
    for (const { r, c } of problems) {
      const where = `${r.kind} ${r.namespace === '-' ? '' : r.namespace + '/'}${r.name}${r.sub ? ` ${r.sub}` : ''}`;
      text += `  ${where}: ${c.type}=${c.status} ${c.reason ?? ''}${c.message ? `: ${c.message}` : ''}\n`;
    }
  }
  return text;
}

/** True when any object, listener or route parent has an unhealthy condition (`convoy translate`'s exit status). */
export function hasUnhealthyCondition(objects: StatusObject[]): boolean {
  return objects.flatMap(rowsOf).some((r) => r.conditions.some((c) => !isHealthy(c)));
}

const KIND_ORDER = ['GatewayClass', 'Gateway', 'ListenerSet', 'XListenerSet'];
function kindRank(kind: string): number {
  const i = KIND_ORDER.indexOf(kind);
  return i === -1 ? KIND_ORDER.length : i;
}

/** Renders file problems (parse or schema errors) served at /status/problems. */
export function renderProblems(problems: unknown): string {
  if (!Array.isArray(problems) || problems.length === 0) return '';
  let text = '\nInput problems:\n';
  for (const p of problems) {
    if (typeof p === 'string') {
      text += `  ${p}\n`;
      continue;
    }
    const o = (p ?? {}) as Record<string, unknown>;
    const where = [o.file ?? o.path ?? o.source, o.line].filter((x) => x !== undefined).join(':');
    const obj = o.object ?? o.ref ?? o.name;
    const msg = o.message ?? o.error ?? JSON.stringify(o);
    text += `  ${where ? where + ': ' : ''}${typeof obj === 'string' ? obj + ': ' : ''}${String(msg)}\n`;
  }
  return text;
}

/** GET http://<admin>/<path>; throws an error naming the address when Convoy is not there. */
export async function fetchAdmin(
  adminAddress: string,
  path: string,
): Promise<{ status: number; body: string }> {
  const hp = parseHostPort(adminAddress, 'admin-address');
  const host = hp.host.includes(':') ? `[${hp.host}]` : hp.host;
  const url = `http://${host}:${hp.port}${path}`;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(10_000), headers: adminHeaders() });
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    throw new Error(
      `cannot reach Convoy's admin server at ${adminAddress} (${code}); is "convoy serve" running?`,
      {
        cause: err,
      },
    );
  }
  return { status: res.status, body: await res.text() };
}

function adminHeaders(): Record<string, string> {
  const token = process.env.CONVOY_ADMIN_TOKEN;
  return token ? { authorization: `Bearer ${token}` } : {};
}

export async function statusCommand(argv: string[]): Promise<void> {
  const parsed = parseCommand(statusSpec, argv);
  if (!parsed) return;
  const v = parsed.values;
  const res = await fetchAdmin(v['admin-address'], '/status');
  if (res.status !== 200) throw new Error(`GET /status answered ${res.status}: ${res.body.trim()}`);
  let objects: unknown;
  try {
    objects = JSON.parse(res.body);
  } catch {
    throw new Error('GET /status did not return JSON');
  }
  if (!Array.isArray(objects)) throw new Error('GET /status did not return a JSON array');
  const filtered = (objects as StatusObject[]).filter(
    (o) =>
      (v.namespace === undefined || o.metadata?.namespace === v.namespace) &&
      (v.kind === undefined || o.kind?.toLowerCase() === v.kind.toLowerCase()),
  );
  if (v.output !== 'table') {
    process.stdout.write(formatOutput(v.output, filtered, () => ''));
    return;
  }
  let text = renderStatusTable(filtered);
  const problems = await fetchAdmin(v['admin-address'], '/status/problems').catch(() => undefined);
  if (problems?.status === 200) {
    try {
      text += renderProblems(JSON.parse(problems.body));
    } catch {
      // An unparsable problems list is not worth failing the status view for.
    }
  }
  process.stdout.write(text);
}
