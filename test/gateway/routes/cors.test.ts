import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileGRPCRoute, compileHTTPRoute } from '../../../src/gateway/routes/compile';
import { compileCors, originMatchers } from '../../../src/gateway/routes/cors';
import type { HTTPCORSFilter, HTTPRouteRule } from '../../../src/gateway/api';
import type { StringMatchModel } from '../../../src/model/fleet';
import { backendRef, grpcRoute, httpRoute, service, storeOf } from '../../support/objects';

const view = storeOf(service('web', [{ name: 'http', port: 80 }]));

/** Whether an Origin header value is allowed by matchers, as Envoy evaluates them (full match). */
function allows(matchers: StringMatchModel[], origin: string): boolean {
  return matchers.some((m) =>
    m.type === 'Exact'
      ? m.value.toLowerCase() === origin.toLowerCase()
      : new RegExp(`^(?:${m.value})$`).test(origin),
  );
}

describe('CORS allowOrigins', () => {
  const cases: [string, string[], string[]][] = [
    [
      'https://www.foo.com',
      ['https://www.foo.com', 'https://WWW.foo.com', 'https://www.foo.com:443'],
      ['http://www.foo.com', 'https://www.foo.com:8443', 'https://x.www.foo.com', 'https://www.foo.com.evil'],
    ],
    [
      'https://*.bar.com',
      ['https://www.bar.com', 'https://xpto.www.bar.com', 'https://a.bar.com:443'],
      [
        'https://bar.com',
        'http://www.bar.com',
        'https://www.bar.com:8443',
        'https://evil.com/.bar.com',
        'https://xbar.com',
      ],
    ],
    [
      'http://*:8080',
      ['http://foo.com:8080', 'http://10.0.0.1:8080'],
      ['http://foo.com', 'https://foo.com:8080'],
    ],
    ['*', ['https://foobar.com:12345', 'http://x', 'null'], []],
  ];
  for (const [origin, yes, no] of cases) {
    test(`${origin} allows ${yes.join(', ')}${no.length ? `, not ${no.join(', ')}` : ''}`, () => {
      const m = originMatchers(origin);
      for (const o of yes) assert.ok(allows(m, o), `${o} should be allowed`);
      for (const o of no) assert.ok(!allows(m, o), `${o} should not be allowed`);
    });
  }
});

describe('compileCors', () => {
  test('lists are kept in order, de-duplicated; credentials and maxAge carried', () => {
    assert.deepEqual(
      compileCors({
        allowOrigins: ['https://a.example'],
        allowMethods: ['GET', 'OPTIONS', 'GET'],
        allowHeaders: ['x-a', 'X-A', 'x-b'],
        exposeHeaders: ['x-c'],
        allowCredentials: true,
        maxAge: 3600,
      }),
      {
        origins: [
          { name: 'origin', type: 'Exact', value: 'https://a.example' },
          { name: 'origin', type: 'Exact', value: 'https://a.example:443' },
        ],
        allowMethods: ['GET', 'OPTIONS'],
        allowHeaders: ['x-a', 'x-b'],
        exposeHeaders: ['x-c'],
        allowCredentials: true,
        maxAgeSeconds: 3600,
      },
    );
  });

  const rule = (cors: HTTPCORSFilter): HTTPRouteRule => ({
    filters: [{ type: 'CORS', cors }],
    backendRefs: [backendRef('web', 80)],
  });
  const dropped: [string, HTTPCORSFilter][] = [
    ['an origin without scheme', { allowOrigins: ['www.foo.com'] }],
    ['an origin with a path', { allowOrigins: ['https://foo.com/x'] }],
    ['a port above 65535', { allowOrigins: ['https://foo.com:70000'] }],
    ["'*' with other origins", { allowOrigins: ['*', 'https://a.com'] }],
    ['an unknown method', { allowMethods: ['FETCH'] }],
    ['an invalid header name', { allowHeaders: ['x y'] }],
    ['maxAge 0', { maxAge: 0 }],
    // RE2 program size beyond Envoy's limit of 100: Envoy would refuse the whole configuration.
    [
      'a wildcard origin whose regular expression Envoy would refuse',
      { allowOrigins: [`https://*.${'a'.repeat(120)}.com`] },
    ],
  ];
  for (const [name, cors] of dropped) {
    test(`drops the rule: ${name}`, () => {
      const c = compileHTTPRoute(
        view,
        httpRoute('r', [rule(cors), { backendRefs: [backendRef('web', 80)] }]),
      );
      assert.equal(c.ruleProblems.length, 1, JSON.stringify(c.ruleProblems));
      assert.equal(c.ruleProblems[0].reason, 'UnsupportedValue');
      assert.equal(c.entries.length, 1);
    });
  }

  test('two CORS filters in a rule are IncompatibleFilters', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('r', [
        {
          filters: [
            { type: 'CORS', cors: {} },
            { type: 'CORS', cors: {} },
          ],
        },
      ]),
    );
    assert.equal(c.ruleProblems[0]?.reason, 'IncompatibleFilters');
  });

  test('every match of the rule carries the policy', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('r', [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/a' } }, { path: { type: 'Exact', value: '/b' } }],
          ...rule({ allowOrigins: ['*'] }),
        },
      ]),
    );
    assert.equal(c.entries.length, 2);
    for (const e of c.entries)
      assert.deepEqual(e.model.cors?.origins, [{ name: 'origin', type: 'RegularExpression', value: '.*' }]);
  });

  test('GRPCRoute has no CORS filter: the rule is dropped', () => {
    const c = compileGRPCRoute(
      storeOf(service('grpc', [{ name: 'grpc', port: 9000 }])),
      grpcRoute('g', [{ filters: [{ type: 'CORS' } as never], backendRefs: [backendRef('grpc', 9000)] }]),
    );
    assert.equal(c.ruleProblems.length, 1);
  });
});
