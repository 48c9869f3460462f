import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileGRPCRoute, compileHTTPRoute } from '../../../src/gateway/routes/compile';
import { compileTLSRoute } from '../../../src/gateway/routes/tls';
import type { GRPCRouteRule, HTTPRouteRule } from '../../../src/gateway/api';
import type { RouteModel } from '../../../src/model/fleet';
import { backendRef, grpcRoute, httpRoute, service, storeOf, tlsRoute } from '../../support/objects';

const view = storeOf(
  service('web', [{ name: 'http', port: 80 }]),
  service('api', [{ name: 'http', port: 8080 }]),
  service('mirror', [{ name: 'http', port: 80 }]),
  service('grpc', [{ name: 'grpc', port: 9000 }]),
);

function one(rule: HTTPRouteRule): RouteModel {
  const c = compileHTTPRoute(view, httpRoute('r', [rule]));
  assert.deepEqual(c.ruleProblems, []);
  assert.equal(c.entries.length, 1);
  return c.entries[0].model;
}

describe('compileHTTPRoute: matches', () => {
  const cases: { name: string; rule: HTTPRouteRule; match: RouteModel['match'] }[] = [
    { name: 'no matches: PathPrefix /', rule: {}, match: { path: { type: 'PathPrefix', value: '/' } } },
    {
      name: 'Exact path',
      rule: { matches: [{ path: { type: 'Exact', value: '/login' } }] },
      match: { path: { type: 'Exact', value: '/login' } },
    },
    {
      name: 'type defaults to PathPrefix',
      rule: { matches: [{ path: { value: '/api' } }] },
      match: { path: { type: 'PathPrefix', value: '/api' } },
    },
    {
      name: 'PathPrefix trailing slash is ignored',
      rule: { matches: [{ path: { type: 'PathPrefix', value: '/api/' } }] },
      match: { path: { type: 'PathPrefix', value: '/api' } },
    },
    {
      name: 'RegularExpression path',
      rule: { matches: [{ path: { type: 'RegularExpression', value: '/v[0-9]+/.*' } }] },
      match: { path: { type: 'RegularExpression', value: '/v[0-9]+/.*' } },
    },
    {
      name: 'headers: lower-cased, first duplicate wins, sorted; queryParams exact and regex; method',
      rule: {
        matches: [
          {
            path: { type: 'PathPrefix', value: '/' },
            headers: [
              { name: 'X-Version', value: 'v2' },
              { name: 'Accept', type: 'RegularExpression', value: 'text/.*' },
              { name: 'x-version', value: 'ignored' },
            ],
            queryParams: [
              { name: 'debug', value: '1' },
              { name: 'Debug', type: 'RegularExpression', value: '[a-z]+' },
            ],
            method: 'POST',
          },
        ],
      },
      match: {
        path: { type: 'PathPrefix', value: '/' },
        headers: [
          { name: 'accept', type: 'RegularExpression', value: 'text/.*' },
          { name: 'x-version', type: 'Exact', value: 'v2' },
        ],
        queryParams: [
          { name: 'Debug', type: 'RegularExpression', value: '[a-z]+' },
          { name: 'debug', type: 'Exact', value: '1' },
        ],
        method: 'POST',
      },
    },
  ];
  for (const c of cases) {
    test(c.name, () =>
      assert.deepEqual(one({ ...c.rule, backendRefs: [backendRef('web', 80)] }).match, c.match),
    );
  }

  test('each match of a rule becomes its own route, named by rule and match index', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('r', [
        { backendRefs: [backendRef('web', 80)] },
        {
          matches: [{ path: { type: 'Exact', value: '/a' } }, { path: { type: 'Exact', value: '/b' } }],
          backendRefs: [backendRef('web', 80)],
        },
      ]),
    );
    assert.deepEqual(
      c.entries.map((e) => e.model.name),
      [
        'HTTPRoute/default/r/rule/0/match/0',
        'HTTPRoute/default/r/rule/1/match/0',
        'HTTPRoute/default/r/rule/1/match/1',
      ],
    );
  });
});

describe('compileHTTPRoute: invalid rules are dropped with a reason', () => {
  const cases: { name: string; rule: HTTPRouteRule; reason: string }[] = [
    {
      name: 'unknown path type',
      rule: { matches: [{ path: { type: 'Glob' as 'Exact', value: '/' } }] },
      reason: 'UnsupportedValue',
    },
    {
      name: 'relative path',
      rule: { matches: [{ path: { type: 'Exact', value: 'foo' } }] },
      reason: 'UnsupportedValue',
    },
    {
      name: 'RE2-incompatible regex (look-ahead)',
      rule: { matches: [{ path: { type: 'RegularExpression', value: '/(?=a)' } }] },
      reason: 'UnsupportedValue',
    },
    { name: 'unknown method', rule: { matches: [{ method: 'BREW' }] }, reason: 'UnsupportedValue' },
    { name: 'unknown filter type', rule: { filters: [{ type: 'Teleport' }] }, reason: 'UnsupportedValue' },
    {
      name: 'redirect and rewrite together',
      rule: {
        filters: [
          { type: 'RequestRedirect', requestRedirect: { hostname: 'a' } },
          { type: 'URLRewrite', urlRewrite: { hostname: 'b' } },
        ],
      },
      reason: 'IncompatibleFilters',
    },
    {
      name: 'duplicate RequestHeaderModifier',
      rule: {
        filters: [
          { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'a', value: '1' }] } },
          { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'b', value: '1' }] } },
        ],
      },
      reason: 'IncompatibleFilters',
    },
    {
      name: 'unsupported redirect status',
      rule: { filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: 304 } }] },
      reason: 'UnsupportedValue',
    },
    {
      name: 'ReplacePrefixMatch with an Exact match',
      rule: {
        matches: [{ path: { type: 'Exact', value: '/a' } }],
        filters: [
          {
            type: 'URLRewrite',
            urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/b' } },
          },
        ],
      },
      reason: 'UnsupportedValue',
    },
    { name: 'bad request timeout', rule: { timeouts: { request: '10' } }, reason: 'UnsupportedValue' },
    {
      name: 'backendRequest longer than request',
      rule: { timeouts: { request: '1s', backendRequest: '2s' } },
      reason: 'UnsupportedValue',
    },
    {
      name: 'filters on a backendRef',
      rule: { backendRefs: [{ name: 'web', port: 80, filters: [{ type: 'RequestHeaderModifier' }] }] },
      reason: 'UnsupportedValue',
    },
    {
      name: 'negative weight',
      rule: { backendRefs: [{ name: 'web', port: 80, weight: -1 }] },
      reason: 'UnsupportedValue',
    },
  ];
  // Values Envoy would NACK (taking down the whole RouteConfiguration) are refused per rule.
  const header = (name: string, value = 'v'): HTTPRouteRule => ({
    filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name, value }] } }],
  });
  cases.push(
    { name: 'modifier sets Host', rule: header('Host'), reason: 'UnsupportedValue' },
    {
      name: 'modifier removes host',
      rule: { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { remove: ['host'] } }] },
      reason: 'UnsupportedValue',
    },
    { name: 'modifier header name with a space', rule: header('X Bad'), reason: 'UnsupportedValue' },
    { name: 'pseudo-header name', rule: header(':path'), reason: 'UnsupportedValue' },
    { name: 'header value with CRLF', rule: header('X-A', 'a\r\nInjected: 1'), reason: 'UnsupportedValue' },
    {
      name: 'header match value with NUL',
      rule: { matches: [{ headers: [{ name: 'x', value: 'a\u0000' }] }] },
      reason: 'UnsupportedValue',
    },
    {
      name: 'redirect hostname with a port',
      rule: { filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'a.example.com:8080' } }] },
      reason: 'UnsupportedValue',
    },
    {
      name: 'rewrite hostname wildcard',
      rule: { filters: [{ type: 'URLRewrite', urlRewrite: { hostname: '*.example.com' } }] },
      reason: 'UnsupportedValue',
    },
    {
      name: 'redirect path with newline',
      rule: {
        filters: [
          {
            type: 'RequestRedirect',
            requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/a\nb' } },
          },
        ],
      },
      reason: 'UnsupportedValue',
    },
  );
  for (const c of cases) {
    test(c.name, () => {
      const r = compileHTTPRoute(view, httpRoute('r', [{ backendRefs: [backendRef('web', 80)] }, c.rule]));
      assert.equal(r.entries.length, 1, 'the valid rule is kept');
      assert.deepEqual(
        r.ruleProblems.map((p) => [p.rule, p.reason]),
        [[1, c.reason]],
      );
      assert.match(r.ruleProblems[0].message, /^rule 1: /);
    });
  }
});

describe('compileHTTPRoute: actions', () => {
  test('weights: zero excluded, duplicates summed, sorted by cluster', () => {
    const m = one({
      backendRefs: [
        backendRef('web', 80, { weight: 3 }),
        backendRef('api', 8080, { weight: 0 }),
        backendRef('web', 80),
      ],
    });
    assert.deepEqual(m.action, { kind: 'forward', backends: [{ cluster: 'default/web/80', weight: 4 }] });
  });

  test('invalid backends: their share is invalidWeight; ResolvedRefs problem recorded', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('r', [
        { backendRefs: [backendRef('web', 80, { weight: 80 }), backendRef('missing', 80, { weight: 20 })] },
      ]),
    );
    assert.deepEqual(c.entries[0].model.action, {
      kind: 'forward',
      backends: [{ cluster: 'default/web/80', weight: 80 }],
      invalidWeight: 20,
    });
    assert.equal(c.refProblem?.reason, 'BackendNotFound');
  });

  test('all backends invalid, all weights zero, or no backendRefs: direct 500', () => {
    for (const backendRefs of [[backendRef('missing', 80)], [backendRef('web', 80, { weight: 0 })], []]) {
      assert.deepEqual(one({ backendRefs }).action, { kind: 'direct', status: 500 });
    }
    // The CRD default (no rules at all) is one catch-all rule without backends.
    const c = compileHTTPRoute(view, httpRoute('r', undefined));
    assert.deepEqual(c.entries[0].model.action, { kind: 'direct', status: 500 });
    assert.deepEqual(c.entries[0].model.match, { path: { type: 'PathPrefix', value: '/' } });
  });

  test('RequestRedirect: scheme, hostname, port, path; default 302; wins over backends', () => {
    assert.deepEqual(
      one({
        filters: [
          {
            type: 'RequestRedirect',
            requestRedirect: {
              scheme: 'https',
              hostname: 'secure.example.com',
              port: 8443,
              path: { type: 'ReplaceFullPath', replaceFullPath: '/new' },
              statusCode: 301,
            },
          },
        ],
        backendRefs: [backendRef('web', 80)],
      }).action,
      {
        kind: 'redirect',
        scheme: 'https',
        hostname: 'secure.example.com',
        port: 8443,
        path: { type: 'ReplaceFullPath', value: '/new' },
        statusCode: 301,
      },
    );
    assert.deepEqual(one({ filters: [{ type: 'RequestRedirect', requestRedirect: {} }] }).action, {
      kind: 'redirect',
      statusCode: 302,
    });
    assert.deepEqual(
      one({
        matches: [{ path: { type: 'PathPrefix', value: '/old' } }],
        filters: [
          {
            type: 'RequestRedirect',
            requestRedirect: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/new' } },
          },
        ],
      }).action,
      { kind: 'redirect', path: { type: 'ReplacePrefixMatch', value: '/new' }, statusCode: 302 },
    );
  });

  test('URLRewrite, header modifiers, mirrors with percent/fraction, timeouts', () => {
    const m = one({
      matches: [{ path: { type: 'PathPrefix', value: '/v1' } }],
      filters: [
        {
          type: 'URLRewrite',
          urlRewrite: { hostname: 'internal', path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } },
        },
        {
          type: 'RequestHeaderModifier',
          requestHeaderModifier: {
            set: [{ name: 'X-A', value: '1' }],
            add: [{ name: 'X-B', value: '2' }],
            remove: ['X-C'],
          },
        },
        { type: 'ResponseHeaderModifier', responseHeaderModifier: { remove: ['server'] } },
        { type: 'RequestMirror', requestMirror: { backendRef: { name: 'mirror', port: 80 } } },
        { type: 'RequestMirror', requestMirror: { backendRef: { name: 'api', port: 8080 }, percent: 25 } },
        {
          type: 'RequestMirror',
          requestMirror: {
            backendRef: { name: 'api', port: 8080 },
            fraction: { numerator: 1, denominator: 8 },
          },
        },
      ],
      backendRefs: [backendRef('web', 80)],
      timeouts: { request: '10s', backendRequest: '2s500ms' },
    });
    assert.deepEqual(m, {
      name: 'HTTPRoute/default/r/rule/0/match/0',
      match: { path: { type: 'PathPrefix', value: '/v1' } },
      action: {
        kind: 'forward',
        backends: [{ cluster: 'default/web/80', weight: 1 }],
        rewrite: { hostname: 'internal', path: { type: 'ReplacePrefixMatch', value: '/' } },
        mirrors: [
          { cluster: 'default/mirror/80' },
          { cluster: 'default/api/8080', percent: 25 },
          { cluster: 'default/api/8080', percent: 12.5 },
        ],
      },
      requestHeaders: {
        set: [{ name: 'X-A', value: '1' }],
        add: [{ name: 'X-B', value: '2' }],
        remove: ['X-C'],
      },
      responseHeaders: { remove: ['server'] },
      timeoutMs: 10_000,
      perTryTimeoutMs: 2_500,
    });
  });

  test('0s request timeout disables it (0)', () => {
    assert.equal(one({ backendRefs: [backendRef('web', 80)], timeouts: { request: '0s' } }).timeoutMs, 0);
  });

  test('a mirror to a missing Service is dropped and reported, the rule still forwards', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('r', [
        {
          filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'ghost', port: 80 } } }],
          backendRefs: [backendRef('web', 80)],
        },
      ]),
    );
    assert.deepEqual(c.entries[0].model.action, {
      kind: 'forward',
      backends: [{ cluster: 'default/web/80', weight: 1 }],
    });
    assert.equal(c.refProblem?.reason, 'BackendNotFound');
  });

  test('ExtensionRef is never skipped: the rule answers 500 and ResolvedRefs is InvalidKind', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('r', [
        {
          filters: [
            { type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Auth', name: 'x' } },
          ],
          backendRefs: [backendRef('web', 80)],
        },
      ]),
    );
    assert.deepEqual(c.entries[0].model.action, { kind: 'direct', status: 500 });
    assert.equal(c.refProblem?.reason, 'InvalidKind');
  });

  test('clusters of kept rules are listed; dropped rules contribute none', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('r', [
        { backendRefs: [backendRef('web', 80)] },
        { matches: [{ method: 'BREW' }], backendRefs: [backendRef('api', 8080)] },
      ]),
    );
    assert.deepEqual(
      c.clusters.map((x) => x.name),
      ['default/web/80'],
    );
  });
});

describe('compileGRPCRoute', () => {
  const cases: { name: string; rule: GRPCRouteRule; path: RouteModel['match']['path'] }[] = [
    {
      name: 'Exact service and method → exact path',
      rule: { matches: [{ method: { service: 'pkg.Svc', method: 'Get' } }] },
      path: { type: 'Exact', value: '/pkg.Svc/Get' },
    },
    {
      name: 'service only → prefix',
      rule: { matches: [{ method: { service: 'pkg.Svc' } }] },
      path: { type: 'PathPrefix', value: '/pkg.Svc' },
    },
    {
      name: 'method only → regex on any service',
      rule: { matches: [{ method: { method: 'Get' } }] },
      path: { type: 'RegularExpression', value: '/[^/]+/Get' },
    },
    {
      name: 'RegularExpression service and method',
      rule: { matches: [{ method: { type: 'RegularExpression', service: 'pkg\\..*', method: 'Get.*' } }] },
      path: { type: 'RegularExpression', value: '/pkg\\..*/Get.*' },
    },
    { name: 'no matches → everything', rule: {}, path: { type: 'PathPrefix', value: '/' } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = compileGRPCRoute(
        view,
        grpcRoute('g', [{ ...c.rule, backendRefs: [backendRef('grpc', 9000)] }]),
      );
      assert.deepEqual(r.ruleProblems, []);
      assert.deepEqual(r.entries[0].model.match.path, c.path);
      assert.equal(r.entries[0].model.match.grpc, true);
      assert.equal(r.entries[0].model.name, 'GRPCRoute/default/g/rule/0/match/0');
    });
  }

  test('clusters are http2; header matches kept; no valid backend answers 503 (gRPC UNAVAILABLE)', () => {
    const r = compileGRPCRoute(
      view,
      grpcRoute('g', [
        {
          matches: [{ method: { service: 's', method: 'm' }, headers: [{ name: 'X-Tenant', value: 'a' }] }],
          backendRefs: [backendRef('grpc', 9000)],
        },
        { backendRefs: [backendRef('missing', 9000)] },
      ]),
    );
    assert.deepEqual(r.clusters, [
      { name: 'default/grpc/9000', namespace: 'default', service: 'grpc', port: 9000, protocol: 'http2' },
    ]);
    assert.deepEqual(r.entries[0].model.match.headers, [{ name: 'x-tenant', type: 'Exact', value: 'a' }]);
    assert.deepEqual(r.entries[1].model.action, { kind: 'direct', status: 503 });
  });

  test('invalid gRPC names drop the rule', () => {
    const r = compileGRPCRoute(
      view,
      grpcRoute('g', [{ matches: [{ method: { service: 'a/b', method: 'm' } }] }]),
    );
    assert.equal(r.entries.length, 0);
    assert.equal(r.ruleProblems[0].reason, 'UnsupportedValue');
  });
});

describe('compileTLSRoute', () => {
  test('weighted tcp backends; invalid ones reported and left out', () => {
    const r = compileTLSRoute(
      view,
      tlsRoute(
        't',
        ['a.example.com'],
        [
          {
            backendRefs: [
              backendRef('web', 80, { weight: 2 }),
              backendRef('api', 8080, { weight: 0 }),
              backendRef('gone', 1),
            ],
          },
        ],
      ),
    );
    assert.deepEqual(r.tcpBackends, [{ cluster: 'default/web/80', weight: 2 }]);
    assert.equal(r.refProblem?.reason, 'BackendNotFound');
    assert.ok(r.clusters.every((c) => c.protocol === 'tcp'));
    assert.deepEqual(r.hostnames, ['a.example.com']);
  });

  test('no valid backend: empty tcpBackends (connections are rejected)', () => {
    const r = compileTLSRoute(
      view,
      tlsRoute('t', ['a.example.com'], [{ backendRefs: [backendRef('gone', 1)] }]),
    );
    assert.deepEqual(r.tcpBackends, []);
  });
});

describe('regular expressions Envoy would reject drop their rule, naming the field and the reason', () => {
  const http: { name: string; match: NonNullable<HTTPRouteRule['matches']>[number]; message: RegExp }[] = [
    {
      name: 'path over the RE2 program size limit',
      match: { path: { type: 'RegularExpression', value: '/[a-z]{1000}' } },
      message:
        /^rule 1: path regular expression "\/\[a-z\]\{1000\}": RE2 program size 1005 exceeds Envoy's limit of 100$/,
    },
    {
      name: 'path with an escape RE2 lacks',
      match: { path: { type: 'RegularExpression', value: '/foo\\Z' } },
      message: /path regular expression "\/foo\\\\Z": invalid escape sequence: \\Z$/,
    },
    {
      name: 'path with look-ahead',
      match: { path: { type: 'RegularExpression', value: '/(?=a)' } },
      message: /invalid perl operator: \(\?=$/,
    },
    {
      name: 'header value over the repetition limit',
      match: { headers: [{ name: 'X-A', type: 'RegularExpression', value: 'a{1001}' }] },
      message: /header match X-A regular expression "a\{1001\}": invalid repetition size: \{1001\}$/,
    },
    {
      name: 'query parameter over the program size limit',
      match: { queryParams: [{ name: 'q', type: 'RegularExpression', value: 'a{97}' }] },
      message: /query parameter match q regular expression "a\{97\}": RE2 program size 101 exceeds/,
    },
  ];
  for (const c of http) {
    test(`HTTPRoute: ${c.name}`, () => {
      const r = compileHTTPRoute(
        view,
        httpRoute('r', [
          { backendRefs: [backendRef('web', 80)] },
          { matches: [c.match], backendRefs: [backendRef('web', 80)] },
        ]),
      );
      assert.equal(r.entries.length, 1, 'the valid rule is kept');
      assert.deepEqual(
        r.ruleProblems.map((p) => [p.rule, p.reason]),
        [[1, 'UnsupportedValue']],
      );
      assert.match(r.ruleProblems[0].message, c.message);
    });
  }

  test('regexes Envoy accepts are kept, up to the program size limit', () => {
    for (const value of [
      '/v2/.*',
      '^/foo/[0-9]+$',
      '.*foo.*',
      'a{96}',
      '(?i)/API/v[0-9]+',
      '(?P<id>[^/]+)',
    ]) {
      const m = one({
        matches: [{ path: { type: 'RegularExpression', value } }],
        backendRefs: [backendRef('web', 80)],
      });
      assert.deepEqual(m.match.path, { type: 'RegularExpression', value });
    }
  });

  const grpc: { name: string; method: Record<string, string>; message: RegExp }[] = [
    {
      name: 'service regex RE2 rejects',
      method: { type: 'RegularExpression', service: 'pkg\\Z', method: 'Get' },
      message: /gRPC service regular expression "pkg\\\\Z": invalid escape sequence/,
    },
    {
      name: 'service and method regexes whose path regex is too large together',
      method: { type: 'RegularExpression', service: '[a-z]{50}', method: '[a-z]{50}' },
      message: /gRPC path regular expression "\/\[a-z\]\{50\}\/\[a-z\]\{50\}": RE2 program size \d+ exceeds/,
    },
    {
      name: 'a long exact method name alone (matched by a regex on the path)',
      method: { method: 'M'.repeat(100) },
      message: /gRPC path regular expression "\/\[\^\/\]\+\/M+": RE2 program size \d+ exceeds/,
    },
  ];
  for (const c of grpc) {
    test(`GRPCRoute: ${c.name}`, () => {
      const r = compileGRPCRoute(
        view,
        grpcRoute('g', [{ matches: [{ method: c.method }], backendRefs: [backendRef('grpc', 9000)] }]),
      );
      assert.equal(r.entries.length, 0);
      assert.equal(r.ruleProblems[0].reason, 'UnsupportedValue');
      assert.match(r.ruleProblems[0].message, c.message);
    });
  }
});
