import type { KubeObject } from '../store/objects';
import { namespacedName, objectNamespace } from '../store/objects';
import type { StoreChange } from '../store/store';
import type { StoreView } from '../gateway/resolved';
import { envoyServicePart } from '../gateway/gateways';
import type { GatewaySpec } from '../gateway/api';
import { fleetObjectName } from '../model/managed-fleet';
import { backendClientCertificateRef } from '../gateway/backend-client-certificate';
import type { BackendTLSPolicySpec } from '../gateway/backend-tls';
import type { FullBuildReason } from './pending-work';
import { refusedSliceEndpoints, type EndpointPolicy } from '../gateway/endpoint-guard';

/**
 * Indexes the Secrets and Services the Gateway API objects refer to.
 *
 * Changes to objects nothing refers to (the bulk of Secrets and Services in a real cluster) then
 * do not trigger builds. Computed from the same store view as a build; cheap (one pass over
 * listeners and routes).
 */
export class ReferenceIndex {
  private secrets = new Set<string>();
  private services = new Set<string>();
  /** Secrets named as Gateways' backend client certificates: a change needs a full build. */
  private clientSecrets = new Set<string>();
  /** ConfigMaps BackendTLSPolicies (§24) and Gateways' client validation (§25) name as CA bundles. */
  private configMaps = new Set<string>();
  /**
   * Whether any BackendTLSPolicy exists: route and ListenerSet changes then take a full build,
   * since the policies' ancestors (their status) follow which Gateways use which Services.
   */
  hasBackendTlsPolicies = false;

  /** Builds the index of a store view; `extraServices` (`namespace/name`) always count as referenced. */
  static fromStore(view: StoreView, extraServices: string[] = []): ReferenceIndex {
    const index = new ReferenceIndex();
    for (const key of extraServices) index.services.add(key);
    // A managed fleet's Service gives its Gateway's status.addresses (docs/architecture.md §13).
    for (const gw of view.list('Gateway'))
      index.services.add(namespacedName(objectNamespace(gw), fleetObjectName(gw.metadata.name)));
    for (const kind of ['Gateway', 'ListenerSet', 'XListenerSet']) {
      for (const owner of view.list(kind)) index.addListenerOwner(owner);
    }
    for (const gw of view.list('Gateway')) index.addCaBundles(gw);
    for (const kind of ['HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute']) {
      for (const route of view.list(kind)) index.addRoute(route);
    }
    for (const gw of view.list('Gateway')) {
      const ref = backendClientCertificateRef(gw);
      if (ref?.name) index.clientSecrets.add(namespacedName(ref.namespace ?? objectNamespace(gw), ref.name));
    }
    for (const policy of view.list('BackendTLSPolicy')) {
      index.hasBackendTlsPolicies = true;
      const refs = (policy.spec as BackendTLSPolicySpec | undefined)?.validation?.caCertificateRefs;
      for (const ref of Array.isArray(refs) ? refs : [])
        if (ref?.name) index.configMaps.add(namespacedName(objectNamespace(policy), ref.name));
    }
    return index;
  }

  /** Adds the Secrets a Gateway's or ListenerSet's listeners refer to. */
  addListenerOwner(owner: KubeObject): void {
    const ns = objectNamespace(owner);
    for (const l of listenersOf(owner)) {
      for (const ref of l.tls?.certificateRefs ?? [])
        this.secrets.add(namespacedName(ref.namespace ?? ns, ref.name));
    }
  }

  /** Adds the ConfigMaps a Gateway's client certificate validation refers to (docs/gateway-api.md §25). */
  addCaBundles(gw: KubeObject): void {
    const ns = objectNamespace(gw);
    const frontend = (gw.spec as GatewaySpec | undefined)?.tls?.frontend;
    const configs = [
      frontend?.default,
      ...(Array.isArray(frontend?.perPort) ? frontend.perPort : []).map((p) => p?.tls),
    ];
    for (const c of configs) {
      const refs = c?.validation?.caCertificateRefs;
      if (!Array.isArray(refs)) continue;
      for (const ref of refs) {
        if (ref?.kind === 'ConfigMap') this.configMaps.add(namespacedName(ref.namespace ?? ns, ref.name));
      }
    }
  }

  /**
   * Adds the Services a route refers to (backendRefs and mirror filters).
   *
   * Used after a route fast path: the index may then also hold Services only the route's old
   * version named, which costs at most an unneeded build until the next full build recomputes the
   * index; it never misses a referenced Service.
   */
  addRoute(route: KubeObject): void {
    const ns = objectNamespace(route);
    for (const rule of rulesOf(route)) {
      for (const ref of rule.backendRefs ?? []) this.addService(ns, ref);
      for (const f of rule.filters ?? [])
        if (f.requestMirror?.backendRef) this.addService(ns, f.requestMirror.backendRef);
      for (const b of rule.backendRefs ?? []) {
        for (const f of b.filters ?? [])
          if (f.requestMirror?.backendRef) this.addService(ns, f.requestMirror.backendRef);
      }
    }
  }

  /** Adds the Service a backendRef names, if it names a core Service. */
  private addService(routeNamespace: string, ref: ObjectRef): void {
    if (ref.kind && ref.kind !== 'Service') return;
    if (ref.group && ref.group !== '' && ref.group !== 'core') return;
    this.services.add(namespacedName(ref.namespace ?? routeNamespace, ref.name));
  }

  /** Returns whether a listener refers to Secret `namespace/name`. */
  referencesSecret(key: string): boolean {
    return this.secrets.has(key);
  }

  /** Returns whether a Gateway names Secret `namespace/name` as its backend client certificate. */
  referencesClientSecret(key: string): boolean {
    return this.clientSecrets.has(key);
  }

  /** Returns whether a BackendTLSPolicy or a Gateway's client validation names ConfigMap `namespace/name`. */
  referencesConfigMap(key: string): boolean {
    return this.configMaps.has(key);
  }

  /** Returns whether a route (or the extra list) refers to Service `namespace/name`. */
  referencesService(key: string): boolean {
    return this.services.has(key);
  }
}

export type ChangeImpact = 'none' | 'endpoints' | 'secret' | 'route' | 'added' | 'structural' | 'full';

/** A change's impact and, when that is a full build, why (convoy_full_builds_total's reason). */
export interface ChangeClass {
  impact: ChangeImpact;
  reason?: FullBuildReason;
}

/** Returns the impact of one store change (see classifyChange). */
export function changeImpact(change: StoreChange, index: ReferenceIndex | undefined): ChangeImpact {
  return classifyChange(change, index).impact;
}

const FAST: Record<Exclude<ChangeImpact, 'full' | 'structural'>, ChangeClass> = {
  none: { impact: 'none' },
  endpoints: { impact: 'endpoints' },
  secret: { impact: 'secret' },
  route: { impact: 'route' },
  added: { impact: 'added' },
};

/** A candidate for the removal/replacement fast paths (fast-paths.ts), with its fallback reason. */
function structural(reason: FullBuildReason): ChangeClass {
  return { impact: 'structural', reason };
}

/** A full build for `reason`. */
function full(reason: FullBuildReason): ChangeClass {
  return { impact: 'full', reason };
}

/**
 * Classifies one store change by the cheapest build path that may handle it (docs/architecture.md
 * §8): irrelevant (no build), endpoints only (fast path: clusters' load assignments, no listener or
 * route rebuild), an update of a referenced Secret that already existed (candidate for the
 * certificate fast path, which re-validates and falls back to a full build when validity changed),
 * an update of an existing HTTPRoute/GRPCRoute (candidate for the route fast path, which checks its
 * own preconditions and otherwise falls back), a creation of a ListenerSet or HTTPRoute/GRPCRoute
 * (candidate for the ListenerSet fast path when a window holds exactly one new ListenerSet, or for
 * the route-creation fast path when it holds only new routes; each falls back when it must), a
 * deletion of an HTTPRoute/GRPCRoute or ListenerSet, an update of a ListenerSet or a creation or
 * deletion of a Secret listeners name (candidates for the removal and replacement fast paths,
 * with the reason their fallback counts under), or a full build, with the reason it needs one.
 */
export function classifyChange(change: StoreChange, index: ReferenceIndex | undefined): ChangeClass {
  if (!index) return full('no_reference_index');
  const objects = change.type === 'put' ? [change.object, change.previous] : [change.previous];
  const present = objects.filter((o): o is KubeObject => o !== undefined);
  const named = (has: (key: string) => boolean) =>
    present.some((o) => has(namespacedName(objectNamespace(o), o.metadata.name)));
  switch (change.kind) {
    case 'ConfigMap':
      return named((k) => index.referencesConfigMap(k)) ? full('configmap_changed') : FAST.none;
    case 'Secret':
      if (named((k) => index.referencesClientSecret(k))) return full('client_certificate_changed');
      if (!named((k) => index.referencesSecret(k))) return FAST.none;
      // An update in place (same key, so same namespace/name): only its content can differ.
      return change.type === 'put' && change.previous ? FAST.secret : structural('secret_created_or_deleted');
    case 'Service':
      return named((k) => index.referencesService(k)) ? full('service_changed') : FAST.none;
    case 'EndpointSlice':
      return present.some((o) => index.referencesService(endpointSliceService(o) ?? ''))
        ? FAST.endpoints
        : FAST.none;
    case 'HTTPRoute':
    case 'GRPCRoute':
      if (index.hasBackendTlsPolicies) return full('backend_tls_policy_present');
      if (change.type === 'delete') return structural('route_deleted');
      return change.previous ? FAST.route : FAST.added;
    case 'ListenerSet':
      if (index.hasBackendTlsPolicies) return full('backend_tls_policy_present');
      if (change.type === 'delete') return structural('listenerset_deleted');
      // A creation: candidate for the ListenerSet fast path (which falls back when it must).
      return change.previous ? structural('listenerset_updated') : FAST.added;
    default:
      return full(`${change.kind.toLowerCase() as Lowercase<string>}_changed`);
  }
}

/** Returns the `namespace/service` an EndpointSlice belongs to, from its kubernetes.io/service-name label. */
export function endpointSliceService(slice: KubeObject): string | undefined {
  const name = slice.metadata.labels?.['kubernetes.io/service-name'];
  return name ? namespacedName(objectNamespace(slice), name) : undefined;
}

interface ObjectRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

interface RouteRuleLike {
  backendRefs?: (ObjectRef & { filters?: { requestMirror?: { backendRef?: ObjectRef } }[] })[];
  filters?: { requestMirror?: { backendRef?: ObjectRef } }[];
}

/** Returns an object's spec.listeners, or none when it is not an array. */
function listenersOf(o: KubeObject): { tls?: { certificateRefs?: ObjectRef[] } }[] {
  const spec = o.spec as { listeners?: unknown } | undefined;
  return Array.isArray(spec?.listeners)
    ? (spec.listeners as { tls?: { certificateRefs?: ObjectRef[] } }[])
    : [];
}

/** Returns a route's spec.rules, or none when it is not an array. */
function rulesOf(o: KubeObject): RouteRuleLike[] {
  const spec = o.spec as { rules?: unknown } | undefined;
  return Array.isArray(spec?.rules) ? (spec.rules as RouteRuleLike[]) : [];
}

/**
 * The namespace/name keys of the Envoy Services whose load-balancer ingress Gateways report:
 * the one --envoy-service names, or with `{namespace}`/`{name}` in it, each Gateway's own, so a
 * change of those Services triggers a build (docs/gateway-api.md §3).
 */
export function envoyServiceKeys(svc: { namespace: string; name: string }, store: StoreView): string[] {
  if (!`${svc.namespace}/${svc.name}`.includes('{')) return [namespacedName(svc.namespace, svc.name)];
  return store
    .list('Gateway')
    .map((gw) => namespacedName(envoyServicePart(svc.namespace, gw), envoyServicePart(svc.name, gw)));
}

/**
 * True when the change is to an EndpointSlice that holds, or held, an endpoint Convoy refuses
 * (endpoint-guard.ts): the build's endpoint policy then changes, which every route fast path
 * compiles routes with, even while no route uses the slice's Service yet.
 */
export function changesRefusals(change: StoreChange, policy: EndpointPolicy): boolean {
  const versions = [change.type === 'put' ? change.object : undefined, change.previous];
  return versions.some((o) => o?.kind === 'EndpointSlice' && refusedSliceEndpoints(o, policy).length > 0);
}
