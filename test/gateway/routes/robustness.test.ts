/**
 * File mode feeds objects that never went through CRD validation: whatever a route's spec holds,
 * the build must not throw, must stay deterministic, and must only emit well-formed models.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../../src/gateway/build';
import type { KubeObject } from '../../../src/store/objects';
import {
  OPTS,
  backendService,
  gateway,
  gatewayClass,
  httpListener,
  storeOf,
  tlsListener,
} from '../../support/objects';
import { rng } from '../../support/rng';

const SCALARS: unknown[] = [null, undefined, 0, -1, 80, 1.5, '', 'x', '/', '*', 'Exact', 'GET', true, [], {}];

/** A random value shaped like `template` (same keys), with any field possibly replaced by junk. */
function mutate(template: unknown, next: () => number, depth = 0): unknown {
  const r = next();
  if (r < 0.12 || depth > 6) return SCALARS[Math.floor(next() * SCALARS.length)];
  if (Array.isArray(template)) {
    const n = Math.floor(next() * 3);
    return Array.from({ length: n }, () => mutate(template[0], next, depth + 1));
  }
  if (template && typeof template === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(template)) if (next() > 0.1) out[k] = mutate(v, next, depth + 1);
    return out;
  }
  return template;
}

const HTTP_TEMPLATE = {
  parentRefs: [
    { name: 'gw', sectionName: 'http', port: 80, group: 'gateway.networking.k8s.io', kind: 'Gateway' },
  ],
  hostnames: ['a.example.com'],
  rules: [
    {
      matches: [
        {
          path: { type: 'PathPrefix', value: '/a' },
          headers: [{ name: 'x', value: 'y', type: 'Exact' }],
          queryParams: [{ name: 'q', value: '1', type: 'RegularExpression' }],
          method: 'GET',
        },
      ],
      filters: [
        {
          type: 'RequestHeaderModifier',
          requestHeaderModifier: { set: [{ name: 'a', value: 'b' }], remove: ['c'] },
        },
        {
          type: 'RequestRedirect',
          requestRedirect: {
            scheme: 'https',
            port: 8443,
            statusCode: 301,
            path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/b' },
          },
        },
        {
          type: 'URLRewrite',
          urlRewrite: { hostname: 'h', path: { type: 'ReplaceFullPath', replaceFullPath: '/c' } },
        },
        {
          type: 'RequestMirror',
          requestMirror: {
            backendRef: { name: 'web', port: 80 },
            fraction: { numerator: 1, denominator: 2 },
          },
        },
      ],
      backendRefs: [{ name: 'web', port: 80, weight: 1, namespace: 'default', kind: 'Service', group: '' }],
      timeouts: { request: '1s', backendRequest: '500ms' },
    },
  ],
};

const GRPC_TEMPLATE = {
  parentRefs: HTTP_TEMPLATE.parentRefs,
  hostnames: ['g.example.com'],
  rules: [
    {
      matches: [
        { method: { type: 'Exact', service: 'pkg.S', method: 'M' }, headers: [{ name: 'x', value: 'y' }] },
      ],
      filters: [
        { type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'a', value: 'b' }] } },
      ],
      backendRefs: [{ name: 'web', port: 80, weight: 2 }],
    },
  ],
};

const TLS_TEMPLATE = {
  parentRefs: [{ name: 'gw', sectionName: 'tls' }],
  hostnames: ['t.example.com'],
  rules: [{ backendRefs: [{ name: 'web', port: 80, weight: 1 }] }],
};

test('malformed route specs never make the build throw; output stays deterministic', () => {
  const next = rng(20260301);
  const base: KubeObject[] = [
    gatewayClass(),
    gateway('gw', [httpListener('http', 80), tlsListener('tls', 443, '*.example.com', 'Passthrough')]),
    ...backendService('web', 80, ['10.0.0.1']),
  ];
  for (let round = 0; round < 200; round++) {
    const routes: KubeObject[] = [];
    for (let i = 0; i < 6; i++) {
      const [kind, template] = (
        [
          ['HTTPRoute', HTTP_TEMPLATE],
          ['GRPCRoute', GRPC_TEMPLATE],
          ['TLSRoute', TLS_TEMPLATE],
        ] as const
      )[i % 3];
      routes.push({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind,
        metadata: {
          name: `r${i}`,
          namespace: 'default',
          generation: 1,
          creationTimestamp: '2026-01-01T00:00:00Z',
        },
        // Mostly keep parentRefs valid so the rest of the spec actually gets compiled.
        spec:
          next() < 0.7
            ? { ...(mutate(template, next) as object), parentRefs: template.parentRefs }
            : mutate(template, next),
      });
    }
    let a;
    try {
      a = buildGateways(storeOf(...base, ...routes), OPTS);
    } catch (err) {
      assert.fail(
        `round ${round} threw ${(err as Error).stack}\n${JSON.stringify(routes.map((r) => r.spec))}`,
      );
    }
    const b = buildGateways(storeOf(...base, ...routes.reverse()), OPTS);
    assert.deepEqual(a, b, `round ${round} is deterministic`);
    for (const p of a.fleets[0].ports) {
      for (const vh of p.http?.virtualHosts ?? []) {
        const names = vh.routes.map((r) => r.name);
        assert.equal(new Set(names).size, names.length, 'route names unique within a virtual host');
        for (const r of vh.routes) assert.ok(r.match.path, 'every route has a path match');
      }
      const sni = p.filterChains.map((c) => JSON.stringify(c.serverNames));
      assert.equal(new Set(sni).size, sni.length, 'filter chain matches are unique');
    }
  }
});
