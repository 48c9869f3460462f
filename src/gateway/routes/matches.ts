/**
 * Compiles HTTPRoute and GRPCRoute matches to RouteMatchModels, with the keys that order them by
 * Gateway API precedence (docs/gateway-api.md §12).
 */
import type { RouteMatchModel, StringMatchModel } from '../../model/fleet';
import type { GRPCRouteMatch, HTTPRouteMatch } from '../api';
import { arr, checkHeaderName, checkValue, fail } from './rule-checks';
import type { EntryPrecedence } from './types';
import { byName } from '../../util/compare';
import { envoyRegexProblem } from '../../re2/envoy-regex';

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

/** A match compiled to the model plus its precedence keys (rule/match indexes filled later). */
export interface CompiledMatch {
  match: RouteMatchModel;
  precedence: Omit<EntryPrecedence, 'rule' | 'match'>;
}

/**
 * Drops the rule when Envoy would reject the regex (RE2 syntax or program size, src/re2).
 *
 * Envoy would NACK the listener's whole RouteConfiguration, which other routes share
 * (docs/gateway-api.md §14).
 */
export function checkRegex(value: unknown, what: string): asserts value is string {
  const problem = typeof value === 'string' ? envoyRegexProblem(value) : 'must be a string';
  if (problem !== undefined) fail(`${what} ${JSON.stringify(value)}: ${problem}`);
}

/**
 * Compiles header or query parameter matches, sorted by name; of matches with the same name
 * (case-insensitive for headers) the first wins.
 */
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
  return out.sort(byName);
}

/**
 * Returns a path prefix without its trailing slash; `/` stays `/`.
 *
 * `/abc/` and `/abc` are the same prefix (prefixes match element-wise).
 */
function normalizePrefix(value: string): string {
  let v = value;
  while (v.length > 1 && v.endsWith('/')) v = v.slice(0, -1);
  return v;
}

/**
 * Compiles one HTTPRoute match (path, headers, query parameters, method) with its precedence keys;
 * drops the rule (fail) on a value Envoy would refuse.
 */
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

/** Returns `s` with every regex metacharacter (and `/`) escaped. */
function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * Compiles one GRPCRoute match into a path match on `/service/method` with its precedence keys:
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
