import type { RouteConfiguration } from '../../generated/envoy/config/route/v3/RouteConfiguration';
import type { VirtualHost } from '../../generated/envoy/config/route/v3/VirtualHost';
import type { Route } from '../../generated/envoy/config/route/v3/Route';
import type { RouteMatch } from '../../generated/envoy/config/route/v3/RouteMatch';
import type { RouteAction } from '../../generated/envoy/config/route/v3/RouteAction';
import type { _envoy_config_route_v3_WeightedCluster_ClusterWeight as ClusterWeight } from '../../generated/envoy/config/route/v3/WeightedCluster';
import type { RedirectAction } from '../../generated/envoy/config/route/v3/RedirectAction';
import type { HeaderMatcher } from '../../generated/envoy/config/route/v3/HeaderMatcher';
import type { QueryParameterMatcher } from '../../generated/envoy/config/route/v3/QueryParameterMatcher';
import type { HeaderValueOption } from '../../generated/envoy/config/core/v3/HeaderValueOption';
import type { StringMatcher } from '../../generated/envoy/type/matcher/v3/StringMatcher';
import type { FractionalPercent } from '../../generated/envoy/type/v3/FractionalPercent';
import type { RegexMatchAndSubstitute } from '../../generated/envoy/type/matcher/v3/RegexMatchAndSubstitute';
import type {
  HeaderModifierModel,
  RouteActionModel,
  RouteMatchModel,
  RouteModel,
  StringMatchModel,
  VirtualHostModel,
  WeightedCluster,
} from '../../model/fleet';
import { Enum, escapeRegex, memoByNode } from './common';
import { timeoutAndRetry } from './retry';
import { corsPerFilterConfig } from './cors';

/**
 * Translates model virtual hosts and routes to Envoy RouteConfigurations (RDS).
 *
 * One RouteConfiguration per plain-HTTP port (named after the listener) and one per HTTPS filter
 * chain (`https-8443/<hostname>`). An HTTPS chain's configuration holds only that chain's virtual
 * hosts, so a Host header naming another SNI's hostname never reaches that hostname's routes: the
 * isolation holds by construction (and misdirected.ts answers such a request with 421,
 * docs/gateway-api.md §26).
 *
 * Host matching ignores the port (`ignore_port_in_host_matching`), so `domains` stay the plain
 * hostnames from the model. This is preferred over the HCM's `strip_any_host_port`, which would
 * also rewrite the Host header sent upstream and drop the port from redirect Locations.
 *
 * Defaults are left out on purpose (codec, append action, redirect code 301, RE2 engine): every
 * omitted field is the value Envoy would use anyway, and the encoding stays small.
 */

/** A path match in Envoy's terms; the `path_specifier` oneof of RouteMatch. */
export type PathMatch =
  | { prefix: string }
  | { path: string }
  | { path_separated_prefix: string }
  | { safe_regex: { regex: string } };

/** Response code used for a direct 500 (Gateway API: a rule with no usable backend). */
const NO_BACKEND_STATUS = 500;

/**
 * Translates a Gateway API path match to an Envoy path specifier:
 * - no path: PathPrefix "/" (the Gateway API default).
 * - PathPrefix is element-wise: "/foo" matches "/foo" and "/foo/bar", not "/foobar"; a trailing
 *   "/" is ignored. That is Envoy's `path_separated_prefix`, which must not end in "/" and must not
 *   be "/" itself; "/" (or only slashes) is `prefix: "/"`, which matches everything.
 * - Exact: `path`. RegularExpression: `safe_regex` (Envoy's default engine is RE2).
 */
export function translatePathMatch(path: RouteMatchModel['path']): PathMatch {
  if (!path) return { prefix: '/' };
  switch (path.type) {
    case 'Exact':
      return { path: path.value };
    case 'RegularExpression':
      return { safe_regex: { regex: path.value } };
    case 'PathPrefix': {
      const trimmed = trimTrailingSlashes(path.value);
      return trimmed === '' ? { prefix: '/' } : { path_separated_prefix: trimmed };
    }
  }
}

/** Returns `value` without its trailing slashes ("/" becomes ""). */
function trimTrailingSlashes(value: string): string {
  let end = value.length;
  while (end > 0 && value.charCodeAt(end - 1) === 47 /* '/' */) end--;
  return value.slice(0, end);
}

/** Translates an Exact or RegularExpression value match to an Envoy StringMatcher. */
function stringMatcher(m: StringMatchModel): StringMatcher {
  return m.type === 'Exact' ? { exact: m.value } : { safe_regex: { regex: m.value } };
}

/** Translates a route match: path, headers (and method as `:method`), query parameters, gRPC only. */
export function translateRouteMatch(match: RouteMatchModel): RouteMatch {
  const out: RouteMatch = { ...translatePathMatch(match.path) };
  const headers: HeaderMatcher[] = [];
  // HTTP header names are case-insensitive; Envoy compares lowercased names.
  for (const h of match.headers ?? [])
    headers.push({ name: h.name.toLowerCase(), string_match: stringMatcher(h) });
  if (match.method) headers.push({ name: ':method', string_match: { exact: match.method } });
  if (headers.length) out.headers = headers;
  if (match.queryParams?.length) {
    out.query_parameters = match.queryParams.map((q): QueryParameterMatcher => ({
      name: q.name,
      string_match: stringMatcher(q),
    }));
  }
  // Only requests with content-type application/grpc* match (GRPCRoute rules).
  if (match.grpc) out.grpc = {};
  return out;
}

/** The RouteAction/RedirectAction fields a path modifier sets. */
export type PathRewrite =
  { prefix_rewrite: string } | { regex_rewrite: RegexMatchAndSubstitute } | { path_redirect: string };

/**
 * Translates a Gateway API path modifier to the rewrite fields of a RouteAction (or, with
 * `forRedirect`, a RedirectAction); undefined when it changes nothing.
 *
 * ReplaceFullPath replaces the whole path; ReplacePrefixMatch replaces the matched PathPrefix,
 * element-wise, so the result never gets a doubled or missing "/".
 */
export function translatePathModifier(
  modifier: { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string },
  matchPath: RouteMatchModel['path'],
  forRedirect: boolean,
): PathRewrite | undefined {
  const fullReplace = (value: string): PathRewrite =>
    forRedirect
      ? { path_redirect: value }
      : { regex_rewrite: { pattern: { regex: '^/.*$' }, substitution: escapeSubstitution(value) } };
  if (modifier.type === 'ReplaceFullPath') return fullReplace(modifier.value);

  // ReplacePrefixMatch only makes sense with a PathPrefix match (Gateway API validation); an Exact
  // or regex match replaces the whole matched path.
  const match = translatePathMatch(matchPath);
  if ('path' in match || 'safe_regex' in match) return fullReplace(modifier.value);
  const replacement = trimTrailingSlashes(modifier.value);
  if ('prefix' in match) {
    // Matched prefix is "/": "/x" → "<replacement>/x". Replacing "/" by "/" changes nothing.
    return replacement === '' ? undefined : { prefix_rewrite: replacement + '/' };
  }
  const prefix = match.path_separated_prefix;
  if (replacement !== '') {
    // "/foo" → "/bar" turns "/foo" into "/bar" and "/foo/x" into "/bar/x".
    return { prefix_rewrite: replacement };
  }
  // Replacing with "/": strip the prefix and any following slashes, so "/foo/x" → "/x", "/foo" → "/".
  return { regex_rewrite: { pattern: { regex: '^' + escapeRegex(prefix) + '/*' }, substitution: '/' } };
}

/**
 * Returns a literal path escaped for an RE2 substitution string.
 *
 * RE2 substitution strings treat "\" specially (\1 …), so a literal "\" is doubled.
 */
function escapeSubstitution(value: string): string {
  return value.replace(/\\/g, '\\\\');
}

/** Returns the backends with a positive weight (weight 0 gets no traffic). */
export function activeBackends(backends: WeightedCluster[]): WeightedCluster[] {
  return backends.filter((b) => b.weight > 0);
}

/**
 * Names the cluster that stands in for invalid backendRefs in weighted_clusters.
 *
 * It can never name a real cluster (those are `ns/service/port`, and ':' is not valid in a
 * Kubernetes name), so Envoy answers that share of requests with the route's
 * cluster_not_found_response_code, 500.
 */
export const INVALID_BACKEND_CLUSTER = 'convoy:invalid-backend';

/**
 * Returns the forwarding target of a rule: one cluster → `cluster`; several → `weighted_clusters`;
 * undefined when no valid backend has a positive weight (the whole rule is then a direct 500).
 *
 * Envoy sums the weights (`total_weight` is deprecated). `invalidWeight` (the share of invalid
 * backendRefs) becomes a weighted entry for INVALID_BACKEND_CLUSTER, answered with 500.
 */
export function translateBackends(
  backends: WeightedCluster[],
  invalidWeight = 0,
): Pick<RouteAction, 'cluster' | 'weighted_clusters' | 'cluster_not_found_response_code'> | undefined {
  const active = activeBackends(backends);
  if (active.length === 0) return undefined;
  // Header modifiers of a backendRef live on its weighted_clusters entry, even when it is alone.
  const filtered = active.some((b) => b.requestHeaders || b.responseHeaders);
  if (active.length === 1 && !(invalidWeight > 0) && !filtered) return { cluster: active[0].cluster };
  const clusters = active.map(weightedCluster);
  if (!(invalidWeight > 0)) return { weighted_clusters: { clusters } };
  clusters.push({ name: INVALID_BACKEND_CLUSTER, weight: { value: invalidWeight } });
  return {
    weighted_clusters: { clusters },
    cluster_not_found_response_code: Enum.ClusterNotFoundResponseCode.INTERNAL_SERVER_ERROR,
  };
}

/**
 * Translates one backend to a weighted_clusters entry, with its backendRef's header modifiers
 * (docs/gateway-api.md §22). Envoy applies them before the route's own header modifiers.
 */
function weightedCluster(b: WeightedCluster): ClusterWeight {
  const out: ClusterWeight = { name: b.cluster, weight: { value: b.weight } };
  const req = translateHeaderModifier(b.requestHeaders);
  const res = translateHeaderModifier(b.responseHeaders);
  if (req.add) out.request_headers_to_add = req.add;
  if (req.remove) out.request_headers_to_remove = req.remove;
  if (res.add) out.response_headers_to_add = res.add;
  if (res.remove) out.response_headers_to_remove = res.remove;
  return out;
}

/** Translates a Gateway API redirect status to an Envoy RedirectResponseCode; undefined for 301 (default). */
export function redirectResponseCode(statusCode: number): RedirectAction['response_code'] | undefined {
  switch (statusCode) {
    case 301:
      return undefined;
    case 303:
      return Enum.RedirectResponseCode.SEE_OTHER;
    case 307:
      return Enum.RedirectResponseCode.TEMPORARY_REDIRECT;
    case 308:
      return Enum.RedirectResponseCode.PERMANENT_REDIRECT;
    default:
      // 302 and anything unexpected: 302 is the Gateway API default.
      return Enum.RedirectResponseCode.FOUND;
  }
}

/** Translates a redirect action: scheme, host, port, path and status code. */
export function translateRedirect(
  action: Extract<RouteActionModel, { kind: 'redirect' }>,
  matchPath: RouteMatchModel['path'],
): RedirectAction {
  const out: RedirectAction = {};
  if (action.scheme) out.scheme_redirect = action.scheme.toLowerCase();
  if (action.hostname) out.host_redirect = action.hostname;
  if (action.port) out.port_redirect = action.port;
  if (action.path) Object.assign(out, translatePathModifier(action.path, matchPath, true));
  const code = redirectResponseCode(action.statusCode);
  if (code !== undefined) out.response_code = code;
  return out;
}

/**
 * Translates a forward action to a RouteAction: backends, rewrites, timeouts and mirrors; undefined
 * when no backend can take traffic.
 */
function translateForward(
  action: Extract<RouteActionModel, { kind: 'forward' }>,
  route: RouteModel,
): RouteAction | undefined {
  const target = translateBackends(action.backends, action.invalidWeight);
  if (!target) return undefined;
  const out: RouteAction = { ...target };
  if (action.rewrite?.path)
    Object.assign(out, translatePathModifier(action.rewrite.path, route.match.path, false));
  if (action.rewrite?.hostname) out.host_rewrite_literal = action.rewrite.hostname;
  Object.assign(out, timeoutAndRetry(route));
  const mirrors = (action.mirrors ?? []).filter((m) => m.percent === undefined || m.percent > 0);
  if (mirrors.length) {
    out.request_mirror_policies = mirrors.map((m) =>
      m.percent === undefined || m.percent >= 100
        ? { cluster: m.cluster }
        : { cluster: m.cluster, runtime_fraction: { default_value: mirrorFraction(m.percent) } },
    );
  }
  return out;
}

/** Converts a percentage to a FractionalPercent: whole percents over HUNDRED, else parts per million. */
export function mirrorFraction(percent: number): FractionalPercent {
  if (Number.isInteger(percent)) return { numerator: percent }; // HUNDRED is the default denominator
  return { numerator: Math.round(percent * 10_000), denominator: Enum.DenominatorType.MILLION };
}

/**
 * Returns whether a route may modify header `name`: not a pseudo-header, not Host.
 *
 * Envoy refuses to modify pseudo-headers and Host through headers_to_add/remove (the whole
 * RouteConfiguration would be NACKed); such entries are dropped. The model builder should not
 * produce them.
 */
function modifiableHeader(name: string): boolean {
  return !name.startsWith(':') && name.toLowerCase() !== 'host';
}

/** Translates a header modifier to `*_headers_to_add`/`*_headers_to_remove` (set overwrites, add appends). */
export function translateHeaderModifier(mod: HeaderModifierModel | undefined): {
  add?: HeaderValueOption[];
  remove?: string[];
} {
  if (!mod) return {};
  const add: HeaderValueOption[] = [];
  for (const h of mod.set ?? []) {
    if (!modifiableHeader(h.name)) continue;
    add.push({
      header: { key: h.name.toLowerCase(), value: h.value },
      append_action: Enum.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD,
    });
  }
  for (const h of mod.add ?? []) {
    if (!modifiableHeader(h.name)) continue;
    // APPEND_IF_EXISTS_OR_ADD is the proto default.
    add.push({ header: { key: h.name.toLowerCase(), value: h.value } });
  }
  const remove = (mod.remove ?? []).filter(modifiableHeader).map((n) => n.toLowerCase());
  const out: { add?: HeaderValueOption[]; remove?: string[] } = {};
  if (add.length) out.add = add;
  if (remove.length) out.remove = remove;
  return out;
}

/** Translates one model route to one Envoy Route; pure in the route node, so memoized by it. */
export const translateRoute = memoByNode((route: RouteModel): Route => {
  const out: Route = { name: route.name, match: translateRouteMatch(route.match) };
  // Per-route stats, rooted at vhost.<virtual host>.route.<stat_prefix>; only for named rules.
  if (route.statPrefix) out.stat_prefix = route.statPrefix;
  const action = route.action;
  switch (action.kind) {
    case 'forward': {
      const forward = translateForward(action, route);
      if (forward) out.route = forward;
      else out.direct_response = { status: NO_BACKEND_STATUS };
      break;
    }
    case 'redirect':
      out.redirect = translateRedirect(action, route.match.path);
      break;
    case 'direct':
      out.direct_response =
        action.body !== undefined && action.body !== ''
          ? { status: action.status, body: { inline_string: action.body } }
          : { status: action.status };
      break;
  }
  const req = translateHeaderModifier(route.requestHeaders);
  const res = translateHeaderModifier(route.responseHeaders);
  if (req.add) out.request_headers_to_add = req.add;
  if (req.remove) out.request_headers_to_remove = req.remove;
  if (res.add) out.response_headers_to_add = res.add;
  if (res.remove) out.response_headers_to_remove = res.remove;
  if (route.cors) out.typed_per_filter_config = corsPerFilterConfig(route.cors);
  return out;
});

/**
 * Translates one model virtual host to an Envoy VirtualHost.
 *
 * A virtual host without routes is kept: it answers 404 for its hostname instead of letting those
 * requests fall through to a wildcard or catch-all.
 */
export const translateVirtualHost = memoByNode((vh: VirtualHostModel): VirtualHost =>
  buildVirtualHost(vh, vh.domains),
);

/** Builds an Envoy VirtualHost with the given domains and the virtual host's routes. */
function buildVirtualHost(vh: VirtualHostModel, domains: string[]): VirtualHost {
  const out: VirtualHost = { name: vh.name, domains };
  if (vh.routes.length) out.routes = vh.routes.map((r) => translateRoute(r));
  return out;
}

/**
 * Builds a RouteConfiguration from virtual hosts in model order.
 *
 * Envoy rejects a configuration in which two virtual hosts share a domain (or a name); should the
 * model ever contain that, the first occurrence wins and later duplicates are dropped, so one bad
 * entry cannot NACK every host.
 */
export function buildRouteConfiguration(name: string, virtualHosts: VirtualHostModel[]): RouteConfiguration {
  const seenDomains = new Set<string>();
  const seenNames = new Set<string>();
  const hosts: VirtualHost[] = [];
  for (const vh of virtualHosts) {
    if (seenNames.has(vh.name)) continue;
    const domains: string[] = [];
    for (const d of vh.domains) {
      const key = d.toLowerCase();
      if (seenDomains.has(key)) continue;
      seenDomains.add(key);
      domains.push(d);
    }
    if (domains.length === 0) continue;
    seenNames.add(vh.name);
    hosts.push(
      domains.length === vh.domains.length ? translateVirtualHost(vh) : buildVirtualHost(vh, domains),
    );
  }
  const out: RouteConfiguration = { name, ignore_port_in_host_matching: true };
  if (hosts.length) out.virtual_hosts = hosts;
  return out;
}
