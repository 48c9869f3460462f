import { decodeMessage } from '../envoy/protos';
import type { EnvoyResources } from '../envoy/resources';
import { messageNameOf } from '../envoy/resources';
import { INVALID_BACKEND_CLUSTER } from '../envoy/translate/routes';
import { LayeredMap } from '../util/layered-map';
import { commonEnds } from '../util/common-ends';

/**
 * Cross-resource checks run before a fleet snapshot is accepted (docs/xds.md §8):
 * - no empty or duplicate names within a type;
 * - every HCM `rds.route_config_name` has a RouteConfiguration;
 * - every EDS cluster has a ClusterLoadAssignment;
 * - every SDS secret referenced by a listener or cluster TLS context has a Secret;
 * - every cluster named by a route (cluster, weighted clusters, mirrors) or by a tcp_proxy exists,
 *   unless the route sets cluster_not_found_response_code (a deliberate dangling reference), and
 *   except INVALID_BACKEND_CLUSTER among a tcp_proxy's weighted clusters (a TCPRoute's invalid share),
 *   and except the cluster of a tcp_proxy whose chain sets it per connection with set_filter_state
 *   (the SNI-dispatch layout, docs/xds.md §16: a name no cluster has closes the connection);
 * - every internal listener a cluster's endpoint names (`envoy_internal_address`) exists.
 * Nested Any fields are accepted in both forms: `{ '@type', ...fields }` and `{ type_url, value }`.
 */

const HCM = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const TCP_PROXY = 'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const DOWNSTREAM_TLS = 'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const UPSTREAM_TLS = 'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';

type Obj = Record<string, unknown>;

export interface ConsistencyResult {
  errors: string[];
  /** EDS clusters: cluster name → CLA name. */
  clusterEds: Map<string, string>;
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Buffer.isBuffer(v) && !(v instanceof Uint8Array);
}

function arr(v: unknown): Obj[] {
  return Array.isArray(v) ? (v.filter(isObj) as Obj[]) : [];
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Nested messages the check looks into; other Anys are never decoded (their protos may not be loaded). */
const INSPECTED: ReadonlySet<string> = new Set([HCM, TCP_PROXY, DOWNSTREAM_TLS, UPSTREAM_TLS]);

/**
 * Returns the full message name and the message fields of an Any whose type the check inspects,
 * or undefined.
 */
export function unpackAny(any: unknown): { type: string; msg: Obj } | undefined {
  if (!isObj(any)) return undefined;
  if (typeof any['@type'] === 'string') {
    const type = messageNameOf(any['@type']);
    return INSPECTED.has(type) ? { type, msg: any } : undefined;
  }
  if (typeof any.type_url === 'string' && any.value !== undefined) {
    const type = messageNameOf(any.type_url);
    if (!INSPECTED.has(type)) return undefined;
    const value = any.value;
    const bytes =
      typeof value === 'string'
        ? Buffer.from(value, 'base64')
        : value instanceof Uint8Array
          ? value
          : undefined;
    if (!bytes) return undefined;
    return { type, msg: decodeMessage<Obj>(type, bytes) };
  }
  return undefined;
}

/** One cross-reference a resource makes (or a problem found while reading it). */
interface Need {
  kind: 'secret' | 'route' | 'cluster' | 'cla' | 'listener' | 'error';
  name: string;
  /** Where the reference is; for 'error', the whole message. */
  where: string;
}

const needsMemo = new WeakMap<object, { where: string; needs: Need[] }>();

type NeedsOf = (obj: Obj, where: string, out: Need[]) => void;

function computeNeeds(obj: Obj, where: string, compute: NeedsOf): Need[] {
  const needs: Need[] = [];
  compute(obj, where, needs);
  return needs;
}

function memoizedNeeds(obj: Obj, where: string, compute: NeedsOf): Need[] {
  const m = needsMemo.get(obj);
  if (m && m.where === where) return m.needs;
  const needs: Need[] = [];
  compute(obj, where, needs);
  needsMemo.set(obj, { where, needs });
  return needs;
}

function secretNeed(where: string, sds: unknown, out: Need[]): void {
  if (!isObj(sds)) return;
  const name = str(sds.name);
  if (name) out.push({ kind: 'secret', name, where });
}

function tlsContextNeeds(where: string, transportSocket: unknown, out: Need[]): void {
  if (!isObj(transportSocket)) return;
  let unpacked;
  try {
    unpacked = unpackAny(transportSocket.typed_config);
  } catch (e) {
    out.push({
      kind: 'error',
      name: '',
      where: `${where}: transport socket config cannot be decoded: ${(e as Error).message}`,
    });
    return;
  }
  if (!unpacked || (unpacked.type !== DOWNSTREAM_TLS && unpacked.type !== UPSTREAM_TLS)) return;
  const common = unpacked.msg.common_tls_context;
  if (!isObj(common)) return;
  for (const sds of arr(common.tls_certificate_sds_secret_configs)) secretNeed(where, sds, out);
  secretNeed(where, common.validation_context_sds_secret_config, out);
  const combined = common.combined_validation_context;
  if (isObj(combined)) secretNeed(where, combined.validation_context_sds_secret_config, out);
}

function clusterNeed(where: string, cluster: unknown, out: Need[]): void {
  const name = str(cluster);
  if (name) out.push({ kind: 'cluster', name, where });
}

function routeConfigNeeds(where: string, rc: Obj, out: Need[]): void {
  for (const vh of arr(rc.virtual_hosts)) {
    const vhWhere = `${where} virtual host "${str(vh.name)}"`;
    arr(vh.routes).forEach((route, i) => {
      const action = route.route;
      if (!isObj(action)) return;
      const rWhere = `${vhWhere} route ${route.name ? `"${str(route.name)}"` : `#${i}`}`;
      // A route that sets cluster_not_found_response_code names missing clusters on purpose
      // (e.g. the share of invalid backends answered with 500).
      const deliberate = action.cluster_not_found_response_code !== undefined;
      if (!deliberate) clusterNeed(rWhere, action.cluster, out);
      const weighted = action.weighted_clusters;
      if (isObj(weighted) && !deliberate)
        for (const wc of arr(weighted.clusters)) clusterNeed(rWhere, wc.name, out);
      for (const mirror of arr(action.request_mirror_policies))
        clusterNeed(`${rWhere} mirror`, mirror.cluster, out);
    });
  }
}

/** Filter that sets tcp_proxy's cluster per connection (the SNI-dispatch layout's front chains). */
const SET_FILTER_STATE = 'envoy.filters.network.set_filter_state';

function chainNeeds(chain: Obj, lWhere: string, out: Need[]): void {
  const cWhere = chain.name ? `${lWhere} filter chain "${str(chain.name)}"` : lWhere;
  tlsContextNeeds(cWhere, chain.transport_socket, out);
  const perConnectionCluster = arr(chain.filters).some((f) => f.name === SET_FILTER_STATE);
  for (const filter of arr(chain.filters)) {
    let unpacked;
    try {
      unpacked = unpackAny(filter.typed_config);
    } catch (e) {
      out.push({
        kind: 'error',
        name: '',
        where: `${cWhere}: filter "${str(filter.name)}" cannot be decoded: ${(e as Error).message}`,
      });
      continue;
    }
    if (!unpacked) continue;
    if (unpacked.type === HCM) {
      const rds = unpacked.msg.rds;
      if (isObj(rds)) {
        const rc = str(rds.route_config_name);
        if (!rc)
          out.push({
            kind: 'error',
            name: '',
            where: `${cWhere}: HTTP connection manager rds has no route_config_name`,
          });
        else out.push({ kind: 'route', name: rc, where: cWhere });
      }
      if (isObj(unpacked.msg.route_config))
        routeConfigNeeds(`${cWhere} inline routes`, unpacked.msg.route_config, out);
    } else if (unpacked.type === TCP_PROXY) {
      if (!perConnectionCluster) clusterNeed(`${cWhere} tcp_proxy`, unpacked.msg.cluster, out);
      const weighted = unpacked.msg.weighted_clusters;
      // The share of a TCPRoute's invalid backends names INVALID_BACKEND_CLUSTER on purpose: tcp_proxy
      // closes the connections it picks it for (docs/gateway-api.md §28).
      if (isObj(weighted))
        for (const wc of arr(weighted.clusters))
          if (wc.name !== INVALID_BACKEND_CLUSTER) clusterNeed(`${cWhere} tcp_proxy`, wc.name, out);
    }
  }
}

function clusterNeeds(cluster: Obj, where: string, out: Need[]): void {
  if (cluster.type === 'EDS' || cluster.type === 3) {
    const eds = isObj(cluster.eds_cluster_config) ? str(cluster.eds_cluster_config.service_name) : '';
    out.push({ kind: 'cla', name: eds || str(cluster.name), where });
  }
  tlsContextNeeds(where, cluster.transport_socket, out);
  const assignment = cluster.load_assignment;
  for (const locality of isObj(assignment) ? arr(assignment.endpoints) : []) {
    for (const lb of arr(locality.lb_endpoints)) {
      const address = isObj(lb.endpoint) ? lb.endpoint.address : undefined;
      const internal = isObj(address) ? address.envoy_internal_address : undefined;
      if (isObj(internal)) out.push({ kind: 'listener', name: str(internal.server_listener_name), where });
    }
  }
  for (const m of arr(cluster.transport_socket_matches))
    tlsContextNeeds(`${where} transport socket match "${str(m.name)}"`, m.transport_socket, out);
}

export type ListKey = keyof EnvoyResources;

/** The lists of EnvoyResources in check order, with the field that names their resources. */
const CHECKED_LISTS: readonly { key: ListKey; kind: string; nameField: string }[] = [
  { key: 'listeners', kind: 'listener', nameField: 'name' },
  { key: 'routes', kind: 'route configuration', nameField: 'name' },
  { key: 'clusters', kind: 'cluster', nameField: 'name' },
  { key: 'endpoints', kind: 'cluster load assignment', nameField: 'cluster_name' },
  { key: 'secrets', kind: 'secret', nameField: 'name' },
];

/** The names present per list (only `has` is asked of them). */
type NameSets = Record<ListKey, { has(name: string): boolean }>;

/** The names of one list, reporting empty and duplicate ones. */
function namesOf(kind: string, items: readonly object[], key: string, errors: string[]): Map<string, true> {
  const set = new Map<string, true>();
  items.forEach((item, i) => {
    const name = str((item as Obj)[key]);
    if (!name) errors.push(`${kind} #${i} has no ${key}`);
    else if (set.has(name)) errors.push(`duplicate ${kind} "${name}"`);
    else set.set(name, true);
  });
  return set;
}

/** Appends the errors of unmet needs. */
function checkNeeds(needs: readonly Need[], names: NameSets, errors: string[]): void {
  for (const n of needs) {
    switch (n.kind) {
      case 'error':
        errors.push(n.where);
        break;
      case 'secret':
        if (!names.secrets.has(n.name)) errors.push(`${n.where}: secret "${n.name}" not found`);
        break;
      case 'route':
        if (!names.routes.has(n.name)) errors.push(`${n.where}: route configuration "${n.name}" not found`);
        break;
      case 'cluster':
        if (!names.clusters.has(n.name)) errors.push(`${n.where}: cluster "${n.name}" not found`);
        break;
      case 'listener':
        if (!names.listeners.has(n.name)) errors.push(`${n.where}: internal listener "${n.name}" not found`);
        break;
      case 'cla':
        if (!names.endpoints.has(n.name))
          errors.push(`${n.where}: cluster load assignment "${n.name}" not found`);
        break;
    }
  }
}

/**
 * The units whose needs are checked, in check order, with their needs: every filter chain of
 * every listener, every route configuration, every cluster.
 */
function forEachUnit(
  key: ListKey,
  list: readonly object[],
  memoNeeds: typeof memoizedNeeds,
  visit: (unit: object, needs: () => Need[]) => void,
): void {
  if (key === 'listeners') {
    for (const listener of list as Obj[]) {
      const lWhere = `listener "${str(listener.name)}"`;
      const chains = arr(listener.filter_chains);
      if (isObj(listener.default_filter_chain)) chains.push(listener.default_filter_chain);
      for (const chain of chains) visit(chain, () => memoNeeds(chain, lWhere, chainNeeds));
    }
  } else if (key === 'routes') {
    for (const rc of list as Obj[]) {
      visit(rc, () =>
        memoNeeds(rc, `route configuration "${str(rc.name)}"`, (r, where, out) =>
          routeConfigNeeds(where, r, out),
        ),
      );
    }
  } else if (key === 'clusters') {
    for (const cluster of list as Obj[])
      visit(cluster, () => memoNeeds(cluster, `cluster "${str(cluster.name)}"`, clusterNeeds));
  }
}

function clusterEdsOf(clusters: readonly object[]): Map<string, string> {
  const clusterEds = new Map<string, string>();
  for (const cluster of clusters as Obj[]) {
    if (cluster.type === 'EDS' || cluster.type === 3) {
      const eds = isObj(cluster.eds_cluster_config) ? str(cluster.eds_cluster_config.service_name) : '';
      clusterEds.set(str(cluster.name), eds || str(cluster.name));
    }
  }
  return clusterEds;
}

/**
 * `memoize`: remember what each resource object references (by identity), for callers that never
 * mutate a resource after handing it in (the XdsCache); a rebuild then only re-checks names.
 */
export function checkConsistency(res: EnvoyResources, opts: { memoize?: boolean } = {}): ConsistencyResult {
  const memoNeeds = opts.memoize ? memoizedNeeds : computeNeeds;
  const errors: string[] = [];
  const names = {} as Record<ListKey, Map<string, true>>;
  for (const { key, kind, nameField } of CHECKED_LISTS)
    names[key] = namesOf(kind, res[key] as readonly object[], nameField, errors);
  for (const key of ['listeners', 'routes', 'clusters'] as const)
    forEachUnit(key, res[key] as readonly object[], memoNeeds, (_unit, needs) =>
      checkNeeds(needs(), names, errors),
    );
  return { errors, clusterEds: clusterEdsOf(res.clusters) };
}

/** What an accepted check knew: the lists, their names, and the units whose needs were met. */
interface CheckedState {
  lists: Record<ListKey, readonly object[]>;
  /** Each list's names, as a map so that the next check can layer its changes over it. */
  names: Record<ListKey, ReadonlyMap<string, true>>;
  /** The checked units per list (filter chains, route configurations, clusters). */
  units: Record<ListKey, ReadonlyMap<object, true>>;
  clusterEds: Map<string, string>;
  /**
   * How many references (needs, one per visit of a unit) each `kind name` has among the units,
   * counted when a name first goes and kept up to date from then on; undefined until then.
   */
  refs: Map<string, number> | undefined;
}

/** The result of ConsistencyChecker.check: accept() once the snapshot it checked is in service. */
export interface IncrementalResult extends ConsistencyResult {
  /** Lists made of the very same objects, in the same order, as at the last accepted check. */
  unchanged: ReadonlySet<ListKey>;
  accept(): void;
}

/**
 * The consistency check of successive snapshots of one fleet (what XdsCache runs on every change),
 * giving the same errors as checkConsistency while looking only at what changed.
 *
 * Resource objects are immutable once handed in (XdsCache's rule), so a unit (filter chain, route
 * configuration, cluster) that was in the last accepted snapshot had all its references met then.
 * They stay met as long as no name of any type disappeared, so then only units new since then are
 * checked (with the others skipped, the errors come out in the same order as a full check's).
 * Unchanged lists (the same objects in the same order) are not even walked. When a name did
 * disappear (a ListenerSet deleted takes its internal listener, cluster, route configuration and
 * Secret), the units that stay still had their references met unless one of them names a name that
 * went: a count of references per name (counted once at the first removal, then moved by each
 * change's units) tells, and only when a staying unit still references a lost name is every unit
 * checked, as checkConsistency does (docs/xds.md §8).
 */
export class ConsistencyChecker {
  private last: CheckedState | undefined;

  check(res: EnvoyResources): IncrementalResult {
    const last = this.last;
    const errors: string[] = [];
    const lists = {} as Record<ListKey, readonly object[]>;
    const names = {} as Record<ListKey, ReadonlyMap<string, true>>;
    const unchanged = new Set<ListKey>();
    /** The names that went, with their list. */
    const lost: [ListKey, string][] = [];
    let removed = !last;
    for (const { key, kind, nameField } of CHECKED_LISTS) {
      const list = res[key] as readonly object[];
      lists[key] = list;
      if (last && sameObjects(last.lists[key], list)) {
        names[key] = last.names[key];
        unchanged.add(key);
        continue;
      }
      // Objects replaced in place under the same names (a route edited): the same name set.
      if (last && sameNamesInPlace(last.lists[key], list, nameField)) {
        names[key] = last.names[key];
        continue;
      }
      // A few objects added or removed between a common head and tail (a ListenerSet's route
      // configuration and secret): the last names with those changes layered over them.
      const patched = last && patchedNames(last.names[key], last.lists[key], list, nameField);
      if (patched) {
        names[key] = patched.names;
        if (patched.lost.length) removed = true;
        for (const n of patched.lost) lost.push([key, n]);
        continue;
      }
      const set = namesOf(kind, list, nameField, errors);
      names[key] = set;
      if (last)
        for (const n of last.names[key].keys())
          if (!set.has(n)) {
            removed = true;
            lost.push([key, n]);
          }
    }
    // With names gone, the units new since the last check are still all that needs checking when
    // no unit that stays references a name that went (counted in `refs`): docs/xds.md §8.
    let diffs: Partial<Record<ListKey, UnitChanges>> | undefined;
    let delta: Map<string, number> | undefined;
    if (last && removed) {
      diffs = {};
      for (const key of UNIT_LISTS) {
        if (unchanged.has(key)) continue;
        const diff = unitDiff(key, last.lists[key], lists[key]);
        if (!diff) {
          diffs = undefined;
          break;
        }
        diffs[key] = diff;
      }
      if (diffs) {
        delta = refDelta(diffs);
        const refs = (last.refs ??= countRefs(last.lists));
        const stillUsed = lost.some(([key, n]) => {
          const ref = `${NEED_KIND[key]} ${n}`;
          return (refs.get(ref) ?? 0) + (delta!.get(ref) ?? 0) > 0;
        });
        if (stillUsed) diffs = undefined;
      }
    }
    const units = {} as Record<ListKey, ReadonlyMap<object, true>>;
    let walked = false;
    for (const key of UNIT_LISTS) {
      if ((!removed || diffs) && unchanged.has(key)) {
        units[key] = last!.units[key];
        continue;
      }
      const known = removed && !diffs ? undefined : last?.units[key];
      // No name went, or none that a unit still references, so only units new since the last
      // check are checked: those between the common head and tail of each changed list (of each
      // changed Listener's chains).
      const diff = known && (diffs ? diffs[key] : unitDiff(key, last!.lists[key], lists[key]));
      if (known && diff) {
        for (const { unit, needs } of diff.added) if (!known.has(unit)) checkNeeds(needs(), names, errors);
        // Without names gone the counts, once kept, follow this change as well.
        if (!removed && last!.refs) addRefs((delta ??= new Map()), diff);
        // A unit both gone and added (moved) stays: taking it out and putting it back would copy.
        const stay = new Set(diff.added.map(({ unit }) => unit));
        units[key] = layered(known)
          .without(diff.gone.map(({ unit }) => unit).filter((unit) => !stay.has(unit)))
          .with(diff.added.filter(({ unit }) => !known.has(unit)).map(({ unit }) => [unit, true] as const));
        continue;
      }
      walked = true;
      const seen = new Map<object, true>();
      forEachUnit(key, lists[key], memoizedNeeds, (unit, needs) => {
        seen.set(unit, true);
        if (!known?.has(unit)) checkNeeds(needs(), names, errors);
      });
      units[key] = seen;
    }
    const clusterEds = last && unchanged.has('clusters') ? last.clusterEds : clusterEdsOf(lists.clusters);
    return {
      errors,
      clusterEds,
      unchanged,
      accept: () => {
        if (errors.length) return;
        // The counts follow the lists by the changes' deltas, when this check was made against
        // the state in service and walked no list whole; else they are counted again when needed.
        let refs: Map<string, number> | undefined;
        if (!walked && last && this.last === last && last.refs && delta) {
          refs = last.refs;
          for (const [ref, d] of delta) {
            const n = (refs.get(ref) ?? 0) + d;
            if (n) refs.set(ref, n);
            else refs.delete(ref);
          }
          last.refs = undefined;
        } else if (!walked && last && this.last === last && !delta) refs = last.refs;
        this.last = { lists: copyLists(lists), names, units, clusterEds, refs };
      },
    };
  }

  /** Forgets what was checked (the fleet was removed). */
  reset(): void {
    this.last = undefined;
  }
}

/**
 * Above this many objects (or units) between the common head and tail, and above this share of
 * the list, the check walks the whole list instead of its middle (a few changes among thousands).
 */
const MIDDLE_MAX = 64;
const MIDDLE_MAX_SHARE = 1 / 8;

/** The objects of `was` and of `now` between their common head and tail (by identity). */
function middles(was: readonly object[], now: readonly object[]): { gone: object[]; added: object[] } {
  const { head, tail } = commonEnds(was, now);
  return { gone: was.slice(head, was.length - tail), added: now.slice(head, now.length - tail) };
}

/** Whether `count` changed items of a list of `size` are few enough to patch. */
function few(count: number, size: number): boolean {
  return count <= Math.max(MIDDLE_MAX, size * MIDDLE_MAX_SHARE);
}

/** `map` as a LayeredMap (adopted without a copy: a checked state's maps are never changed). */
function layered<K>(map: ReadonlyMap<K, true>): LayeredMap<K, true> {
  return map instanceof LayeredMap ? map : LayeredMap.adopt(map as Map<K, true>);
}

/**
 * The names of `now` as the last accepted list's names with the objects between the common head
 * and tail taken out and put in, and the names that went (`lost`); undefined when many objects
 * differ or when an added name is empty or a duplicate, which namesOf reports (by index) instead.
 * The last names had no empty or duplicate name (they were accepted), so these are namesOf(now).
 */
function patchedNames(
  lastNames: ReadonlyMap<string, true>,
  was: readonly object[],
  now: readonly object[],
  nameField: string,
): { names: ReadonlyMap<string, true>; lost: string[] } | undefined {
  const { gone, added } = middles(was, now);
  if (!few(gone.length + added.length, Math.max(was.length, now.length))) return undefined;
  const goneNames = new Set(gone.map((o) => str((o as Obj)[nameField])));
  const addedNames = new Set<string>();
  for (const o of added) {
    const name = str((o as Obj)[nameField]);
    if (!name || addedNames.has(name) || (lastNames.has(name) && !goneNames.has(name))) return undefined;
    addedNames.add(name);
  }
  // Only names that go for good are taken out, only new ones put in: a name taken out and put back
  // in one LayeredMap would cost a copy of the whole map.
  const lostNames = [...goneNames].filter((n) => !addedNames.has(n));
  const newNames = [...addedNames].filter((n) => !lastNames.has(n));
  const names = layered(lastNames)
    .without(lostNames)
    .with(newNames.map((n) => [n, true] as const));
  return { names, lost: lostNames };
}

/** A unit to check and its needs (forEachUnit's visit arguments). */
interface UnitNeeds {
  unit: object;
  needs: () => Need[];
}

/** The units of a list that went and that came (unitDiff). */
interface UnitChanges {
  gone: UnitNeeds[];
  added: UnitNeeds[];
}

/** The lists whose units make references. */
const UNIT_LISTS = ['listeners', 'routes', 'clusters'] as const;

/** The kind of need that a name of each list meets. */
const NEED_KIND: Record<ListKey, Need['kind']> = {
  listeners: 'listener',
  routes: 'route',
  clusters: 'cluster',
  endpoints: 'cla',
  secrets: 'secret',
};

/** Adds each need's `kind name` to `counts`, `sign` times. */
function countNeeds(counts: Map<string, number>, needs: readonly Need[], sign: number): void {
  for (const n of needs) {
    if (n.kind === 'error') continue;
    const ref = `${n.kind} ${n.name}`;
    counts.set(ref, (counts.get(ref) ?? 0) + sign);
  }
}

/** Adds the references of a list's added units to `delta` and takes those of its gone units off. */
function addRefs(delta: Map<string, number>, diff: UnitChanges): void {
  for (const { needs } of diff.gone) countNeeds(delta, needs(), -1);
  for (const { needs } of diff.added) countNeeds(delta, needs(), 1);
}

/** The change of reference counts the unit changes of every list make. */
function refDelta(diffs: Partial<Record<ListKey, UnitChanges>>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const diff of Object.values(diffs)) if (diff) addRefs(delta, diff);
  return delta;
}

/** The reference counts of every unit of the lists (once per visit). */
function countRefs(lists: Record<ListKey, readonly object[]>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of UNIT_LISTS)
    forEachUnit(key, lists[key], memoizedNeeds, (_unit, needs) => countNeeds(counts, needs(), 1));
  return counts;
}

/**
 * The units of `now` that were not at their place in `was` (in check order) and those of `was` no
 * longer there: the middles of the lists, and of each Listener replaced in place under its name
 * the middle of its chains. Undefined when many differ (the caller walks every unit then).
 */
function unitDiff(key: ListKey, was: readonly object[], now: readonly object[]): UnitChanges | undefined {
  const collect = (list: readonly object[]): UnitNeeds[] => {
    const out: UnitNeeds[] = [];
    forEachUnit(key, list, memoizedNeeds, (unit, needs) => out.push({ unit, needs }));
    return out;
  };
  if (key !== 'listeners' || was.length !== now.length) {
    const { gone, added } = middles(was, now);
    if (!few(gone.length + added.length, Math.max(was.length, now.length))) return undefined;
    const out = { gone: collect(gone), added: collect(added) };
    // Whole Listeners added or removed: all their chains, counted against the limit as well.
    if (key === 'listeners' && !few(out.gone.length + out.added.length, 0)) return undefined;
    return out;
  }
  const gone: UnitNeeds[] = [];
  const added: UnitNeeds[] = [];
  for (let i = 0; i < now.length; i++) {
    if (was[i] === now[i]) continue;
    const before = was[i] as Obj;
    const after = now[i] as Obj;
    if (str(before.name) !== str(after.name)) return undefined;
    const wasChains = chainsOf(before);
    const nowChains = chainsOf(after);
    const middle = middles(wasChains, nowChains);
    if (!few(middle.gone.length + middle.added.length, Math.max(wasChains.length, nowChains.length)))
      return undefined;
    const lWhere = `listener "${str(after.name)}"`;
    for (const chain of middle.gone)
      gone.push({ unit: chain, needs: () => memoizedNeeds(chain as Obj, lWhere, chainNeeds) });
    for (const chain of middle.added)
      added.push({ unit: chain, needs: () => memoizedNeeds(chain as Obj, lWhere, chainNeeds) });
  }
  return { gone, added };
}

/** A Listener's units as forEachUnit visits them: its filter chains, then its default chain. */
function chainsOf(listener: Obj): Obj[] {
  const chains = arr(listener.filter_chains);
  if (isObj(listener.default_filter_chain)) chains.push(listener.default_filter_chain);
  return chains;
}

function sameObjects(a: readonly object[], b: readonly object[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * True when `b` holds, at every index where its object differs from `a`'s, an object of the same
 * name: then its names are exactly `a`'s. For an accepted `a` (no empty or duplicate names), `b`
 * has none either, so namesOf would give `a`'s set and no error.
 */
function sameNamesInPlace(a: readonly object[], b: readonly object[], nameField: string): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i] && str((a[i] as Obj)[nameField]) !== str((b[i] as Obj)[nameField])) return false;
  }
  return true;
}

/** Copies: a caller may reuse and modify its arrays between calls. */
function copyLists(lists: Record<ListKey, readonly object[]>): Record<ListKey, readonly object[]> {
  const out = {} as Record<ListKey, readonly object[]>;
  for (const key of Object.keys(lists) as ListKey[]) out[key] = [...lists[key]];
  return out;
}
