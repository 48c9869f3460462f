/**
 * The HTTPRoute CRD's `spec` (v1.6.1 standard channel): path, header, query and method matches,
 * the HTTP filters (CORS, redirects, rewrites), timeouts and the rules tying them together; plus
 * the experimental channel's `retry`, which Convoy implements.
 */
import type { ObjectNode } from '../schema';
import { arr, bool, int, obj, rule, str, withRules } from '../schema';
import {
  CORS_ORIGIN,
  DURATION,
  HEADER_NAME,
  PATH_CHARS_RE,
  port,
  preciseHostname,
  sectionName,
} from './common';
import { backendRef, weight } from './backend-refs';
import { TOTAL_MATCHES_MESSAGE, headerMatch, parentRefs, routeHostnames, totalMatches } from './route-common';
import { extensionRef, filterTypeRules, headerModifier, notRepeated, requestMirror } from './route-filters';

interface PathModifier {
  type: string;
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}
const pathModifier = () =>
  obj(
    {
      replaceFullPath: str({ maxLength: 1024 }),
      replacePrefixMatch: str({ maxLength: 1024 }),
      type: str({ enum: ['ReplaceFullPath', 'ReplacePrefixMatch'] }),
    },
    {
      required: ['type'],
      rules: [
        // self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) : true
        rule<PathModifier>(
          "replaceFullPath must be specified when type is set to 'ReplaceFullPath'",
          (p) => p.type !== 'ReplaceFullPath' || p.replaceFullPath !== undefined,
        ),
        // has(self.replaceFullPath) ? self.type == 'ReplaceFullPath' : true
        rule<PathModifier>(
          "type must be 'ReplaceFullPath' when replaceFullPath is set",
          (p) => p.replaceFullPath === undefined || p.type === 'ReplaceFullPath',
        ),
        // self.type == 'ReplacePrefixMatch' ? has(self.replacePrefixMatch) : true
        rule<PathModifier>(
          "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'",
          (p) => p.type !== 'ReplacePrefixMatch' || p.replacePrefixMatch !== undefined,
        ),
        // has(self.replacePrefixMatch) ? self.type == 'ReplacePrefixMatch' : true
        rule<PathModifier>(
          "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set",
          (p) => p.replacePrefixMatch === undefined || p.type === 'ReplacePrefixMatch',
        ),
      ],
    },
  );

// !('*' in self && self.size() > 1)
const noWildcardWithOthers = (message: string) =>
  rule<string[]>(message, (xs) => !(xs.includes('*') && xs.length > 1));

const cors = () =>
  obj({
    allowCredentials: bool(),
    allowHeaders: arr(str({ minLength: 1, maxLength: 256, pattern: HEADER_NAME }), {
      maxItems: 64,
      listType: 'set',
      rules: [noWildcardWithOthers("AllowHeaders cannot contain '*' alongside other methods")],
    }),
    allowMethods: arr(
      str({ enum: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', '*'] }),
      {
        maxItems: 9,
        listType: 'set',
        rules: [noWildcardWithOthers("AllowMethods cannot contain '*' alongside other methods")],
      },
    ),
    allowOrigins: arr(str({ minLength: 1, maxLength: 253, pattern: CORS_ORIGIN }), {
      maxItems: 64,
      listType: 'set',
      rules: [noWildcardWithOthers("AllowOrigins cannot contain '*' alongside other origins")],
    }),
    exposeHeaders: arr(str({ minLength: 1, maxLength: 256, pattern: HEADER_NAME }), {
      maxItems: 64,
      listType: 'set',
    }),
    maxAge: int({ format: 'int32', minimum: 1, default: 5 }),
  });

const HTTP_FILTER_TYPES = [
  'RequestHeaderModifier',
  'ResponseHeaderModifier',
  'RequestMirror',
  'RequestRedirect',
  'URLRewrite',
  'ExtensionRef',
  'CORS',
];

const httpFilter = obj(
  {
    cors: cors(),
    extensionRef: extensionRef(),
    requestHeaderModifier: headerModifier(),
    requestMirror: requestMirror(),
    requestRedirect: obj({
      hostname: preciseHostname(),
      path: pathModifier(),
      port: port(),
      scheme: str({ enum: ['http', 'https'] }),
      statusCode: int({ enum: [301, 302, 303, 307, 308], default: 302 }),
    }),
    responseHeaderModifier: headerModifier(),
    type: str({ enum: HTTP_FILTER_TYPES }),
    urlRewrite: obj({ hostname: preciseHostname(), path: pathModifier() }),
  },
  {
    required: ['type'],
    rules: filterTypeRules([
      ['CORS', 'cors'],
      ['RequestHeaderModifier', 'requestHeaderModifier'],
      ['ResponseHeaderModifier', 'responseHeaderModifier'],
      ['RequestMirror', 'requestMirror'],
      ['RequestRedirect', 'requestRedirect'],
      ['URLRewrite', 'urlRewrite'],
      ['ExtensionRef', 'extensionRef'],
    ]),
  },
);

const httpFilters = () =>
  arr(httpFilter, {
    maxItems: 16,
    rules: [
      // !(self.exists(f, f.type == 'RequestRedirect') && self.exists(f, f.type == 'URLRewrite'))
      rule<{ type: string }[]>(
        'May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both',
        (fs) => !(fs.some((f) => f.type === 'RequestRedirect') && fs.some((f) => f.type === 'URLRewrite')),
      ),
      notRepeated('CORS'),
      notRepeated('RequestHeaderModifier'),
      notRepeated('ResponseHeaderModifier'),
      notRepeated('RequestRedirect'),
      notRepeated('URLRewrite'),
    ],
  });

interface PathMatch {
  type: string;
  value: string;
}
const exactOrPrefix = (p: PathMatch) => p.type === 'Exact' || p.type === 'PathPrefix';
const pathRule = (message: string, ok: (value: string) => boolean) =>
  rule<PathMatch>(message, (p) => !exactOrPrefix(p) || ok(p.value));

const pathMatch = obj(
  {
    type: str({ enum: ['Exact', 'PathPrefix', 'RegularExpression'], default: 'PathPrefix' }),
    value: str({ maxLength: 1024, default: '/' }),
  },
  {
    default: { type: 'PathPrefix', value: '/' },
    rules: [
      // (self.type in ['Exact','PathPrefix']) ? self.value.startsWith('/') : true
      pathRule(
        "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
        (v) => v.startsWith('/'),
      ),
      // … ? !self.value.contains('//') : true   (and the same for the others below)
      pathRule("must not contain '//' when type one of ['Exact', 'PathPrefix']", (v) => !v.includes('//')),
      pathRule("must not contain '/./' when type one of ['Exact', 'PathPrefix']", (v) => !v.includes('/./')),
      pathRule(
        "must not contain '/../' when type one of ['Exact', 'PathPrefix']",
        (v) => !v.includes('/../'),
      ),
      pathRule("must not contain '%2f' when type one of ['Exact', 'PathPrefix']", (v) => !v.includes('%2f')),
      pathRule("must not contain '%2F' when type one of ['Exact', 'PathPrefix']", (v) => !v.includes('%2F')),
      pathRule("must not contain '#' when type one of ['Exact', 'PathPrefix']", (v) => !v.includes('#')),
      pathRule("must not end with '/..' when type one of ['Exact', 'PathPrefix']", (v) => !v.endsWith('/..')),
      pathRule("must not end with '/.' when type one of ['Exact', 'PathPrefix']", (v) => !v.endsWith('/.')),
      // self.type in ['Exact','PathPrefix'] || self.type == 'RegularExpression'
      rule<PathMatch>(
        "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']",
        (p) => exactOrPrefix(p) || p.type === 'RegularExpression',
      ),
      // (self.type in ['Exact','PathPrefix']) ? self.value.matches(r"""^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$""") : true
      pathRule(
        "must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) for types ['Exact', 'PathPrefix']",
        (v) => PATH_CHARS_RE.test(v),
      ),
    ],
  },
);

const httpMatch = obj({
  headers: headerMatch(4096),
  method: str({ enum: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'] }),
  path: pathMatch,
  queryParams: headerMatch(1024),
});

/** Parses a GEP-2257 duration (already pattern-checked) into milliseconds. */
export function parseGatewayDuration(d: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const m of d.matchAll(/([0-9]+)(ms|h|m|s)/g)) total += Number(m[1]) * units[m[2]];
  return total;
}

interface Filter {
  type: string;
  requestRedirect?: { path?: PathModifier };
  urlRewrite?: { path?: PathModifier };
}
interface HTTPRule {
  matches: { path?: PathMatch }[];
  filters?: Filter[];
  backendRefs?: { filters?: Filter[] }[];
}
const prefixRewrite = (which: 'requestRedirect' | 'urlRewrite') => (f: Filter) => {
  const p = f[which]?.path;
  return !!p && p.type === 'ReplacePrefixMatch' && p.replacePrefixMatch !== undefined;
};
const onePrefixMatch = (r: HTTPRule) =>
  r.matches.length === 1 && r.matches[0].path !== undefined && r.matches[0].path.type === 'PathPrefix';
const exactlyOne = <T>(xs: T[] | undefined, p: (x: T) => boolean) => (xs ?? []).filter(p).length === 1;

/** HTTPRouteRule.retry (GEP-1731), as the v1.6.1 experimental-channel CRD has it. */
const retry = (): ObjectNode => ({
  ...obj({
    attempts: int({ minimum: 1 }),
    backoff: str({ pattern: DURATION }),
    codes: arr(int({ minimum: 400, maximum: 599 }), { listType: 'set' }),
  }),
  channel: 'experimental',
});

const httpRule = obj(
  {
    backendRefs: arr(backendRef({ filters: httpFilters(), weight: weight() }), { maxItems: 16 }),
    filters: httpFilters(),
    matches: arr(httpMatch, { maxItems: 64, default: [{ path: { type: 'PathPrefix', value: '/' } }] }),
    name: sectionName(),
    retry: retry(),
    timeouts: withRules(
      obj({ backendRequest: str({ pattern: DURATION }), request: str({ pattern: DURATION }) }),
      // !(has(self.request) && has(self.backendRequest) && duration(self.request) != duration('0s') && duration(self.backendRequest) > duration(self.request))
      rule<{ request?: string; backendRequest?: string }>(
        'backendRequest timeout cannot be longer than request timeout',
        (t) =>
          !(
            t.request !== undefined &&
            t.backendRequest !== undefined &&
            parseGatewayDuration(t.request) !== 0 &&
            parseGatewayDuration(t.backendRequest) > parseGatewayDuration(t.request)
          ),
      ),
    ),
  },
  {
    rules: [
      // (has(self.backendRefs) && size(self.backendRefs) > 0) ? (!has(self.filters) || self.filters.all(f, !has(f.requestRedirect))): true
      rule<HTTPRule>(
        'RequestRedirect filter must not be used together with backendRefs',
        (r) =>
          !((r.backendRefs?.length ?? 0) > 0) ||
          (r.filters ?? []).every((f) => f.requestRedirect === undefined),
      ),
      // (has(self.filters) && self.filters.exists_one(f, <redirect ReplacePrefixMatch>)) ? <exactly one PathPrefix match> : true
      rule<HTTPRule>(
        'When using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
        (r) => !exactlyOne(r.filters, prefixRewrite('requestRedirect')) || onePrefixMatch(r),
      ),
      rule<HTTPRule>(
        'When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
        (r) => !exactlyOne(r.filters, prefixRewrite('urlRewrite')) || onePrefixMatch(r),
      ),
      // (has(self.backendRefs) && self.backendRefs.exists_one(b, has(b.filters) && b.filters.exists_one(f, …))) ? … : true
      rule<HTTPRule>(
        'Within backendRefs, when using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
        (r) =>
          !exactlyOne(r.backendRefs, (b) => exactlyOne(b.filters, prefixRewrite('requestRedirect'))) ||
          onePrefixMatch(r),
      ),
      rule<HTTPRule>(
        'Within backendRefs, When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
        (r) =>
          !exactlyOne(r.backendRefs, (b) => exactlyOne(b.filters, prefixRewrite('urlRewrite'))) ||
          onePrefixMatch(r),
      ),
    ],
  },
);

export const httpRouteSpec: ObjectNode = obj({
  hostnames: routeHostnames(),
  parentRefs: parentRefs(),
  rules: arr(httpRule, {
    minItems: 1,
    maxItems: 16,
    default: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }] }],
    // (self.size() > 0 ? self[0].matches.size() : 0) + … + (self.size() > 15 ? self[15].matches.size() : 0) <= 128
    rules: [rule<{ matches?: unknown[] }[]>(TOTAL_MATCHES_MESSAGE, totalMatches)],
  }),
});
