/**
 * Compiles an HTTPRoute CORS filter into a CorsModel (docs/gateway-api.md §20): allowed origins
 * become exact or regular-expression matchers Envoy accepts; lists are checked as the CRD checks
 * them, because in Kubernetes mode an older or missing schema may have let anything through.
 */
import type { CorsModel, StringMatchModel } from '../../model/fleet';
import type { HTTPCORSFilter } from '../api';
import { checkRegex } from './matches';
import { arr, checkHeaderName, fail } from './rule-checks';

const METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
  '*',
]);

/** An origin as the CRD allows it: scheme, host (`*`, `*.suffix` or a name), optional port. */
const ORIGIN = /^(https?):\/\/(\*|(\*\.)?([a-z0-9-]+(\.[a-z0-9-]+)*))(:([0-9]{1,5}))?$/;
/** A host name as an Origin header carries it: DNS labels, or an IPv4 address. */
const HOST_CHARS = '[-.a-z0-9]+';
const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443' };
/** Access-Control-Max-Age is sent as given; the CRD bounds it to a positive int32. */
const MAX_AGE_LIMIT = 2_147_483_647;

/** Returns `literal` escaped for an RE2 pattern (origins hold only letters, digits, `-`, `.` and `:`). */
function escapeDots(literal: string): string {
  return literal.replace(/\./g, '\\.');
}

/**
 * Compiles one allowed origin into matchers of the Origin header.
 *
 * Browsers send origins lowercased and without the scheme's default port, so an origin without a
 * port matches the Origin with no port or with the default one (the CRD says the default port is
 * assumed). A host wildcard `*.example.com` matches one or more labels before `.example.com`; a
 * host `*` alone, any host; `*` as the whole origin, any Origin.
 */
export function originMatchers(origin: unknown): StringMatchModel[] {
  if (typeof origin !== 'string') fail(`CORS allowOrigins: invalid origin ${JSON.stringify(origin)}`);
  if (origin === '*') return [{ name: 'origin', type: 'RegularExpression', value: '.*' }];
  const lower = origin.toLowerCase();
  const m = ORIGIN.exec(lower);
  if (!m) fail(`CORS allowOrigins: invalid origin ${JSON.stringify(origin)}`);
  const [, scheme, host, wildcardPrefix, suffix, , , port] = m;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    fail(`CORS allowOrigins: invalid port in ${JSON.stringify(origin)}`);
  }
  if (host !== '*' && !wildcardPrefix) {
    const base = `${scheme}://${host}`;
    if (port !== undefined) return [{ name: 'origin', type: 'Exact', value: `${base}:${port}` }];
    return [
      { name: 'origin', type: 'Exact', value: base },
      { name: 'origin', type: 'Exact', value: `${base}:${DEFAULT_PORT[scheme]}` },
    ];
  }
  const hostPattern = host === '*' ? HOST_CHARS : `${HOST_CHARS}\\.${escapeDots(suffix)}`;
  const portPattern = port !== undefined ? `:${port}` : `(:${DEFAULT_PORT[scheme]})?`;
  const regex = `${scheme}://${hostPattern}${portPattern}`;
  checkRegex(regex, `CORS allowOrigins ${JSON.stringify(origin)}: origin regular expression`);
  return [{ name: 'origin', type: 'RegularExpression', value: regex }];
}

/** Returns a list of header names, de-duplicated ignoring case, in the order given. */
function headerNames(list: unknown, what: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const h of arr(list as string[])) {
    if (h !== '*') checkHeaderName(h, `CORS ${what}`);
    if (seen.has(h.toLowerCase())) continue;
    seen.add(h.toLowerCase());
    out.push(h);
  }
  if (out.includes('*') && out.length > 1) fail(`CORS ${what}: '*' cannot be combined with other names`);
  return out;
}

/** Compiles a CORS filter; drops the rule on a value Envoy or the CRD would refuse. */
export function compileCors(f: HTTPCORSFilter | undefined): CorsModel {
  if (!f || typeof f !== 'object') fail('CORS filter without configuration');
  const origins = arr(f.allowOrigins);
  if (origins.includes('*') && origins.length > 1)
    fail("CORS allowOrigins: '*' cannot be combined with other origins");
  const methods: string[] = [];
  for (const m of arr(f.allowMethods)) {
    if (typeof m !== 'string' || !METHODS.has(m))
      fail(`CORS allowMethods: invalid method ${JSON.stringify(m)}`);
    if (!methods.includes(m)) methods.push(m);
  }
  if (methods.includes('*') && methods.length > 1)
    fail("CORS allowMethods: '*' cannot be combined with other methods");
  const model: CorsModel = {
    origins: origins.flatMap((o) => originMatchers(o)),
    allowMethods: methods,
    allowHeaders: headerNames(f.allowHeaders, 'allowHeaders'),
    exposeHeaders: headerNames(f.exposeHeaders, 'exposeHeaders'),
    allowCredentials: f.allowCredentials === true,
  };
  if (f.maxAge !== undefined) {
    if (!Number.isInteger(f.maxAge) || f.maxAge < 1 || f.maxAge > MAX_AGE_LIMIT) {
      fail(`CORS maxAge: invalid value ${JSON.stringify(f.maxAge)}`);
    }
    model.maxAgeSeconds = f.maxAge;
  }
  return model;
}
