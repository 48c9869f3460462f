/**
 * Compiles HTTPRoute and GRPCRoute rules into RouteModels, independently of any listener:
 * matches, filters, backends, timeouts, plus the problems that decide the route's status
 * (unresolved references → ResolvedRefs=False; unsupported values → the rule is dropped).
 */
import type { StoreView } from '../resolved';
import type { KubeObject } from '../../store/objects';
import type {
  CorsModel,
  HeaderModifierModel,
  RouteActionModel,
  RouteModel,
  WeightedCluster,
} from '../../model/fleet';
import type {
  BackendObjectReference,
  GRPCRouteSpec,
  HTTPBackendRef,
  HTTPHeaderFilter,
  HTTPPathModifier,
  HTTPRouteFilter,
  HTTPRouteSpec,
  HTTPRouteRetry,
  HTTPRouteTimeouts,
} from '../api';
import { Reason } from '../../status/conditions';
import type { BackendUse, ClusterRef } from '../backends';
import { resolveBackendRef } from '../backends';
import type { BackendPolicy } from '../backends';
import { parseDuration } from './duration';
import { retryOf } from './retry';
import { compileCors } from './cors';
import { duplicateNames, ruleLabel, ruleNamesOf } from './rule-names';
import type { CompiledMatch } from './matches';
import { compileGRPCMatch, compileHTTPMatch } from './matches';
import {
  RuleError,
  UNMODIFIABLE_HEADERS,
  arr,
  checkHeaderName,
  checkHostname,
  checkValue,
  fail,
} from './rule-checks';
import { routeIdentity } from './identity';
import type { CompiledRoute, RefProblem, RouteEntry, RouteKind, RuleProblem } from './types';
import { compareStrings } from '../../util/compare';
import { namedRuleName, routeMatchName } from '../../model/names';

const REDIRECT_CODES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const MAX_WEIGHT = 1_000_000;

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
// Filters

/**
 * Compiles a RequestHeaderModifier or ResponseHeaderModifier filter; undefined when it changes
 * nothing. Drops the rule on an invalid name or value, or on a header Envoy will not modify.
 */
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

/**
 * Compiles a URLRewrite or RequestRedirect path modifier. Drops the rule on an invalid value, or on
 * ReplacePrefixMatch in a rule with a match that is not a PathPrefix.
 */
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

/**
 * Returns the share of requests a RequestMirror filter mirrors, in percent; undefined means all.
 * Drops the rule on an out-of-range percent or fraction.
 */
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

/**
 * Resolves a backendRef of the rule and records the result in `ctx` (its cluster, or its problem);
 * returns the cluster, or undefined when the ref is unusable.
 */
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
  cors?: CorsModel;
  /** An ExtensionRef we cannot resolve: requests must get an error, never skip the filter. */
  unresolvedExtension: boolean;
}

const SINGLE_USE_FILTERS = new Set([
  'RequestHeaderModifier',
  'ResponseHeaderModifier',
  'RequestRedirect',
  'URLRewrite',
  'CORS',
]);

/** Compiles a rule's filters into header modifiers, redirect, rewrite and mirrors. */
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
      case 'CORS':
        if (grpc) fail('CORS is not a GRPCRoute filter');
        parts.cors = compileCors(f.cors);
        break;
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

/** The header modifiers of one backendRef's filters. */
type BackendFilters = Pick<WeightedCluster, 'requestHeaders' | 'responseHeaders'>;

/**
 * Compiles the filters of one backendRef: RequestHeaderModifier and ResponseHeaderModifier, each
 * at most once (docs/gateway-api.md §22). Drops the rule on any other filter type.
 */
function compileBackendFilters(filters: HTTPRouteFilter[]): BackendFilters {
  const out: BackendFilters = {};
  const seen = new Set<string>();
  for (const f of filters) {
    const type = f?.type;
    if (seen.has(type)) fail(`backendRef filter ${type} may appear only once`, Reason.IncompatibleFilters);
    seen.add(type);
    if (type === 'RequestHeaderModifier') {
      const m = compileHeaderFilter(f.requestHeaderModifier, `backendRef ${type}`);
      if (m) out.requestHeaders = m;
    } else if (type === 'ResponseHeaderModifier') {
      const m = compileHeaderFilter(f.responseHeaderModifier, `backendRef ${type}`);
      if (m) out.responseHeaders = m;
    } else fail(`filter ${String(type)} on a backendRef is not supported`);
  }
  return out;
}

/**
 * Compiles a rule's backendRefs into weighted clusters (sorted by cluster name, then by filters;
 * the weights of refs to one cluster with the same filters summed), with the total weight and the
 * weight of the refs that did not resolve.
 */
function compileBackends(
  ctx: RuleContext,
  refs: HTTPBackendRef[],
): { backends: WeightedCluster[]; invalidWeight: number; totalWeight: number } {
  const byTarget = new Map<string, WeightedCluster>();
  let invalidWeight = 0;
  let totalWeight = 0;
  for (const ref of refs) {
    if (!ref || typeof ref !== 'object') fail('invalid backendRef');
    const weight = ref.weight ?? 1;
    if (!Number.isInteger(weight) || weight < 0 || weight > MAX_WEIGHT)
      fail(`invalid backend weight ${String(weight)}`);
    const headers = compileBackendFilters(arr(ref.filters));
    const cluster = resolveInto(ctx, ref);
    totalWeight += weight;
    if (!cluster) {
      invalidWeight += weight;
      continue;
    }
    if (weight === 0) continue;
    const key = `${cluster.name}\n${JSON.stringify(headers)}`;
    const entry = byTarget.get(key);
    if (entry) entry.weight += weight;
    else byTarget.set(key, { cluster: cluster.name, weight, ...headers });
  }
  const keys = [...byTarget.keys()].sort(compareStrings);
  return { backends: keys.map((k) => byTarget.get(k)!), invalidWeight, totalWeight };
}

/**
 * Returns a rule's request and backendRequest timeouts in milliseconds. Drops the rule on an
 * invalid duration or a backendRequest timeout longer than the request timeout.
 */
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
  retry?: HTTPRouteRetry;
}

/**
 * Compiles the rules of an HTTPRoute or GRPCRoute into route entries; a rule that fails a check is
 * dropped with its problem, and references are kept only for the rules that are kept.
 */
function compileRoute(
  view: StoreView,
  obj: KubeObject,
  kind: 'HTTPRoute' | 'GRPCRoute',
  hostnames: string[],
  rules: (() => GenericRule)[],
  policy: BackendPolicy,
  names: (string | undefined)[],
): CompiledRoute {
  const id = routeIdentity(kind, obj);
  const grpc = kind === 'GRPCRoute';
  const clusters: ClusterRef[] = [];
  const refProblems: RefProblem[] = [];
  const ruleProblems: RuleProblem[] = [];
  const entries: RouteEntry[] = [];
  const duplicates = duplicateNames(names);
  rules.forEach((readRule, i) => {
    const label = ruleLabel(i, names[i]);
    const earlier = duplicates[i];
    if (earlier !== undefined) {
      const message = `${label}: the name is already used by rule ${earlier}; rule names must be unique`;
      ruleProblems.push({ rule: i, reason: Reason.UnsupportedValue, message });
      return;
    }
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
      const retry = grpc ? undefined : retryOf(rule.retry);
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
          name: routeMatchName(kind, id.namespace, id.name, i, j),
          match: m.match,
          action,
        };
        if (parts.requestHeaders) model.requestHeaders = parts.requestHeaders;
        if (parts.responseHeaders) model.responseHeaders = parts.responseHeaders;
        if (timeouts.timeoutMs !== undefined) model.timeoutMs = timeouts.timeoutMs;
        if (timeouts.perTryTimeoutMs !== undefined) model.perTryTimeoutMs = timeouts.perTryTimeoutMs;
        if (retry) model.retry = retry;
        if (parts.cors) model.cors = parts.cors;
        const ruleName = names[i];
        if (ruleName !== undefined) model.statPrefix = namedRuleName(kind, id.namespace, id.name, ruleName);
        entries.push({ model, precedence: { ...m.precedence, rule: i, match: j } });
      });
      clusters.push(...ctx.clusters);
      refProblems.push(...ctx.refProblems);
    } catch (e) {
      if (!(e instanceof RuleError)) throw e;
      ruleProblems.push({ rule: i, reason: e.reason, message: `${label}: ${e.message}` });
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

/** Returns a route's spec.hostnames, leaving out anything that is not a non-empty string. */
function hostnamesOf(spec: { hostnames?: string[] } | undefined): string[] {
  return arr(spec?.hostnames).filter((h): h is string => typeof h === 'string' && h !== '');
}

/** Compiles an HTTPRoute: every rule to route entries, with the problems that decide its status. */
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
      retry: r.retry,
    };
  });
  return compileRoute(view, obj, 'HTTPRoute', hostnamesOf(spec), rules, policy, ruleNamesOf(rawRules));
}

/** Compiles a GRPCRoute: every rule to route entries, with the problems that decide its status. */
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
  return compileRoute(view, obj, 'GRPCRoute', hostnamesOf(spec), rules, policy, ruleNamesOf(spec.rules));
}
