/**
 * The fleet page's data model (docs/operations.md §19): a pure function from what Convoy knows
 * (the Gateway API objects, the statuses it published, the expiry of the certificates listeners
 * serve, and the ADS server's per-Envoy bookkeeping) to one JSON document the page renders.
 *
 * It holds no secret: certificates appear only as an expiry time, never their content. It holds
 * no clock-dependent text either (ages are computed by the page), so two calls over the same
 * inputs give byte-identical JSON and the feed (feed.ts) sends an update only when something
 * changed.
 */
import { gatewaySpec, listenerSetSpec } from '../gateway/api';
import type { Listener, ParentGatewayReference } from '../gateway/api';
import { listenerQualifiedName } from '../model/names';
import type { Condition, ObjectStatus } from '../status/types';
import { objectKey, objectNamespace } from '../store/objects';
import type { KubeObject } from '../store/objects';
import { compareStrings } from '../util/compare';
import type { XdsDebugState } from '../xds/debug-state';
import { shortTypeName } from '../xds/sync-view';
import { conditionsHealth, worst, type Health } from './health';

export type { Health } from './health';

/** A certificate counts as expiring soon within this many milliseconds (30 days). */
export const EXPIRING_SOON_MS = 30 * 24 * 3600 * 1000;
/** How many of the latest NACKs the view lists. */
export const RECENT_NACKS_SHOWN = 50;

export interface ConditionView {
  type: string;
  status: string;
  reason: string;
  message: string;
  since?: string;
}

export interface OwnerRef {
  kind: 'Gateway' | 'ListenerSet';
  namespace: string;
  name: string;
}

export interface ListenerView {
  /** `Kind/ns/owner/listener`: the Envoy filter chain name of a TLS listener. */
  id: string;
  owner: OwnerRef;
  name: string;
  port: number;
  protocol: string;
  hostname?: string;
  attachedRoutes?: number;
  /** When its earliest served certificate expires (ISO time); absent without a certificate. */
  certificateNotAfter?: string;
  conditions: ConditionView[];
  health: Health;
}

export interface ListenerSetView {
  namespace: string;
  name: string;
  conditions: ConditionView[];
  health: Health;
}

export interface RouteParentView {
  kind: string;
  namespace: string;
  name: string;
  sectionName?: string;
  conditions: ConditionView[];
}

export interface RouteView {
  kind: string;
  namespace: string;
  name: string;
  hostnames: string[];
  /** The route's status entries for this Gateway or its ListenerSets. */
  parents: RouteParentView[];
  health: Health;
}

export interface TypeSyncView {
  /** CDS, EDS, LDS, RDS, SDS. */
  type: string;
  state: 'SYNCED' | 'STALE' | 'NOT SENT' | 'NACKED';
  /** When the state began (ISO time), when known. */
  since?: string;
  error?: string;
}

export interface EnvoyView {
  node: string;
  fleet: string;
  variant: string;
  connectedSince: string;
  held: boolean;
  stalled: boolean;
  types: TypeSyncView[];
  health: Health;
}

export interface GatewayView {
  namespace: string;
  name: string;
  /** `namespace/name`: Envoys name it in node.cluster. */
  fleet: string;
  className: string;
  conditions: ConditionView[];
  /** The Gateway's own listeners, then each ListenerSet's, in precedence order. */
  listeners: ListenerView[];
  listenerSets: ListenerSetView[];
  routes: RouteView[];
  envoys: EnvoyView[];
  health: Health;
}

export interface RejectionView {
  fleet: string;
  type: string;
  resource: string;
  version: string;
  nodes: string[];
  envoys: number;
  message: string;
}

export interface NackView {
  node: string;
  fleet: string;
  type: string;
  version: string;
  message: string;
  time: string;
  /** The Envoy still holds this rejection (its latest answer for the type is this NACK). */
  current: boolean;
}

export interface ExpiringCertificateView {
  listener: string;
  fleet?: string;
  notAfter: string;
  expired: boolean;
}

export interface FleetView {
  gateways: GatewayView[];
  /** Envoys naming a fleet no Gateway of Convoy's serves. */
  otherEnvoys: EnvoyView[];
  rejections: RejectionView[];
  recentNacks: NackView[];
  expiringCertificates: ExpiringCertificateView[];
}

export interface FleetViewInputs {
  gateways: readonly KubeObject[];
  listenerSets: readonly KubeObject[];
  routes: readonly KubeObject[];
  /** The statuses Convoy published (with Envoy rejections and validity warnings laid over). */
  statuses: readonly ObjectStatus[];
  /** Per listener qualified name, when its earliest certificate expires (ms since the epoch). */
  certificateExpiries: Iterable<{ listener: string; notAfter: number }>;
  xds: Pick<XdsDebugState, 'streams' | 'rejections'>;
  /** The clock, ms since the epoch: decides only which certificates are expiring soon. */
  now: number;
}

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function conditionsOf(v: unknown): ConditionView[] {
  if (!Array.isArray(v)) return [];
  const out: ConditionView[] = [];
  for (const c of v as Partial<Condition>[]) {
    if (!isRecord(c) || typeof c.type !== 'string') continue;
    const view: ConditionView = {
      type: c.type,
      status: String(c.status ?? 'Unknown'),
      reason: String(c.reason ?? ''),
      message: String(c.message ?? ''),
    };
    if (typeof c.lastTransitionTime === 'string') view.since = c.lastTransitionTime;
    out.push(view);
  }
  return out;
}

/** Builds the fleet page's document from Convoy's state; see the module comment. */
export function buildFleetView(input: FleetViewInputs): FleetView {
  const statuses = new Map(
    input.statuses.map((s) => [objectKey(s.kind, s.metadata.namespace ?? '', s.metadata.name), s]),
  );
  const expiries = new Map<string, number>();
  for (const e of input.certificateExpiries) expiries.set(e.listener, e.notAfter);
  const envoys = envoysByFleet(input.xds.streams);

  const gateways: GatewayView[] = [];
  const listenerFleet = new Map<string, string>();
  for (const gw of [...input.gateways].sort(byNamespaceName)) {
    const namespace = objectNamespace(gw);
    const status = statuses.get(objectKey('Gateway', namespace, gw.metadata.name));
    // Only Gateways Convoy owns have a status from it.
    if (!status) continue;
    const fleet = `${namespace}/${gw.metadata.name}`;
    const sets = input.listenerSets
      .filter((s) =>
        namesGateway(listenerSetSpec(s)?.parentRef, objectNamespace(s), namespace, gw.metadata.name),
      )
      .sort(byPrecedence);
    const listeners = ownerListeners(
      { kind: 'Gateway', namespace, name: gw.metadata.name },
      gatewaySpec(gw).listeners,
      status,
      expiries,
      input.now,
    );
    const listenerSets: ListenerSetView[] = [];
    for (const set of sets) {
      const owner: OwnerRef = {
        kind: 'ListenerSet',
        namespace: objectNamespace(set),
        name: set.metadata.name,
      };
      const setStatus = statuses.get(objectKey(owner.kind, owner.namespace, owner.name));
      const conditions = conditionsOf(setStatus?.status.conditions);
      listenerSets.push({ ...ownerName(owner), conditions, health: conditionsHealth(conditions) });
      listeners.push(
        ...ownerListeners(owner, listenerSetSpec(set)?.listeners, setStatus, expiries, input.now),
      );
    }
    for (const l of listeners) listenerFleet.set(l.id, fleet);
    const parentKeys = new Set([
      objectKey('Gateway', namespace, gw.metadata.name),
      ...listenerSets.map((s) => objectKey('ListenerSet', s.namespace, s.name)),
    ]);
    const routes = routesOf(input.routes, statuses, parentKeys);
    const conditions = conditionsOf(status.status.conditions);
    const fleetEnvoys = envoys.get(fleet) ?? [];
    envoys.delete(fleet);
    gateways.push({
      namespace,
      name: gw.metadata.name,
      fleet,
      className: gatewaySpec(gw).gatewayClassName ?? '',
      conditions,
      listeners,
      listenerSets,
      routes,
      envoys: fleetEnvoys,
      health: worst([
        conditionsHealth(conditions),
        ...listeners.map((l) => l.health),
        ...listenerSets.map((s) => s.health),
        ...routes.map((r) => r.health),
        ...fleetEnvoys.map((e) => e.health),
      ]),
    });
  }
  return {
    gateways,
    otherEnvoys: [...envoys.values()].flat(),
    rejections: rejectionsOf(input.xds.rejections),
    recentNacks: recentNacks(input.xds.streams),
    expiringCertificates: expiring(expiries, listenerFleet, input.now),
  };
}

function ownerName(o: OwnerRef): { namespace: string; name: string } {
  return { namespace: o.namespace, name: o.name };
}

function byNamespaceName(a: KubeObject, b: KubeObject): number {
  return (
    compareStrings(objectNamespace(a), objectNamespace(b)) || compareStrings(a.metadata.name, b.metadata.name)
  );
}

/** ListenerSets in Gateway API precedence: oldest first, then by namespace/name. */
function byPrecedence(a: KubeObject, b: KubeObject): number {
  const ca = String(a.metadata.creationTimestamp ?? '');
  const cb = String(b.metadata.creationTimestamp ?? '');
  return compareStrings(ca, cb) || byNamespaceName(a, b);
}

function namesGateway(
  ref: ParentGatewayReference | undefined,
  setNamespace: string,
  namespace: string,
  name: string,
): boolean {
  if (!ref || (ref.kind ?? 'Gateway') !== 'Gateway') return false;
  return ref.name === name && (ref.namespace ?? setNamespace) === namespace;
}

function ownerListeners(
  owner: OwnerRef,
  declared: readonly Listener[] | undefined,
  status: ObjectStatus | undefined,
  expiries: ReadonlyMap<string, number>,
  now: number,
): ListenerView[] {
  const entries = Array.isArray(status?.status.listeners) ? (status.status.listeners as unknown[]) : [];
  const byName = new Map<string, Json>();
  for (const e of entries) if (isRecord(e) && typeof e.name === 'string') byName.set(e.name, e);
  const out: ListenerView[] = [];
  for (const l of Array.isArray(declared) ? declared : []) {
    if (!isRecord(l) || typeof l.name !== 'string') continue;
    const id = listenerQualifiedName(owner, l.name);
    const entry = byName.get(l.name);
    const conditions = conditionsOf(entry?.conditions);
    const view: ListenerView = {
      id,
      owner,
      name: l.name,
      port: typeof l.port === 'number' ? l.port : 0,
      protocol: String(l.protocol ?? ''),
      conditions,
      health: entry ? conditionsHealth(conditions) : 'unknown',
    };
    if (typeof l.hostname === 'string') view.hostname = l.hostname;
    if (typeof entry?.attachedRoutes === 'number') view.attachedRoutes = entry.attachedRoutes;
    const notAfter = expiries.get(id);
    if (notAfter !== undefined) {
      view.certificateNotAfter = new Date(notAfter).toISOString();
      if (notAfter - now < EXPIRING_SOON_MS) view.health = worst([view.health, 'warning']);
    }
    out.push(view);
  }
  return out;
}

function routesOf(
  routes: readonly KubeObject[],
  statuses: ReadonlyMap<string, ObjectStatus>,
  parentKeys: ReadonlySet<string>,
): RouteView[] {
  const out: RouteView[] = [];
  for (const route of [...routes].sort((a, b) => compareStrings(a.kind, b.kind) || byNamespaceName(a, b))) {
    const namespace = objectNamespace(route);
    const status = statuses.get(objectKey(route.kind, namespace, route.metadata.name));
    const entries = Array.isArray(status?.status.parents) ? (status.status.parents as unknown[]) : [];
    const parents: RouteParentView[] = [];
    for (const e of entries) {
      if (!isRecord(e) || !isRecord(e.parentRef)) continue;
      const ref = e.parentRef;
      const kind = typeof ref.kind === 'string' && ref.kind ? ref.kind : 'Gateway';
      const parent: RouteParentView = {
        kind,
        namespace: typeof ref.namespace === 'string' && ref.namespace ? ref.namespace : namespace,
        name: String(ref.name),
        conditions: conditionsOf(e.conditions),
      };
      if (!parentKeys.has(objectKey(kind, parent.namespace, parent.name))) continue;
      if (typeof ref.sectionName === 'string') parent.sectionName = ref.sectionName;
      parents.push(parent);
    }
    if (parents.length === 0) continue;
    const spec = isRecord(route.spec) ? route.spec : {};
    const hostnames = Array.isArray(spec.hostnames)
      ? spec.hostnames.filter((h) => typeof h === 'string')
      : [];
    out.push({
      kind: route.kind,
      namespace,
      name: route.metadata.name,
      hostnames,
      parents,
      health: worst(parents.map((p) => conditionsHealth(p.conditions))),
    });
  }
  return out;
}

const STATE: Record<string, TypeSyncView['state']> = {
  synced: 'SYNCED',
  stale: 'STALE',
  not_sent: 'NOT SENT',
  nacked: 'NACKED',
};

/** Connected Envoys by the fleet they name, each with its per-type sync state. */
function envoysByFleet(streams: XdsDebugState['streams']): Map<string, EnvoyView[]> {
  const out = new Map<string, EnvoyView[]>();
  const sorted = [...streams].sort(
    (a, b) => compareStrings(a.fleet, b.fleet) || compareStrings(a.nodeId, b.nodeId) || a.id - b.id,
  );
  for (const s of sorted) {
    const types: TypeSyncView[] = Object.entries(s.types)
      .map(([url, t]) => {
        const view: TypeSyncView = { type: shortTypeName(url), state: STATE[t.state] ?? 'STALE' };
        const since =
          t.state === 'nacked' ? t.lastNack?.time : t.state === 'synced' ? t.ackedTime : t.sent?.time;
        if (since) view.since = since;
        if (t.state === 'nacked' && t.lastNack) view.error = t.lastNack.message;
        return view;
      })
      .sort((a, b) => compareStrings(a.type, b.type));
    const health: Health =
      types.some((t) => t.state === 'NACKED') || s.stalled
        ? 'error'
        : s.held || types.some((t) => t.state !== 'SYNCED')
          ? 'warning'
          : 'ok';
    const view: EnvoyView = {
      node: s.nodeId,
      fleet: s.fleet,
      variant: s.variant,
      connectedSince: s.connectedSince,
      held: s.held,
      stalled: s.stalled,
      types,
      health,
    };
    out.set(s.fleet, [...(out.get(s.fleet) ?? []), view]);
  }
  return out;
}

function rejectionsOf(fleets: XdsDebugState['rejections']): RejectionView[] {
  return fleets.flatMap((f) =>
    f.resources.map((r) => ({
      fleet: f.fleet,
      type: shortTypeName(r.typeUrl),
      resource: r.name,
      version: r.version,
      nodes: r.nodes,
      envoys: f.envoys,
      message: r.message,
    })),
  );
}

/** The latest NACK of each type of each connected Envoy, newest first. */
function recentNacks(streams: XdsDebugState['streams']): NackView[] {
  const out: NackView[] = [];
  for (const s of streams) {
    for (const [url, t] of Object.entries(s.types)) {
      if (!t.lastNack) continue;
      out.push({
        node: s.nodeId,
        fleet: s.fleet,
        type: shortTypeName(url),
        version: t.lastNack.version,
        message: t.lastNack.message,
        time: t.lastNack.time,
        current: t.state === 'nacked',
      });
    }
  }
  out.sort(
    (a, b) =>
      compareStrings(b.time, a.time) ||
      compareStrings(a.fleet, b.fleet) ||
      compareStrings(a.node, b.node) ||
      compareStrings(a.type, b.type),
  );
  return out.slice(0, RECENT_NACKS_SHOWN);
}

function expiring(
  expiries: ReadonlyMap<string, number>,
  listenerFleet: ReadonlyMap<string, string>,
  now: number,
): ExpiringCertificateView[] {
  return [...expiries]
    .filter(([, notAfter]) => notAfter - now < EXPIRING_SOON_MS)
    .sort(([a, x], [b, y]) => x - y || compareStrings(a, b))
    .map(([listener, notAfter]) => {
      const view: ExpiringCertificateView = {
        listener,
        notAfter: new Date(notAfter).toISOString(),
        expired: notAfter < now,
      };
      const fleet = listenerFleet.get(listener);
      if (fleet) view.fleet = fleet;
      return view;
    });
}
