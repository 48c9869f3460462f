import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  INVALID_BACKEND_CLUSTER,
  buildRouteConfiguration,
  mirrorFraction,
  redirectResponseCode,
  translateBackends,
  translateHeaderModifier,
  translatePathMatch,
  translatePathModifier,
  translateRedirect,
  translateRoute,
  translateRouteMatch,
} from '../../src/envoy/translate/routes';
import { Enum } from '../../src/envoy/translate/common';
import type { RouteModel, VirtualHostModel } from '../../src/model/fleet';

describe('path match', () => {
  test('no path is PathPrefix "/"', () => {
    assert.deepEqual(translatePathMatch(undefined), { prefix: '/' });
  });
  test('PathPrefix "/" and slash-only values match everything', () => {
    assert.deepEqual(translatePathMatch({ type: 'PathPrefix', value: '/' }), { prefix: '/' });
    assert.deepEqual(translatePathMatch({ type: 'PathPrefix', value: '//' }), { prefix: '/' });
  });
  test('PathPrefix is element-wise: path_separated_prefix, trailing slashes ignored', () => {
    assert.deepEqual(translatePathMatch({ type: 'PathPrefix', value: '/foo' }), {
      path_separated_prefix: '/foo',
    });
    assert.deepEqual(translatePathMatch({ type: 'PathPrefix', value: '/foo/' }), {
      path_separated_prefix: '/foo',
    });
    assert.deepEqual(translatePathMatch({ type: 'PathPrefix', value: '/a/b//' }), {
      path_separated_prefix: '/a/b',
    });
  });
  test('Exact and RegularExpression', () => {
    assert.deepEqual(translatePathMatch({ type: 'Exact', value: '/foo/' }), { path: '/foo/' });
    assert.deepEqual(translatePathMatch({ type: 'RegularExpression', value: '/v[0-9]+' }), {
      safe_regex: { regex: '/v[0-9]+' },
    });
  });
  test('headers (lowercased names), method as :method, query params, grpc', () => {
    const m = translateRouteMatch({
      path: { type: 'Exact', value: '/x' },
      headers: [
        { name: 'X-A', type: 'Exact', value: 'One' },
        { name: 'x-b', type: 'RegularExpression', value: '^b+$' },
      ],
      queryParams: [{ name: 'Q', type: 'Exact', value: 'v' }],
      method: 'POST',
      grpc: true,
    });
    assert.deepEqual(m, {
      path: '/x',
      headers: [
        { name: 'x-a', string_match: { exact: 'One' } },
        { name: 'x-b', string_match: { safe_regex: { regex: '^b+$' } } },
        { name: ':method', string_match: { exact: 'POST' } },
      ],
      query_parameters: [{ name: 'Q', string_match: { exact: 'v' } }],
      grpc: {},
    });
  });
  test('no extra fields for a bare match', () => {
    assert.deepEqual(translateRouteMatch({}), { prefix: '/' });
  });
});

describe('path modifiers', () => {
  const prefix = (value: string) => ({ type: 'PathPrefix' as const, value });
  test('ReplacePrefixMatch on a prefix: prefix_rewrite, trailing slash of the replacement dropped', () => {
    assert.deepEqual(
      translatePathModifier({ type: 'ReplacePrefixMatch', value: '/bar' }, prefix('/foo'), false),
      {
        prefix_rewrite: '/bar',
      },
    );
    assert.deepEqual(
      translatePathModifier({ type: 'ReplacePrefixMatch', value: '/bar/' }, prefix('/foo/'), false),
      {
        prefix_rewrite: '/bar',
      },
    );
  });
  test('ReplacePrefixMatch with "/" strips the prefix and following slashes', () => {
    assert.deepEqual(
      translatePathModifier({ type: 'ReplacePrefixMatch', value: '/' }, prefix('/a.b'), false),
      {
        regex_rewrite: { pattern: { regex: '^/a\\.b/*' }, substitution: '/' },
      },
    );
  });
  test('ReplacePrefixMatch when the matched prefix is "/"', () => {
    assert.deepEqual(translatePathModifier({ type: 'ReplacePrefixMatch', value: '/bar' }, undefined, false), {
      prefix_rewrite: '/bar/',
    });
    assert.equal(
      translatePathModifier({ type: 'ReplacePrefixMatch', value: '/' }, prefix('/'), false),
      undefined,
    );
  });
  test('ReplaceFullPath: whole-path regex rewrite for forwards, path_redirect for redirects', () => {
    assert.deepEqual(
      translatePathModifier({ type: 'ReplaceFullPath', value: '/new' }, prefix('/old'), false),
      {
        regex_rewrite: { pattern: { regex: '^/.*$' }, substitution: '/new' },
      },
    );
    assert.deepEqual(
      translatePathModifier({ type: 'ReplaceFullPath', value: '/new' }, prefix('/old'), true),
      {
        path_redirect: '/new',
      },
    );
  });
  test('ReplacePrefixMatch with an Exact match replaces the whole path', () => {
    assert.deepEqual(
      translatePathModifier(
        { type: 'ReplacePrefixMatch', value: '/n' },
        { type: 'Exact', value: '/o' },
        true,
      ),
      { path_redirect: '/n' },
    );
  });
});

describe('redirects', () => {
  test('status codes', () => {
    assert.equal(redirectResponseCode(301), undefined); // proto default MOVED_PERMANENTLY
    assert.equal(redirectResponseCode(302), Enum.RedirectResponseCode.FOUND);
    assert.equal(redirectResponseCode(303), Enum.RedirectResponseCode.SEE_OTHER);
    assert.equal(redirectResponseCode(307), Enum.RedirectResponseCode.TEMPORARY_REDIRECT);
    assert.equal(redirectResponseCode(308), Enum.RedirectResponseCode.PERMANENT_REDIRECT);
  });
  test('scheme, host, port, prefix path', () => {
    assert.deepEqual(
      translateRedirect(
        {
          kind: 'redirect',
          scheme: 'HTTPS',
          hostname: 'b.example.com',
          port: 8443,
          path: { type: 'ReplacePrefixMatch', value: '/new' },
          statusCode: 302,
        },
        { type: 'PathPrefix', value: '/old' },
      ),
      {
        scheme_redirect: 'https',
        host_redirect: 'b.example.com',
        port_redirect: 8443,
        prefix_rewrite: '/new',
        response_code: Enum.RedirectResponseCode.FOUND,
      },
    );
  });
  test('bare 301 redirect is an empty RedirectAction', () => {
    assert.deepEqual(translateRedirect({ kind: 'redirect', statusCode: 301 }, undefined), {});
  });
});

describe('backends and weights', () => {
  test('one backend → cluster', () => {
    assert.deepEqual(translateBackends([{ cluster: 'a/b/1', weight: 7 }]), { cluster: 'a/b/1' });
  });
  test('several → weighted_clusters without total_weight; zero weights dropped', () => {
    assert.deepEqual(
      translateBackends([
        { cluster: 'a/b/1', weight: 3 },
        { cluster: 'a/c/1', weight: 0 },
        { cluster: 'a/d/1', weight: 1 },
      ]),
      {
        weighted_clusters: {
          clusters: [
            { name: 'a/b/1', weight: { value: 3 } },
            { name: 'a/d/1', weight: { value: 1 } },
          ],
        },
      },
    );
  });
  test('only zero weights or none → no forward (the route answers 500)', () => {
    assert.equal(translateBackends([{ cluster: 'a/b/1', weight: 0 }]), undefined);
    assert.equal(translateBackends([]), undefined);
    const r = translateRoute({
      name: 'r',
      match: {},
      action: { kind: 'forward', backends: [{ cluster: 'a/b/1', weight: 0 }] },
    });
    assert.deepEqual(r.direct_response, { status: 500 });
    assert.equal(r.route, undefined);
  });
  test('invalid share → weighted entry for an unknown cluster answered with 500', () => {
    assert.deepEqual(translateBackends([{ cluster: 'a/b/1', weight: 1 }], 2), {
      weighted_clusters: {
        clusters: [
          { name: 'a/b/1', weight: { value: 1 } },
          { name: INVALID_BACKEND_CLUSTER, weight: { value: 2 } },
        ],
      },
      cluster_not_found_response_code: Enum.ClusterNotFoundResponseCode.INTERNAL_SERVER_ERROR,
    });
    assert.equal(translateBackends([], 2), undefined);
  });
  test('mirror fractions', () => {
    assert.deepEqual(mirrorFraction(30), { numerator: 30 });
    assert.deepEqual(mirrorFraction(0.5), { numerator: 5000, denominator: Enum.DenominatorType.MILLION });
  });
});

describe('header modifiers', () => {
  test('set overwrites, add appends (default action), remove; names lowercased', () => {
    assert.deepEqual(
      translateHeaderModifier({
        set: [{ name: 'X-Set', value: '1' }],
        add: [{ name: 'X-Add', value: '2' }],
        remove: ['X-Gone'],
      }),
      {
        add: [
          {
            header: { key: 'x-set', value: '1' },
            append_action: Enum.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD,
          },
          { header: { key: 'x-add', value: '2' } },
        ],
        remove: ['x-gone'],
      },
    );
  });
  test('pseudo-headers and Host are never emitted (Envoy would NACK the whole RouteConfiguration)', () => {
    assert.deepEqual(
      translateHeaderModifier({
        set: [{ name: 'Host', value: 'x' }],
        add: [{ name: ':path', value: '/' }],
        remove: [':authority'],
      }),
      {},
    );
    assert.deepEqual(translateHeaderModifier(undefined), {});
  });
  test('applied at route level, request and response', () => {
    const r = translateRoute({
      name: 'r',
      match: {},
      action: { kind: 'direct', status: 200, body: 'ok' },
      requestHeaders: { remove: ['a'] },
      responseHeaders: { add: [{ name: 'b', value: 'c' }] },
    });
    assert.deepEqual(r.request_headers_to_remove, ['a']);
    assert.deepEqual(r.response_headers_to_add, [{ header: { key: 'b', value: 'c' } }]);
    assert.deepEqual(r.direct_response, { status: 200, body: { inline_string: 'ok' } });
  });
});

describe('timeouts', () => {
  const fwd = (extra: Partial<RouteModel>): RouteModel => ({
    name: 'r',
    match: {},
    action: { kind: 'forward', backends: [{ cluster: 'a/b/1', weight: 1 }] },
    ...extra,
  });
  test('request timeout; 0 disables', () => {
    assert.deepEqual(translateRoute(fwd({ timeoutMs: 1500 })).route?.timeout, {
      seconds: 1,
      nanos: 500_000_000,
    });
    assert.deepEqual(translateRoute(fwd({ timeoutMs: 0 })).route?.timeout, {});
    assert.equal(translateRoute(fwd({})).route?.timeout, undefined);
  });
  test('backend timeout: retry_policy.per_try_timeout without retries', () => {
    const r = translateRoute(fwd({ timeoutMs: 5000, perTryTimeoutMs: 2000 })).route!;
    assert.deepEqual(r.retry_policy, { per_try_timeout: { seconds: 2 } });
    assert.deepEqual(r.timeout, { seconds: 5 });
    // Alone, it also bounds the whole request, so Envoy's 15s default cannot cut it short.
    const alone = translateRoute(fwd({ perTryTimeoutMs: 30_000 })).route!;
    assert.deepEqual(alone.timeout, { seconds: 30 });
  });
});

describe('route configurations', () => {
  const vh = (name: string, domains: string[]): VirtualHostModel => ({ name, domains, routes: [] });
  test('virtual hosts in order, empty ones kept, port ignored in host matching', () => {
    const rc = buildRouteConfiguration('http-80', [vh('b', ['b']), vh('a', ['a']), vh('*', ['*'])]);
    assert.equal(rc.ignore_port_in_host_matching, true);
    assert.deepEqual(
      rc.virtual_hosts?.map((v) => v.name),
      ['b', 'a', '*'],
    );
    assert.equal(rc.virtual_hosts?.[0].routes, undefined);
  });
  test('a domain claimed twice stays with the first virtual host', () => {
    const rc = buildRouteConfiguration('x', [
      vh('a', ['a.com', 'b.com']),
      vh('b', ['B.com']),
      vh('c', ['c.com', 'a.com']),
    ]);
    assert.deepEqual(
      rc.virtual_hosts?.map((v) => [v.name, v.domains]),
      [
        ['a', ['a.com', 'b.com']],
        ['c', ['c.com']],
      ],
    );
  });
  test('per-node memo: the same route node yields the same object', () => {
    const route: RouteModel = { name: 'r', match: {}, action: { kind: 'direct', status: 204 } };
    assert.equal(translateRoute(route), translateRoute(route));
    assert.notEqual(translateRoute(route), translateRoute({ ...route }));
    assert.deepEqual(translateRoute(route), translateRoute({ ...route }));
  });
});
