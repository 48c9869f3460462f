/**
 * Shares unchanged nodes between consecutive builds of one fleet.
 *
 * The gateway builder produces a fresh FleetModel on every build. Translation and the xDS cache are
 * memoized on node identity (WeakMap), so a fresh node, even with identical content, is translated
 * and encoded again. `reuseUnchanged` walks the new model next to the previous one and puts the
 * previous node back wherever the content is equal, keyed by the nodes' stable names (ports, filter
 * chains, clusters, secrets). An edit then reaches translation and encoding as one changed chain,
 * cluster or secret, and everything else hits the memo.
 *
 * Content equality is a deep comparison of plain data that short-circuits on identical references,
 * so it gets cheaper the more the builder itself reuses.
 */
import type {
  CaBundleModel,
  ClusterModel,
  FilterChainModel,
  FleetModel,
  PortModel,
  SecretModel,
} from './fleet';
import { deepEqual } from '../util/deep-equal';

/** Indexes items by name. */
function byName<T extends { name: string }>(items: readonly T[] | undefined): Map<string, T> {
  const m = new Map<string, T>();
  for (const it of items ?? []) m.set(it.name, it);
  return m;
}

/**
 * Returns `next` with each item replaced by what `same` keeps of the previous item of the same name;
 * the previous array itself when every item is kept in the same place.
 */
function reuseList<T extends { name: string }>(
  prev: readonly T[] | undefined,
  next: T[],
  same: (a: T, b: T) => T,
): T[] {
  const old = byName(prev);
  let all = prev !== undefined && prev.length === next.length;
  const out = next.map((item, i) => {
    const p = old.get(item.name);
    const r = p ? same(p, item) : item;
    if (all && r !== prev![i]) all = false;
    return r;
  });
  return all ? (prev as T[]) : out;
}

/** Returns `prev` when it deep-equals `next`, else `next`. */
function reuseLeaf<T>(prev: T, next: T): T {
  return deepEqual(prev, next) ? prev : next;
}

/**
 * Returns `prev` when the port is unchanged, else `next` with its unchanged filter chains and HTTP
 * route configuration taken from `prev`.
 */
function reusePort(prev: PortModel, next: PortModel): PortModel {
  if (prev === next) return prev;
  const filterChains = reuseList<FilterChainModel>(prev.filterChains, next.filterChains, reuseLeaf);
  const http = prev.http && next.http ? reuseLeaf(prev.http, next.http) : next.http;
  if (
    filterChains === prev.filterChains &&
    http === prev.http &&
    prev.name === next.name &&
    prev.port === next.port &&
    deepEqual(without(prev, ['filterChains', 'http']), without(next, ['filterChains', 'http']))
  ) {
    return prev;
  }
  if (filterChains === next.filterChains && http === next.http) return next;
  const out: PortModel = { ...next, filterChains };
  if (next.http) out.http = http;
  return out;
}

/** Returns a shallow copy without the given keys (the parts compared separately). */
function without(o: object, keys: string[]): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...o };
  for (const k of keys) delete rest[k];
  return rest;
}

/**
 * Returns `next` with every node equal to the corresponding node of `prev` replaced by that node,
 * or `prev` itself when nothing changed.
 *
 * Neither argument is modified.
 */
export function reuseUnchanged(prev: FleetModel | undefined, next: FleetModel): FleetModel {
  if (!prev || prev === next) return next;
  const ports = reuseList<PortModel>(prev.ports, next.ports, reusePort);
  const clusters = reuseList<ClusterModel>(prev.clusters, next.clusters, reuseLeaf);
  const secrets = reuseList<SecretModel>(prev.secrets, next.secrets, reuseLeaf);
  const caBundles = next.caBundles && reuseList<CaBundleModel>(prev.caBundles, next.caBundles, reuseLeaf);
  const lists = ['ports', 'clusters', 'secrets', 'caBundles'];
  if (
    ports === prev.ports &&
    clusters === prev.clusters &&
    secrets === prev.secrets &&
    caBundles === prev.caBundles &&
    deepEqual(without(prev, lists), without(next, lists))
  ) {
    return prev;
  }
  return { ...next, ports, clusters, secrets, ...(caBundles ? { caBundles } : {}) };
}
