import { decodeMessage } from '../envoy/protos';
import type { EnvoyResources } from './resources';
import { messageNameOf } from './resources';

/**
 * Cross-resource checks run before a fleet snapshot is accepted (xds.md §1.12 item 11):
 * - no empty or duplicate names within a type;
 * - every HCM `rds.route_config_name` has a RouteConfiguration;
 * - every EDS cluster has a ClusterLoadAssignment;
 * - every SDS secret referenced by a listener or cluster TLS context has a Secret;
 * - every cluster named by a route (cluster, weighted clusters, mirrors) or by a tcp_proxy exists,
 *   unless the route sets cluster_not_found_response_code (a deliberate dangling reference).
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

export function checkConsistency(res: EnvoyResources): ConsistencyResult {
  const errors: string[] = [];
  const clusterEds = new Map<string, string>();

  const names = (kind: string, items: readonly object[], key: string): Set<string> => {
    const set = new Set<string>();
    items.forEach((item, i) => {
      const name = str((item as Obj)[key]);
      if (!name) errors.push(`${kind} #${i} has no ${key}`);
      else if (set.has(name)) errors.push(`duplicate ${kind} "${name}"`);
      else set.add(name);
    });
    return set;
  };
  names('listener', res.listeners, 'name');
  const routeNames = names('route configuration', res.routes, 'name');
  const clusterNames = names('cluster', res.clusters, 'name');
  const claNames = names('cluster load assignment', res.endpoints, 'cluster_name');
  const secretNames = names('secret', res.secrets, 'name');

  const needSecret = (where: string, sds: unknown): void => {
    if (!isObj(sds)) return;
    const name = str(sds.name);
    if (name && !secretNames.has(name)) errors.push(`${where}: secret "${name}" not found`);
  };
  const checkTlsContext = (where: string, transportSocket: unknown): void => {
    if (!isObj(transportSocket)) return;
    let unpacked;
    try {
      unpacked = unpackAny(transportSocket.typed_config);
    } catch (e) {
      errors.push(`${where}: transport socket config cannot be decoded: ${(e as Error).message}`);
      return;
    }
    if (!unpacked || (unpacked.type !== DOWNSTREAM_TLS && unpacked.type !== UPSTREAM_TLS)) return;
    const common = unpacked.msg.common_tls_context;
    if (!isObj(common)) return;
    for (const sds of arr(common.tls_certificate_sds_secret_configs)) needSecret(where, sds);
    needSecret(where, common.validation_context_sds_secret_config);
    const combined = common.combined_validation_context;
    if (isObj(combined)) needSecret(where, combined.validation_context_sds_secret_config);
  };
  const needCluster = (where: string, cluster: unknown): void => {
    const name = str(cluster);
    if (name && !clusterNames.has(name)) errors.push(`${where}: cluster "${name}" not found`);
  };
  const checkRouteConfig = (where: string, rc: Obj): void => {
    for (const vh of arr(rc.virtual_hosts)) {
      const vhWhere = `${where} virtual host "${str(vh.name)}"`;
      arr(vh.routes).forEach((route, i) => {
        const action = route.route;
        if (!isObj(action)) return;
        const rWhere = `${vhWhere} route ${route.name ? `"${str(route.name)}"` : `#${i}`}`;
        // A route that sets cluster_not_found_response_code names missing clusters on purpose
        // (e.g. the share of invalid backends answered with 500).
        const deliberate = action.cluster_not_found_response_code !== undefined;
        if (!deliberate) needCluster(rWhere, action.cluster);
        const weighted = action.weighted_clusters;
        if (isObj(weighted) && !deliberate)
          for (const wc of arr(weighted.clusters)) needCluster(rWhere, wc.name);
        for (const mirror of arr(action.request_mirror_policies))
          needCluster(`${rWhere} mirror`, mirror.cluster);
      });
    }
  };

  for (const listener of res.listeners as unknown as Obj[]) {
    const lWhere = `listener "${str(listener.name)}"`;
    const chains = arr(listener.filter_chains);
    if (isObj(listener.default_filter_chain)) chains.push(listener.default_filter_chain);
    for (const chain of chains) {
      const cWhere = chain.name ? `${lWhere} filter chain "${str(chain.name)}"` : lWhere;
      checkTlsContext(cWhere, chain.transport_socket);
      for (const filter of arr(chain.filters)) {
        let unpacked;
        try {
          unpacked = unpackAny(filter.typed_config);
        } catch (e) {
          errors.push(`${cWhere}: filter "${str(filter.name)}" cannot be decoded: ${(e as Error).message}`);
          continue;
        }
        if (!unpacked) continue;
        if (unpacked.type === HCM) {
          const rds = unpacked.msg.rds;
          if (isObj(rds)) {
            const rc = str(rds.route_config_name);
            if (!rc) errors.push(`${cWhere}: HTTP connection manager rds has no route_config_name`);
            else if (!routeNames.has(rc)) errors.push(`${cWhere}: route configuration "${rc}" not found`);
          }
          if (isObj(unpacked.msg.route_config))
            checkRouteConfig(`${cWhere} inline routes`, unpacked.msg.route_config);
        } else if (unpacked.type === TCP_PROXY) {
          needCluster(`${cWhere} tcp_proxy`, unpacked.msg.cluster);
          const weighted = unpacked.msg.weighted_clusters;
          if (isObj(weighted))
            for (const wc of arr(weighted.clusters)) needCluster(`${cWhere} tcp_proxy`, wc.name);
        }
      }
    }
  }

  for (const rc of res.routes as unknown as Obj[])
    checkRouteConfig(`route configuration "${str(rc.name)}"`, rc);

  for (const cluster of res.clusters as unknown as Obj[]) {
    const name = str(cluster.name);
    const where = `cluster "${name}"`;
    if (cluster.type === 'EDS' || cluster.type === 3) {
      const eds = isObj(cluster.eds_cluster_config) ? str(cluster.eds_cluster_config.service_name) : '';
      const cla = eds || name;
      clusterEds.set(name, cla);
      if (!claNames.has(cla)) errors.push(`${where}: cluster load assignment "${cla}" not found`);
    }
    checkTlsContext(where, cluster.transport_socket);
    for (const m of arr(cluster.transport_socket_matches))
      checkTlsContext(`${where} transport socket match "${str(m.name)}"`, m.transport_socket);
  }

  return { errors, clusterEds };
}
