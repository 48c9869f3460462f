import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../../src/gateway/build';
import { hostnameCovers, hostnameSpecificity } from '../../../src/gateway/routes/vhosts';
import type { VirtualHostModel } from '../../../src/model/fleet';
import type { HTTPRouteRule } from '../../../src/gateway/api';
import type { KubeObject } from '../../../src/store/objects';
import {
  OPTS,
  backendRef,
  backendService,
  gateway,
  gatewayClass,
  grpcRoute,
  httpListener,
  httpRoute,
  parentRef,
  storeOf,
} from '../../support/objects';

/** Virtual host name → route names, for the HTTP port of the only fleet. */
function vhosts(objects: KubeObject[], port = 80): Record<string, string[]> {
  const result = buildGateways(
    storeOf(gatewayClass(), ...backendService('web', 80, ['10.0.0.1']), ...objects),
    OPTS,
  );
  const p = result.fleets[0].ports.find((x) => x.port === port);
  assert.ok(p?.http, `port ${port} is an HTTP port`);
  return Object.fromEntries(
    p.http.virtualHosts.map((v: VirtualHostModel) => [v.name, v.routes.map((r) => r.name)]),
  );
}

const fwd = (rule: HTTPRouteRule = {}): HTTPRouteRule => ({ ...rule, backendRefs: [backendRef('web', 80)] });

test('hostnameCovers and hostnameSpecificity', () => {
  const covers: [string | undefined, string, boolean][] = [
    [undefined, '*', true],
    [undefined, 'a.com', true],
    ['a.com', 'a.com', true],
    ['a.com', 'b.a.com', false],
    ['*.a.com', 'b.a.com', true],
    ['*.a.com', 'c.b.a.com', true],
    ['*.a.com', '*.b.a.com', true],
    ['*.a.com', '*.a.com', true],
    ['*.a.com', 'a.com', false],
    ['*.b.a.com', '*.a.com', false],
    ['a.com', '*', false],
    ['*', 'x.y', true],
  ];
  for (const [p, h, want] of covers) assert.equal(hostnameCovers(p, h), want, `${p} covers ${h}`);
  const ordered = [undefined, '*.com', '*.example.com', 'a.com', 'www.example.com'];
  for (let i = 1; i < ordered.length; i++) {
    assert.ok(hostnameSpecificity(ordered[i]) > hostnameSpecificity(ordered[i - 1]), String(ordered[i]));
  }
});

describe('GatewayHTTPListenerIsolation (conformance scenario)', () => {
  const listeners = [
    httpListener('empty-hostname', 80, undefined, { allowedRoutes: { namespaces: { from: 'All' } } }),
    httpListener('wildcard-example-com', 80, '*.example.com', {
      allowedRoutes: { namespaces: { from: 'All' } },
    }),
    httpListener('wildcard-foo-example-com', 80, '*.foo.example.com', {
      allowedRoutes: { namespaces: { from: 'All' } },
    }),
    httpListener('abc-foo-example-com', 80, 'abc.foo.example.com', {
      allowedRoutes: { namespaces: { from: 'All' } },
    }),
  ];
  const names = listeners.map((l) => l.name);
  const routes = (hostnames?: string[]) =>
    names.map((n) =>
      httpRoute(`attaches-to-${n}`, [fwd({ matches: [{ path: { type: 'PathPrefix', value: `/${n}` } }] })], {
        parentRefs: [parentRef('gw', { sectionName: n })],
        hostnames,
      }),
    );
  const expected = {
    '*': ['HTTPRoute/default/attaches-to-empty-hostname/rule/0/match/0'],
    '*.example.com': ['HTTPRoute/default/attaches-to-wildcard-example-com/rule/0/match/0'],
    '*.foo.example.com': ['HTTPRoute/default/attaches-to-wildcard-foo-example-com/rule/0/match/0'],
    'abc.foo.example.com': ['HTTPRoute/default/attaches-to-abc-foo-example-com/rule/0/match/0'],
  };

  test('hostnames configured only in listeners', () => {
    assert.deepEqual(vhosts([gateway('gw', listeners), ...routes()]), expected);
  });

  test('intersecting hostnames in listeners and routes: hosts claimed by a more specific listener are dropped', () => {
    const got = vhosts([
      gateway('gw', listeners),
      ...routes(['bar.com', '*.example.com', '*.foo.example.com', 'abc.foo.example.com']),
    ]);
    assert.deepEqual(got, {
      'bar.com': expected['*'],
      '*.example.com': expected['*.example.com'],
      '*.foo.example.com': expected['*.foo.example.com'],
      'abc.foo.example.com': expected['abc.foo.example.com'],
    });
  });
});

describe('hostname precedence within one listener', () => {
  test('a host gathers its exact routes first, then covering wildcards, then catch-all', () => {
    const got = vhosts([
      gateway('gw', [httpListener('http', 80)]),
      httpRoute('any', [fwd()]),
      httpRoute('wild', [fwd()], { hostnames: ['*.example.com'] }),
      httpRoute('wider', [fwd()], { hostnames: ['*.com'] }),
      httpRoute('foo', [fwd()], { hostnames: ['foo.example.com'] }),
    ]);
    const r = (n: string) => `HTTPRoute/default/${n}/rule/0/match/0`;
    assert.deepEqual(got, {
      '*': [r('any')],
      '*.com': [r('wider'), r('any')],
      '*.example.com': [r('wild'), r('wider'), r('any')],
      'foo.example.com': [r('foo'), r('wild'), r('wider'), r('any')],
    });
  });
});

describe('match precedence across routes (httproute-matching-across-routes / path-match-order)', () => {
  const r = (n: string, rule = 0, match = 0) => `HTTPRoute/default/${n}/rule/${rule}/match/${match}`;
  const cases: { name: string; routes: KubeObject[]; order: string[] }[] = [
    {
      name: 'exact beats prefix; longer prefix beats shorter; regex between exact and prefix',
      routes: [
        httpRoute('short', [fwd({ matches: [{ path: { type: 'PathPrefix', value: '/a' } }] })]),
        httpRoute('long', [fwd({ matches: [{ path: { type: 'PathPrefix', value: '/a/b/c' } }] })]),
        httpRoute('exact', [fwd({ matches: [{ path: { type: 'Exact', value: '/a' } }] })]),
        httpRoute('regex', [fwd({ matches: [{ path: { type: 'RegularExpression', value: '/a/.*' } }] })]),
      ],
      order: [r('exact'), r('regex'), r('long'), r('short')],
    },
    {
      name: 'same path: method, then more headers, then more query params',
      routes: [
        httpRoute('plain', [fwd({ matches: [{ path: { value: '/' } }] })]),
        httpRoute('query', [fwd({ matches: [{ queryParams: [{ name: 'q', value: '1' }] }] })]),
        httpRoute('two-headers', [
          fwd({
            matches: [
              {
                headers: [
                  { name: 'a', value: '1' },
                  { name: 'b', value: '2' },
                ],
              },
            ],
          }),
        ]),
        httpRoute('one-header', [fwd({ matches: [{ headers: [{ name: 'a', value: '1' }] }] })]),
        httpRoute('method', [fwd({ matches: [{ method: 'GET' }] })]),
      ],
      order: [r('method'), r('two-headers'), r('one-header'), r('query'), r('plain')],
    },
    {
      name: 'ties: oldest route, then namespace/name, then rule and match order',
      routes: [
        httpRoute('b-new', [fwd()], { created: '2026-02-01T00:00:00Z' }),
        httpRoute('z-old', [fwd()], { created: '2025-01-01T00:00:00Z' }),
        httpRoute('a-mid', [fwd(), fwd({ matches: [{ path: { value: '/' } }, { path: { value: '/' } }] })], {
          created: '2026-01-01T00:00:00Z',
        }),
        httpRoute('a-mid2', [fwd()], { created: '2026-01-01T00:00:00Z' }),
      ],
      order: [r('z-old'), r('a-mid'), r('a-mid', 1, 0), r('a-mid', 1, 1), r('a-mid2'), r('b-new')],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(vhosts([gateway('gw', [httpListener('http', 80)]), ...c.routes]), { '*': c.order });
    });
  }
});

test('GRPCRoute precedence: longest service, then longest method, then headers, regardless of match type', () => {
  const g = (
    name: string,
    method: { type?: 'Exact' | 'RegularExpression'; service?: string; method?: string },
    headers = 0,
  ) =>
    grpcRoute(name, [
      {
        matches: [
          { method, headers: Array.from({ length: headers }, (_, i) => ({ name: `h${i}`, value: 'v' })) },
        ],
        backendRefs: [backendRef('web', 80)],
      },
    ]);
  const got = vhosts([
    gateway('gw', [httpListener('http', 80)]),
    g('any', {}),
    g('method-only', { method: 'GetLongName' }),
    g('svc-only', { service: 'pkg.Svc' }),
    g('svc-method', { service: 'pkg.Svc', method: 'Get' }),
    g('svc-method-headers', { service: 'pkg.Svc', method: 'Get' }, 1),
    g('regex-longer-svc', { type: 'RegularExpression', service: 'pkg\\.Svc.*' }),
  ]);
  const r = (n: string) => `GRPCRoute/default/${n}/rule/0/match/0`;
  assert.deepEqual(got, {
    '*': [
      r('regex-longer-svc'),
      r('svc-method-headers'),
      r('svc-method'),
      r('svc-only'),
      r('method-only'),
      r('any'),
    ],
  });
});
