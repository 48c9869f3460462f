/**
 * Resolves the Gateways Convoy owns: each Gateway's own listeners merged with those of the
 * ListenerSets it admits, conflicts detected over the merged list (conflicts.ts), each listener
 * validated (listener-validation.ts), and whether the Gateway and each ListenerSet is accepted.
 *
 * Everything Gateway and ListenerSet status reports is decided here and recorded on the resolved
 * objects (the Gateway's problem and addresses, each set's admission), so gateway-status.ts reads
 * only those.
 */
import type { KubeObject } from '../store/objects';
import { objectNamespace } from '../store/objects';
import type {
  BuildOptions,
  ListenerOwner,
  ListenerOwnerKind,
  ResolvedGateway,
  ResolvedGatewayClass,
  ResolvedListener,
  ResolvedListenerSet,
  StoreView,
} from './resolved';
import type { GatewayStatusAddress, Listener } from './api';
import { gatewaySpec, listenerSetSpec } from './api';
import { ConditionType, Reason } from '../status/conditions';
import { detectConflicts } from './conflicts';
import { resolveGatewayClasses } from './gatewayclass';
import type { GatewayInfrastructureResult } from './managed-gateway';
import { resolveBackendClientCertificate } from './backend-client-certificate';
import { managedAddresses, resolveGatewayInfrastructure } from './managed-gateway';
import {
  gatewayNotAccepted,
  markOverlappingTLS,
  notAllowedListener,
  tlsModeOf,
  validateListener,
  type CertificateState,
} from './listener-validation';
import { listenerSetAllowed, listenerSetsByParent } from './listenersets';
import { DEFAULT_MAX_RANGE_PORTS, ownerKey, portRangesByTarget, resolvePortRanges } from './port-ranges';
import { isSuperseded, isXListenerSet, recordedPort, unsupportedPortListener } from './xlistenersets';
import { assignDynamicPorts, type PortRequest } from './dynamic-ports';
import { listenerQualifiedName } from '../model/names';
import { resolveFrontendValidation } from './frontend-validation';
import type { BuildMemo } from './build-memo';
import { compareStrings } from '../util/compare';
import { fleetName } from '../model/names';
import type { ManagedFleetModel } from '../model/managed-fleet';
import { namespacedName } from '../store/objects';

/** Orders objects by "namespace/name". */
function compareObjects(a: KubeObject, b: KubeObject): number {
  const ka = namespacedName(objectNamespace(a), a.metadata.name);
  const kb = namespacedName(objectNamespace(b), b.metadata.name);
  return compareStrings(ka, kb);
}

/** Returns the Gateways of Convoy's classes (accepted or not), sorted by namespace/name; deleting ones are skipped. */
export function ownedGateways(view: StoreView, ownedClasses: readonly ResolvedGatewayClass[]): KubeObject[] {
  const classes = new Set(ownedClasses.map((c) => c.object.metadata.name));
  return view
    .list('Gateway')
    .filter((gw) => !gw.metadata.deletionTimestamp && classes.has(gatewaySpec(gw).gatewayClassName))
    .sort(compareObjects);
}

/**
 * Returns the reason the Gateway as a whole cannot be accepted, independent of its listeners: its
 * class is ours but not accepted, or its infrastructure (parameters, routability, static
 * addresses) cannot be provided; otherwise what resolution decided about its infrastructure.
 */
function gatewayProblem(
  view: StoreView,
  opts: BuildOptions,
  gw: KubeObject,
  acceptedClasses: Map<string, ResolvedGatewayClass>,
): GatewayInfrastructureResult {
  const spec = gatewaySpec(gw);
  const gc = acceptedClasses.get(spec.gatewayClassName);
  if (!gc) {
    return {
      problem: { reason: Reason.Invalid, message: `GatewayClass ${spec.gatewayClassName} is not accepted` },
    };
  }
  return resolveGatewayInfrastructure(view, gw, gc.parameters, opts.managedFleets ?? false);
}

/** Returns whether a Gateway is accepted, given its own resolved listeners. */
function gatewayAccepted(own: ResolvedListener[]): boolean {
  return own.some((l) => l.conditions.some((c) => c.type === ConditionType.Accepted && c.status === 'True'));
}

interface SetInfo {
  object: KubeObject;
  owner: ListenerOwner;
  allowed: boolean;
  /** An XListenerSet a ListenerSet of the same namespace/name supersedes (docs/gateway-api.md §29). */
  superseded: boolean;
  specs: Listener[];
}

/** One entry of a Gateway's merged listener list (docs/gateway-api.md §5). */
interface MergedListener {
  owner: ListenerOwner;
  spec: Listener;
  gen?: number;
  fromGateway: boolean;
  set?: number;
  /** An XListenerSet listener without a port that got none from the pool. */
  unplaced?: boolean;
}

/**
 * Gives the XListenerSet listeners of a merged list that declare no port (unset or 0) one from
 * the dynamic port pool, in precedence order (dynamic-ports.ts; docs/gateway-api.md §29): each
 * gets a copy of its spec with the port, or is marked unplaced when there is none to give. The
 * ports every other listener declares are never given.
 */
function placeDynamicPorts(merged: MergedListener[], sets: SetInfo[], opts: BuildOptions): void {
  const requests: PortRequest[] = [];
  const at: number[] = [];
  const taken = new Set<number>();
  merged.forEach((m, i) => {
    if (m.owner.kind !== 'XListenerSet' || m.spec.port > 0 || m.set === undefined) {
      taken.add(m.spec.port);
      return;
    }
    const recorded = recordedPort(sets[m.set].object, m.spec.name);
    requests.push({ identity: listenerQualifiedName(m.owner, m.spec.name), recorded });
    at.push(i);
  });
  if (requests.length === 0) return;
  assignDynamicPorts(requests, taken, opts.dynamicPorts).forEach((port, k) => {
    const m = merged[at[k]];
    if (port === undefined) m.unplaced = true;
    else m.spec = { ...m.spec, port };
  });
}

/**
 * Resolves one Gateway: merges its own listeners with those of its ListenerSets, detects conflicts
 * over the merged list, validates each listener, and records whether it and each set is accepted.
 */
function resolveGateway(
  view: StoreView,
  opts: BuildOptions,
  gw: KubeObject,
  setsByParent: Map<string, KubeObject[]>,
  acceptedClasses: Map<string, ResolvedGatewayClass>,
  certificates: CertificateState | undefined,
  rangesByTarget: Map<string, KubeObject[]>,
): ResolvedGateway {
  const ns = objectNamespace(gw);
  const gwOwner: ListenerOwner = { kind: 'Gateway', namespace: ns, name: gw.metadata.name };
  const ownSpecs = gatewaySpec(gw).listeners ?? [];
  const sets: SetInfo[] = (setsByParent.get(namespacedName(ns, gw.metadata.name)) ?? []).map((ls) => {
    const lsNs = objectNamespace(ls);
    const superseded = isXListenerSet(ls) && isSuperseded(view, ls);
    const kind: ListenerOwnerKind = isXListenerSet(ls) ? 'XListenerSet' : 'ListenerSet';
    return {
      object: ls,
      owner: { kind, namespace: lsNs, name: ls.metadata.name },
      allowed: !superseded && listenerSetAllowed(view, gw, lsNs),
      superseded,
      specs: listenerSetSpec(ls)?.listeners ?? [],
    };
  });

  // Merged list: Gateway listeners, then admitted sets' listeners in precedence order.
  const merged: MergedListener[] = [];
  for (const spec of ownSpecs)
    merged.push({ owner: gwOwner, spec, gen: gw.metadata.generation, fromGateway: true });
  sets.forEach((s, idx) => {
    if (!s.allowed) return;
    for (const spec of s.specs) {
      merged.push({ owner: s.owner, spec, gen: s.object.metadata.generation, fromGateway: false, set: idx });
    }
  });
  placeDynamicPorts(merged, sets, opts);
  // Listeners without a port take no part in conflicts: they serve nothing.
  const placed = merged.filter((m) => !m.unplaced);
  const placedConflicts = detectConflicts(
    placed.map((m) => ({
      port: m.spec.port,
      protocol: m.spec.protocol,
      hostname: m.spec.hostname,
      tlsMode: tlsModeOf(m.spec),
      fromGateway: m.fromGateway,
    })),
  );
  const frontend = resolveFrontendValidation(view, gw);
  const conflictOf = new Map(placed.map((m, k) => [m, placedConflicts[k]]));
  const policies = [gwOwner, ...sets.map((s) => s.owner)].flatMap(
    (o) => rangesByTarget.get(ownerKey(o)) ?? [],
  );
  const ranges = resolvePortRanges(
    placed.map((m) => ({
      owner: m.owner,
      name: m.spec.name,
      port: m.spec.port,
      conflicted: conflictOf.get(m) !== undefined,
    })),
    policies,
    opts.maxPortRangePorts ?? DEFAULT_MAX_RANGE_PORTS,
  );
  const rangeOf = new Map(
    placed.map((m, k) => [m, { conflict: ranges.conflicts[k], endPort: ranges.endPorts[k] }]),
  );
  const resolved = merged.map((m) => {
    if (m.unplaced)
      return unsupportedPortListener(opts, notAllowedListener(opts, m.owner, m.spec, m.gen), m.gen);
    const conflict = conflictOf.get(m);
    const range = rangeOf.get(m);
    const l = validateListener(
      view,
      opts,
      {
        owner: m.owner,
        spec: m.spec,
        generation: m.gen,
        conflict: conflict ?? (range?.conflict ? Reason.ProtocolConflict : undefined),
        ...(range?.conflict && !conflict ? { conflictMessage: range.conflict } : {}),
        frontend: frontend.forPort(m.spec.port),
      },
      certificates,
    );
    return range?.endPort === undefined ? l : { ...l, endPort: range.endPort };
  });

  markOverlappingTLS(resolved, opts);
  const infrastructure = gatewayProblem(view, opts, gw, acceptedClasses);
  const problem = infrastructure.problem;
  let own = resolved.slice(0, ownSpecs.length);
  const accepted = !problem && gatewayAccepted(own);
  if (!accepted) own = own.map((l) => gatewayNotAccepted(l, opts, gw.metadata.generation));
  const listeners: ResolvedListener[] = [...own];
  const bySet = new Map<number, ResolvedListener[]>();
  resolved.forEach((l, i) => {
    const set = merged[i].set;
    if (set === undefined) return;
    const list = bySet.get(set);
    if (list) list.push(l);
    else bySet.set(set, [l]);
  });
  const listenerSets: ResolvedListenerSet[] = sets.map((s, idx) => {
    const gen = s.object.metadata.generation;
    if (s.superseded)
      return { object: s.object, allowed: false, accepted: false, listeners: [], superseded: true };
    if (!s.allowed) {
      return {
        object: s.object,
        allowed: false,
        accepted: false,
        listeners: s.specs.map((spec) => notAllowedListener(opts, s.owner, spec, gen)),
      };
    }
    let setListeners = bySet.get(idx) ?? [];
    if (!accepted) setListeners = setListeners.map((l) => gatewayNotAccepted(l, opts, gen));
    listeners.push(...setListeners);
    return {
      object: s.object,
      allowed: true,
      accepted: accepted && setListeners.some((l) => l.ready),
      listeners: setListeners,
    };
  });

  return {
    object: gw,
    fleet: fleetName(ns, gw.metadata.name),
    accepted,
    ...(problem ? { problem } : {}),
    ...(frontend.insecureFallback ? { insecureFrontendValidation: true } : {}),
    ...managedFields(view, gw, infrastructure, opts),
    listeners,
    listenerSets,
    ...(ranges.ranges.length ? { portRanges: ranges.ranges } : {}),
    ...backendClientCertificateField(view, gw),
  };
}

/** Returns the resolved backend client certificate of a Gateway as a ResolvedGateway field. */
function backendClientCertificateField(
  view: StoreView,
  gw: KubeObject,
): Pick<ResolvedGateway, 'backendClientCertificate'> {
  const resolved = resolveBackendClientCertificate(view, gw);
  return resolved ? { backendClientCertificate: resolved } : {};
}

/** Returns the managed part of a resolved Gateway, or its addresses as an unmanaged one. */
function managedFields(
  view: StoreView,
  gw: KubeObject,
  infrastructure: GatewayInfrastructureResult,
  opts: BuildOptions,
): Pick<ResolvedGateway, 'addresses' | 'managed' | 'notProgrammed'> {
  const managed = infrastructure.managed;
  if (!managed || infrastructure.problem) return { addresses: gatewayAddresses(gw, view, opts) };
  if (managed.local) return { addresses: localAddresses(gw, view, opts, managed.local), managed };
  const { addresses, notProgrammed: unassigned } = managedAddresses(view, gw, managed);
  const notProgrammed = infrastructure.addressProblem ?? unassigned;
  return { addresses, managed, ...(notProgrammed ? { notProgrammed } : {}) };
}

/**
 * Returns a local fleet's status.addresses (docs/operations.md §14): those of its spec, else the
 * bind address of its parameters, else those of the flags (--gateway-address, else the bind address).
 */
export function localAddresses(
  gw: KubeObject,
  view: StoreView,
  opts: BuildOptions,
  local: NonNullable<ManagedFleetModel['local']>,
): GatewayStatusAddress[] {
  const own = gatewaySpec(gw).addresses ?? [];
  if (local.bindAddress && !own.some((a) => a.value))
    return [{ type: 'IPAddress', value: local.bindAddress }];
  return gatewayAddresses(gw, view, opts);
}

/** Returns a Gateway's status.addresses: those of its spec, else the Envoy fleet's. */
function gatewayAddresses(gw: KubeObject, view: StoreView, opts: BuildOptions): GatewayStatusAddress[] {
  const out: GatewayStatusAddress[] = [];
  for (const a of gatewaySpec(gw).addresses ?? []) {
    if (!a.value) continue;
    out.push({ type: a.type || 'IPAddress', value: a.value });
  }
  if (out.length > 0) return out;
  return dataPlaneAddresses(view, opts, gw);
}

const IPV4 = /^(\d{1,3}\.){3}\d{1,3}$/;

/**
 * Fills `{namespace}` and `{name}` in an --envoy-service part with the Gateway's own, so one
 * flag names a Service per Gateway when each Gateway has its own fleet (docs/gateway-api.md §3).
 */
export function envoyServicePart(template: string, gw: KubeObject): string {
  return template
    .replace(/\{namespace\}/g, gw.metadata.namespace ?? '')
    .replace(/\{name\}/g, gw.metadata.name);
}

/** Returns the Envoy fleet's reachable addresses: from the configured Service's LB ingress, then flags. */
function dataPlaneAddresses(view: StoreView, opts: BuildOptions, gw: KubeObject): GatewayStatusAddress[] {
  const source = opts.gatewayAddresses;
  if (!source) return [];
  const values: string[] = [];
  if (source.service) {
    const namespace = envoyServicePart(source.service.namespace, gw);
    const svc = view.get('Service', namespace, envoyServicePart(source.service.name, gw));
    const ingress = svc?.loadBalancerIngress;
    if (Array.isArray(ingress)) {
      for (const i of ingress as { ip?: unknown; hostname?: unknown }[]) {
        if (typeof i?.ip === 'string' && i.ip) values.push(i.ip);
        else if (typeof i?.hostname === 'string' && i.hostname) values.push(i.hostname);
      }
    }
  }
  for (const v of source.static ?? []) if (v && !values.includes(v)) values.push(v);
  return values.map((value) => ({
    type: IPV4.test(value) || value.includes(':') ? 'IPAddress' : 'Hostname',
    value,
  }));
}

/**
 * Resolves every Gateway Convoy owns, sorted by namespace/name: its listeners merged with those of
 * the ListenerSets it admits, each validated, and whether it and each of its ListenerSets is accepted.
 * `classes` are the resolved GatewayClasses of the same view; `memo` keeps certificate checks of
 * unchanged Secrets.
 */
export function resolveGateways(
  view: StoreView,
  opts: BuildOptions,
  memo?: BuildMemo,
  classes: readonly ResolvedGatewayClass[] = resolveGatewayClasses(view, opts),
): ResolvedGateway[] {
  const setsByParent = listenerSetsByParent(view, opts.xListenerSets === true);
  const rangesByTarget = portRangesByTarget(view.list('ListenerPortRange'));
  const acceptedClasses = new Map(classes.filter((c) => c.accepted).map((c) => [c.object.metadata.name, c]));
  return ownedGateways(view, classes).map((gw) =>
    resolveGateway(view, opts, gw, setsByParent, acceptedClasses, memo, rangesByTarget),
  );
}
