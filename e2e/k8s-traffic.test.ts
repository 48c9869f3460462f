import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeApiError } from '../src/kubernetes/client';
import { freePort, request, startEchoBackend, waitFor } from './harness';
import type { Backend, EchoResponse } from './harness';
import { GW_API, K8sWorld, cond } from './cluster/k8s-world';
import type { Condition } from './cluster/k8s-world';

/**
 * Test 2: an HTTPRoute created in the API server becomes traffic through a real Envoy to a
 * backend.
 *
 * The backends run on 127.0.0.1 only, and the API server refuses loopback addresses in
 * EndpointSlices (IPv4/IPv6 "may not be in the loopback range"; an FQDN slice needs a name with
 * at least two labels, and no such name resolves to loopback here — Envoy's resolver does not
 * map *.localhost). The honest way in is a name that really resolves to the backend: a Service
 * of type ExternalName with externalName "localhost", which the API server accepts and Envoy
 * resolves (STRICT_DNS) to 127.0.0.1.
 *
 * ExternalName backends are opt-in in Convoy (they can point Envoy at its own loopback admin
 * port), so this test runs Convoy with --enable-external-name-services.
 */

describe('HTTPRoute to traffic through a real Envoy', { timeout: 240_000 }, () => {
  let w: K8sWorld;
  let web: Backend;
  let api: Backend;
  let port: number;

  before(async () => {
    w = await K8sWorld.create();
    await w.namespace('apps');
    web = await startEchoBackend('web');
    api = await startEchoBackend('api');
    port = await freePort();
  });
  after(async () => {
    await web?.close();
    await api?.close();
    await w?.dispose();
  });

  test('the API server refuses loopback endpoints (why the backends are ExternalName Services)', async () => {
    const err = await w
      .apply({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'loopback', namespace: 'apps', labels: { 'kubernetes.io/service-name': 'web' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: web.port }],
        endpoints: [{ addresses: ['127.0.0.1'] }],
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof KubeApiError && err.statusCode === 422, String(err));
    assert.match(err.message, /loopback/);
  });

  test('an HTTPRoute reaches the backends through Envoy; edits and deletions follow', async () => {
    for (const b of [web, api]) {
      await w.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: b.name, namespace: 'apps' },
        spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'http', port: b.port }] },
      });
    }
    await w.apply({
      apiVersion: GW_API,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'apps' },
      spec: { gatewayClassName: 'convoy', listeners: [{ name: 'http', protocol: 'HTTP', port }] },
    });
    await w.apply({
      apiVersion: GW_API,
      kind: 'HTTPRoute',
      metadata: { name: 'site', namespace: 'apps' },
      spec: {
        parentRefs: [{ name: 'gw' }],
        hostnames: ['www.example.com'],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/api' } }],
            backendRefs: [{ name: 'api', port: api.port }],
          },
          { backendRefs: [{ name: 'web', port: web.port }] },
        ],
      },
    });
    const convoy = await w.startConvoy('convoy', ['--enable-external-name-services']);
    await w.startEnvoy(convoy, 'apps/gw');
    await w.waitStatus(
      'HTTPRoute',
      'apps',
      'site',
      (s) =>
        (s.parents as { conditions: Condition[] }[] | undefined)?.some(
          (p) =>
            cond(p.conditions, 'ResolvedRefs')?.status === 'True' &&
            cond(p.conditions, 'Accepted')?.status === 'True',
        ) ?? false,
      'route Accepted with resolved backends',
    );
    // The default request timeout (10 s): single requests below are assertions, not polls.
    const get = async (path: string) => {
      const r = await request({ port, host: 'www.example.com', path });
      return r.status === 200 ? r.json<EchoResponse>() : undefined;
    };
    const home = await waitFor(() => get('/'), { what: 'traffic to web through Envoy', timeoutMs: 30_000 });
    assert.equal(home.backend, 'web');
    assert.equal(home.host, 'www.example.com');
    assert.equal((await get('/api/users'))?.backend, 'api');
    // A change in the API server changes the traffic.
    await w.apply({
      apiVersion: GW_API,
      kind: 'HTTPRoute',
      metadata: { name: 'site', namespace: 'apps' },
      spec: {
        parentRefs: [{ name: 'gw' }],
        hostnames: ['www.example.com'],
        rules: [{ backendRefs: [{ name: 'api', port: api.port }] }],
      },
    });
    await waitFor(async () => (await get('/'))?.backend === 'api', {
      what: 'the edited route',
      timeoutMs: 30_000,
    });
    // Deleting the route in the API server removes it from Envoy.
    await w.delete('HTTPRoute', 'apps', 'site');
    await waitFor(
      async () =>
        (await request({ port, host: 'www.example.com', path: '/', timeoutMs: 2000 })).status === 404,
      { what: 'the deleted route to answer 404', timeoutMs: 30_000 },
    );
  });
});
