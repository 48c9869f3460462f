/**
 * Compiles HTTPRoute and GRPCRoute rules into RouteModels, independently of any listener:
 * matches, filters, backends, timeouts, plus the problems that decide the route's status
 * (unresolved references → ResolvedRefs=False; unsupported values → the rule is dropped).
 */
import type { StoreView } from '../resolved';
import type { KubeObject } from '../../store/objects';
import type {
  HeaderModifierModel,
  RouteActionModel,
  RouteMatchModel,
  RouteModel,
  StringMatchModel,
  WeightedCluster,
} from '../../dag/model';
import type {
  BackendObjectReference,
  GRPCRouteMatch,
  GRPCRouteSpec,
  HTTPBackendRef,
  HTTPHeaderFilter,
  HTTPPathModifier,
  HTTPRouteFilter,
  HTTPRouteMatch,
  HTTPRouteSpec,
  HTTPRouteTimeouts,
} from '../api';
import { Reason } from '../conditions';
import type { BackendUse, ClusterRef } from '../backends';
import { resolveBackendRef } from '../backends';
import type { BackendPolicy } from '../backends';
import { envoyRegexProblem } from '../../re2/envoy-regex';
import { parseDuration } from './duration';
import { routeIdentity } from './identity';
import type { CompiledRoute, EntryPrecedence, RefProblem, RouteEntry, RouteKind, RuleProblem } from './types';

const HTTP_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
]);
const REDIRECT_CODES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const MAX_WEIGHT = 1_000_000;

/** Thrown inside rule compilation to drop the rule with a reason. */
class RuleError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

function fail(message: string, reason: string = Reason.UnsupportedValue): never {
  throw new RuleError(reason, message);
}

/** HTTP header names as the Gateway API CRD accepts them (RFC 7230 token). */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;
/** Headers Envoy refuses to let routes modify (it would NACK the whole RouteConfiguration). */
const UNMODIFIABLE_HEADERS: ReadonlySet<string> = new Set(['host']);

function checkHeaderName(name: unknown, what: string): asserts name is string {
  if (typeof name !== 'string' || !HEADER_NAME.test(name))
    fail(`${what}: invalid header name ${JSON.stringify(name)}`);
}

/** CR, LF and NUL never reach Envoy: they are invalid in header values, paths and hostnames. */
function checkValue(value: unknown, what: string): asserts value is string {
  if (typeof value !== 'string' || /[\r\n\0]/.test(value))
    fail(`${what}: invalid value ${JSON.stringify(value)}`);
}

/** A precise DNS name (RFC 1123, no wildcard, no port), as HTTPRoute filters require. */
function checkHostname(value: unknown, what: string): void {
  const ok =
    typeof value === 'string' &&
    value.length <= 253 &&
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/i.test(value);
  if (!ok) fail(`${what}: invalid hostname ${JSON.stringify(value)}`);
}

function arr<T>(v: T[] | undefined | null): T[] {
  return Array.isArray(v) ? v : [];
}

/** A match compiled to the model plus its precedence keys (rule/match indexes filled later). */
interface CompiledMatch {
  match: RouteMatchModel;
  precedence: Omit<EntryPrecedence, 'rule' | 'match'>;
}

/** What a rule's filters and backends compile to, shared by HTTPRoute and GRPCRoute. */
interface RuleContext {
  view: StoreView;
  policy: BackendPolicy;
  kind: RouteKind;
  namespace: string;
  use: BackendUse;
  clusters: ClusterRef[];
  refProblems: RefProblem[];
}

// ------------------------------------------------------------------------------------------------
// Matches

/**
 * Drops the rule when Envoy would reject the regex: Envoy would NACK the listener's whole
 * RouteConfiguration, which other routes share (docs/gateway-api.md §14).
 */
function checkRegex(value: unknown, what: string): asserts value is string {
  const problem = typeof value === 'string' ? envoyRegexProblem(value) : 'must be a string';
  if (problem !== undefined) fail(`${what} ${JSON.stringify(value)}: ${problem}`);
}

function compileStringMatches(
  list: { type?: string; name: string; value: string }[] | undefined,
  what: 'header' | 'query parameter',
): StringMatchModel[] {
  const out: StringMatchModel[] = [];
  const seen = new Set<string>();
  for (const m of arr(list)) {
    if (!m || typeof m.name !== 'string' || m.name === '') fail(`${what} match without a name`);
    if (what === 'header') checkHeaderName(m.name, 'header match');
    checkValue(m.value ?? '', `${what} match ${m.name}`);
    const type = m.type ?? 'Exact';
    if (type !== 'Exact' && type !== 'RegularExpression')
      fail(`unsupported ${what} match type ${String(type)}`);
    const value = typeof m.value === 'string' ? m.value : '';
    if (type === 'RegularExpression') checkRegex(value, `${what} match ${m.name} regular expression`);
    // Header names are case-insensitive; query parameter names are not. The first duplicate wins.
    const name = what === 'header' ? m.name.toLowerCase() : m.name;
    if (seen.has(name)) continue;
    seen.add(name);
    out.push({ name, type, value });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** `/abc/` and `/abc` are the same prefix (element-wise); `/` stays `/`. */
function normalizePrefix(value: string): string {
  let v = value;
  while (v.length > 1 && v.endsWith('/')) v = v.slice(0, -1);
  return v;
}

export function compileHTTPMatch(m: HTTPRouteMatch | undefined): CompiledMatch {
  const match: RouteMatchModel = {};
  const pathSpec = m?.path ?? {};
  const type = pathSpec.type ?? 'PathPrefix';
  const value = pathSpec.value ?? '/';
  let pathRank: number;
  if (type === 'Exact' || type === 'PathPrefix') {
    if (typeof value !== 'string' || !value.startsWith('/'))
      fail(`path ${String(value)} must start with "/"`);
    if (/[?#]/.test(value)) fail(`path ${value} must not contain "?" or "#"`);
    checkValue(value, 'path');
    match.path = { type, value: type === 'PathPrefix' ? normalizePrefix(value) : value };
    pathRank = type === 'Exact' ? 0 : 2;
  } else if (type === 'RegularExpression') {
    checkRegex(value, 'path regular expression');
    match.path = { type, value };
    pathRank = 1;
  } else {
    fail(`unsupported path match type ${String(type)}`);
  }
  const headers = compileStringMatches(m?.headers, 'header');
  if (headers.length) match.headers = headers;
  const queryParams = compileStringMatches(m?.queryParams, 'query parameter');
  if (queryParams.length) match.queryParams = queryParams;
  if (m?.method !== undefined) {
    if (!HTTP_METHODS.has(m.method)) fail(`unsupported method ${String(m.method)}`);
    match.method = m.method;
  }
  return {
    match,
    precedence: {
      pathRank,
      pathLength: match.path!.value.length,
      hasMethod: match.method !== undefined,
      headers: headers.length,
      queryParams: queryParams.length,
    },
  };
}

const GRPC_NAME = /^[A-Za-z0-9_.]+$/;

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * A GRPCRoute method match becomes a path match on `/service/method`:
 *  - Exact with both: exact path; service only: prefix `/service`; method only: regex;
 *  - RegularExpression: regex `/<service or [^/]+>/<method or [^/]+>`.
 * GRPCRoute precedence is "longest service, then longest method, then most headers" whatever the
 * match type, so every gRPC match ranks like an exact path with length service*1000 + method. The
 * translator restricts these routes to gRPC requests (content-type application/grpc), so this only
 * orders them among themselves and ahead of HTTPRoute rules for gRPC requests.
 */
export function compileGRPCMatch(m: GRPCRouteMatch | undefined): CompiledMatch {
  const match: RouteMatchModel = { grpc: true };
  const method = m?.method;
  const type = method?.type ?? 'Exact';
  const svc = method?.service;
  const meth = method?.method;
  if ((svc !== undefined && typeof svc !== 'string') || (meth !== undefined && typeof meth !== 'string')) {
    fail('gRPC service and method must be strings');
  }
  let pathLength: number;
  if (type === 'Exact') {
    if (svc !== undefined && !GRPC_NAME.test(svc)) fail(`invalid gRPC service name ${JSON.stringify(svc)}`);
    if (meth !== undefined && !/^[A-Za-z0-9_]+$/.test(meth))
      fail(`invalid gRPC method name ${JSON.stringify(meth)}`);
    if (svc && meth) {
      match.path = { type: 'Exact', value: `/${svc}/${meth}` };
    } else if (svc) {
      match.path = { type: 'PathPrefix', value: `/${svc}` };
    } else if (meth) {
      match.path = { type: 'RegularExpression', value: `/[^/]+/${escapeRegex(meth)}` };
    } else {
      match.path = { type: 'PathPrefix', value: '/' };
    }
    pathLength = (svc?.length ?? 0) * 1000 + (meth?.length ?? 0);
  } else if (type === 'RegularExpression') {
    if (svc !== undefined) checkRegex(svc, 'gRPC service regular expression');
    if (meth !== undefined) checkRegex(meth, 'gRPC method regular expression');
    match.path = { type: 'RegularExpression', value: `/${svc || '[^/]+'}/${meth || '[^/]+'}` };
    pathLength = (svc?.length ?? 0) * 1000 + (meth?.length ?? 0);
  } else {
    fail(`unsupported gRPC method match type ${String(type)}`);
  }
  if (match.path.type === 'RegularExpression') checkRegex(match.path.value, 'gRPC path regular expression');
  const headers = compileStringMatches(m?.headers, 'header');
  if (headers.length) match.headers = headers;
  return {
    match,
    precedence: { pathRank: 0, pathLength, hasMethod: false, headers: headers.length, queryParams: 0 },
  };
}

// ------------------------------------------------------------------------------------------------
// Filters

function compileHeaderFilter(f: HTTPHeaderFilter | undefined, what: string): HeaderModifierModel | undefined {
  if (!f || typeof f !== 'object') fail(`${what} filter without configuration`);
  const pairs = (list: { name: string; value: string }[] | undefined) => {
    const seen = new Set<string>();
    const out: { name: string; value: string }[] = [];
    for (const h of arr(list)) {
      if (!h || typeof h.name !== 'string' || h.name === '') fail(`${what}: header without a name`);
      checkHeaderName(h.name, what);
      checkValue(h.value ?? '', `${what} ${h.name}`);
      const key = h.name.toLowerCase();
      if (UNMODIFIABLE_HEADERS.has(key))
        fail(`${what}: header ${h.name} cannot be modified (use URLRewrite hostname)`);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ name: h.name, value: typeof h.value === 'string' ? h.value : '' });
    }
    return out;
  };
  const model: HeaderModifierModel = {};
  const set = pairs(f.set);
  const add = pairs(f.add);
  const remove = arr(f.remove).filter((h): h is string => typeof h === 'string' && h !== '');
  for (const h of remove) {
    checkHeaderName(h, what);
    if (UNMODIFIABLE_HEADERS.has(h.toLowerCase())) fail(`${what}: header ${h} cannot be removed`);
  }
  if (set.length) model.set = set;
  if (add.length) model.add = add;
  if (remove.length) model.remove = [...new Set(remove)];
  return set.length || add.length || remove.length ? model : undefined;
}

function compilePathModifier(
  p: HTTPPathModifier | undefined,
  matches: CompiledMatch[],
  what: string,
): { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string } | undefined {
  if (!p) return undefined;
  if (p.type === 'ReplaceFullPath') {
    const value = p.replaceFullPath;
    if (typeof value !== 'string' || !value.startsWith('/'))
      fail(`${what}: replaceFullPath must start with "/"`);
    checkValue(value, `${what} replaceFullPath`);
    return { type: 'ReplaceFullPath', value };
  }
  if (p.type === 'ReplacePrefixMatch') {
    const value = p.replacePrefixMatch;
    if (typeof value !== 'string' || !value.startsWith('/'))
      fail(`${what}: replacePrefixMatch must start with "/"`);
    checkValue(value, `${what} replacePrefixMatch`);
    if (matches.some((m) => m.match.path?.type !== 'PathPrefix')) {
      fail(`${what}: ReplacePrefixMatch requires every match of the rule to be a PathPrefix match`);
    }
    return { type: 'ReplacePrefixMatch', value };
  }
  fail(`${what}: unsupported path modifier type ${String(p.type)}`);
}

function mirrorPercent(f: {
  percent?: number;
  fraction?: { numerator: number; denominator?: number };
}): number | undefined {
  if (f.percent !== undefined) {
    if (typeof f.percent !== 'number' || f.percent < 0 || f.percent > 100)
      fail('mirror percent must be 0-100');
    return f.percent === 100 ? undefined : f.percent;
  }
  if (f.fraction !== undefined) {
    if (!f.fraction || typeof f.fraction !== 'object') fail('mirror fraction must be an object');
    const num = f.fraction.numerator;
    const den = f.fraction.denominator ?? 100;
    if (typeof num !== 'number' || typeof den !== 'number' || num < 0 || den <= 0 || num > den) {
      fail('mirror fraction must satisfy 0 <= numerator <= denominator, denominator > 0');
    }
    const pct = (num / den) * 100;
    return pct === 100 ? undefined : pct;
  }
  return undefined;
}

function resolveInto(ctx: RuleContext, ref: BackendObjectReference): ClusterRef | undefined {
  const r = resolveBackendRef(
    ctx.view,
    { kind: ctx.kind, namespace: ctx.namespace },
    ref,
    ctx.use,
    ctx.policy,
  );
  if (!r.ok) {
    ctx.refProblems.push({ reason: r.reason, message: r.message });
    return undefined;
  }
  ctx.clusters.push(r.cluster);
  return r.cluster;
}

interface RuleParts {
  requestHeaders?: HeaderModifierModel;
  responseHeaders?: HeaderModifierModel;
  redirect?: Extract<RouteActionModel, { kind: 'redirect' }>;
  rewrite?: { hostname?: string; path?: { type: 'ReplaceFullPath' | 'ReplacePrefixMatch'; value: string } };
  mirrors: { cluster: string; percent?: number }[];
  /** An ExtensionRef we cannot resolve: requests must get an error, never skip the filter. */
  unresolvedExtension: boolean;
}

const SINGLE_USE_FILTERS = new Set([
  'RequestHeaderModifier',
  'ResponseHeaderModifier',
  'RequestRedirect',
  'URLRewrite',
]);

function compileFilters(
  ctx: RuleContext,
  filters: HTTPRouteFilter[],
  matches: CompiledMatch[],
  grpc: boolean,
): RuleParts {
  const parts: RuleParts = { mirrors: [], unresolvedExtension: false };
  const seen = new Set<string>();
  for (const f of filters) {
    const type = f?.type;
    if (SINGLE_USE_FILTERS.has(type)) {
      if (seen.has(type)) fail(`filter ${type} may appear only once per rule`, Reason.IncompatibleFilters);
      seen.add(type);
    }
    switch (type) {
      case 'RequestHeaderModifier':
        parts.requestHeaders = compileHeaderFilter(f.requestHeaderModifier, type);
        break;
      case 'ResponseHeaderModifier':
        parts.responseHeaders = compileHeaderFilter(f.responseHeaderModifier, type);
        break;
      case 'RequestRedirect': {
        if (grpc) fail('RequestRedirect is not a GRPCRoute filter');
        const r = f.requestRedirect;
        if (!r || typeof r !== 'object') fail('RequestRedirect filter without configuration');
        if (r.scheme !== undefined && r.scheme !== 'http' && r.scheme !== 'https') {
          fail(`unsupported redirect scheme ${String(r.scheme)}`);
        }
        const statusCode = r.statusCode ?? 302;
        if (!REDIRECT_CODES.has(statusCode)) fail(`unsupported redirect status code ${String(r.statusCode)}`);
        if (r.port !== undefined && (!Number.isInteger(r.port) || r.port < 1 || r.port > 65535)) {
          fail(`invalid redirect port ${String(r.port)}`);
        }
        const redirect: RuleParts['redirect'] = { kind: 'redirect', statusCode };
        if (r.scheme) redirect.scheme = r.scheme;
        if (r.hostname) {
          checkHostname(r.hostname, 'RequestRedirect hostname');
          redirect.hostname = r.hostname;
        }
        if (r.port !== undefined) redirect.port = r.port;
        const path = compilePathModifier(r.path, matches, 'RequestRedirect');
        if (path) redirect.path = path;
        parts.redirect = redirect;
        break;
      }
      case 'URLRewrite': {
        if (grpc) fail('URLRewrite is not a GRPCRoute filter');
        const u = f.urlRewrite;
        if (!u || typeof u !== 'object') fail('URLRewrite filter without configuration');
        const rewrite: NonNullable<RuleParts['rewrite']> = {};
        if (u.hostname) {
          checkHostname(u.hostname, 'URLRewrite hostname');
          rewrite.hostname = u.hostname;
        }
        const path = compilePathModifier(u.path, matches, 'URLRewrite');
        if (path) rewrite.path = path;
        parts.rewrite = rewrite;
        break;
      }
      case 'RequestMirror': {
        const m = f.requestMirror;
        if (!m || typeof m !== 'object' || !m.backendRef) fail('RequestMirror filter without backendRef');
        const percent = mirrorPercent(m);
        const cluster = resolveInto(ctx, m.backendRef);
        if (cluster && percent !== 0) {
          parts.mirrors.push(
            percent === undefined ? { cluster: cluster.name } : { cluster: cluster.name, percent },
          );
        }
        break;
      }
      case 'ExtensionRef': {
        const ref = f.extensionRef;
        ctx.refProblems.push({
          reason: Reason.InvalidKind,
          message:
            `ExtensionRef filter ${ref ? `${ref.group}/${ref.kind} ${ref.name}` : ''} is not supported`.replace(
              /\s+/g,
              ' ',
            ),
        });
        parts.unresolvedExtension = true;
        break;
      }
      default:
        fail(`unsupported filter type ${String(type)}`);
    }
  }
  if (parts.redirect && parts.rewrite) {
    fail('RequestRedirect and URLRewrite cannot be used in the same rule', Reason.IncompatibleFilters);
  }
  return parts;
}

// ------------------------------------------------------------------------------------------------
// Backends

function compileBackends(
  ctx: RuleContext,
  refs: HTTPBackendRef[],
): { backends: WeightedCluster[]; invalidWeight: number; totalWeight: number } {
  const byCluster = new Map<string, number>();
  let invalidWeight = 0;
  let totalWeight = 0;
  for (const ref of refs) {
    if (!ref || typeof ref !== 'object') fail('invalid backendRef');
    const weight = ref.weight ?? 1;
    if (!Number.isInteger(weight) || weight < 0 || weight > MAX_WEIGHT)
      fail(`invalid backend weight ${String(weight)}`);
    if (arr(ref.filters).length > 0) fail('filters on backendRefs are not supported');
    const cluster = resolveInto(ctx, ref);
    totalWeight += weight;
    if (!cluster) {
      invalidWeight += weight;
      continue;
    }
    if (weight > 0) byCluster.set(cluster.name, (byCluster.get(cluster.name) ?? 0) + weight);
  }
  const backends = [...byCluster.entries()]
    .map(([cluster, weight]) => ({ cluster, weight }))
    .sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  return { backends, invalidWeight, totalWeight };
}

function timeoutsOf(t: HTTPRouteTimeouts | undefined): { timeoutMs?: number; perTryTimeoutMs?: number } {
  const out: { timeoutMs?: number; perTryTimeoutMs?: number } = {};
  if (!t) return out;
  if (t.request !== undefined) {
    const ms = parseDuration(t.request);
    if (ms === undefined) fail(`invalid timeouts.request ${JSON.stringify(t.request)}`);
    out.timeoutMs = ms;
  }
  if (t.backendRequest !== undefined) {
    const ms = parseDuration(t.backendRequest);
    if (ms === undefined) fail(`invalid timeouts.backendRequest ${JSON.stringify(t.backendRequest)}`);
    if (out.timeoutMs !== undefined && out.timeoutMs !== 0 && (ms === 0 || ms > out.timeoutMs)) {
      fail('timeouts.backendRequest must not be longer than timeouts.request');
    }
    out.perTryTimeoutMs = ms;
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Routes

interface GenericRule {
  matches: CompiledMatch[];
  filters: HTTPRouteFilter[];
  backendRefs: HTTPBackendRef[];
  timeouts?: HTTPRouteTimeouts;
}

function compileRoute(
  view: StoreView,
  obj: KubeObject,
  kind: 'HTTPRoute' | 'GRPCRoute',
  hostnames: string[],
  rules: (() => GenericRule)[],
  policy: BackendPolicy,
): CompiledRoute {
  const id = routeIdentity(kind, obj);
  const grpc = kind === 'GRPCRoute';
  const clusters: ClusterRef[] = [];
  const refProblems: RefProblem[] = [];
  const ruleProblems: RuleProblem[] = [];
  const entries: RouteEntry[] = [];
  rules.forEach((readRule, i) => {
    // References are collected per rule and kept only when the rule is kept.
    const ctx: RuleContext = {
      view,
      policy,
      kind,
      namespace: id.namespace,
      use: grpc ? 'grpc' : 'http',
      clusters: [],
      refProblems: [],
    };
    try {
      const rule = readRule();
      const parts = compileFilters(ctx, rule.filters, rule.matches, grpc);
      const { backends, invalidWeight } = compileBackends(ctx, rule.backendRefs);
      const timeouts = grpc ? {} : timeoutsOf(rule.timeouts);
      const errorStatus = grpc ? 503 : 500;
      let action: RouteActionModel;
      if (parts.unresolvedExtension) action = { kind: 'direct', status: errorStatus };
      else if (parts.redirect) action = parts.redirect;
      else if (backends.length === 0) action = { kind: 'direct', status: errorStatus };
      else {
        const forward: Extract<RouteActionModel, { kind: 'forward' }> = { kind: 'forward', backends };
        if (invalidWeight > 0) forward.invalidWeight = invalidWeight;
        if (parts.rewrite) forward.rewrite = parts.rewrite;
        if (parts.mirrors.length) forward.mirrors = parts.mirrors;
        action = forward;
      }
      rule.matches.forEach((m, j) => {
        const model: RouteModel = {
          name: `${kind}/${id.namespace}/${id.name}/rule/${i}/match/${j}`,
          match: m.match,
          action,
        };
        if (parts.requestHeaders) model.requestHeaders = parts.requestHeaders;
        if (parts.responseHeaders) model.responseHeaders = parts.responseHeaders;
        if (timeouts.timeoutMs !== undefined) model.timeoutMs = timeouts.timeoutMs;
        if (timeouts.perTryTimeoutMs !== undefined) model.perTryTimeoutMs = timeouts.perTryTimeoutMs;
        entries.push({ model, precedence: { ...m.precedence, rule: i, match: j } });
      });
      clusters.push(...ctx.clusters);
      refProblems.push(...ctx.refProblems);
    } catch (e) {
      if (!(e instanceof RuleError)) throw e;
      ruleProblems.push({ rule: i, reason: e.reason, message: `rule ${i}: ${e.message}` });
      // A dropped rule's references still count for ResolvedRefs: the user should see them.
      refProblems.push(...ctx.refProblems);
    }
  });
  return {
    id,
    object: obj,
    hostnames,
    entries,
    clusters,
    refProblem: refProblems[0],
    ruleProblems,
    ruleCount: rules.length,
  };
}

function hostnamesOf(spec: { hostnames?: string[] } | undefined): string[] {
  return arr(spec?.hostnames).filter((h): h is string => typeof h === 'string' && h !== '');
}

export function compileHTTPRoute(
  view: StoreView,
  obj: KubeObject,
  policy: BackendPolicy = {},
): CompiledRoute {
  const spec = (obj.spec ?? {}) as HTTPRouteSpec;
  // The CRD defaults rules to one rule matching PathPrefix "/" with no backends (answers 500).
  const rawRules = Array.isArray(spec.rules) ? spec.rules : [{}];
  const rules = rawRules.map((r) => () => {
    if (!r || typeof r !== 'object') fail('invalid rule');
    const rawMatches = Array.isArray(r.matches) && r.matches.length > 0 ? r.matches : [undefined];
    return {
      matches: rawMatches.map((m) => compileHTTPMatch(m)),
      filters: arr(r.filters),
      backendRefs: arr(r.backendRefs),
      timeouts: r.timeouts,
    };
  });
  return compileRoute(view, obj, 'HTTPRoute', hostnamesOf(spec), rules, policy);
}

export function compileGRPCRoute(
  view: StoreView,
  obj: KubeObject,
  policy: BackendPolicy = {},
): CompiledRoute {
  const spec = (obj.spec ?? {}) as GRPCRouteSpec;
  const rules = arr(spec.rules).map((r) => () => {
    if (!r || typeof r !== 'object') fail('invalid rule');
    const rawMatches = Array.isArray(r.matches) && r.matches.length > 0 ? r.matches : [undefined];
    return {
      matches: rawMatches.map((m) => compileGRPCMatch(m)),
      filters: arr(r.filters) as HTTPRouteFilter[],
      backendRefs: arr(r.backendRefs) as HTTPBackendRef[],
    };
  });
  return compileRoute(view, obj, 'GRPCRoute', hostnamesOf(spec), rules, policy);
}
