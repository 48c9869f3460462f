import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildClusters,
  refreshClusterEndpoints,
  resolveBackendRef,
  serviceEndpoints,
} from '../../../src/gateway/backends';
import type { BackendReferrer, BackendUse } from '../../../src/gateway/backends';
import type { BackendObjectReference } from '../../../src/gateway/api';
import { endpointSlice, referenceGrant, service, storeOf } from '../../support/objects';

const FROM: BackendReferrer = { kind: 'HTTPRoute', namespace: 'app' };

describe('resolveBackendRef', () => {
  const view = storeOf(
    service(
      'web',
      [
        { name: 'http', port: 80 },
        { name: 'grpc', port: 9000, appProtocol: 'kubernetes.io/h2c' },
      ],
      {
        namespace: 'app',
      },
    ),
    service('other', [{ port: 8080 }], { namespace: 'other' }),
    service('secure', [{ name: 'https', port: 443, appProtocol: 'https' }], { namespace: 'app' }),
    service('granted', [{ port: 8080 }], { namespace: 'shared' }),
    referenceGrant(
      'routes-in',
      {
        from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'app' }],
        to: [{ group: '', kind: 'Service' }],
      },
      { namespace: 'shared' },
    ),
  );
  const cases: {
    name: string;
    ref: BackendObjectReference;
    use?: BackendUse;
    from?: BackendReferrer;
    expect: { cluster: string; protocol: string } | { reason: string };
  }[] = [
    {
      name: 'same namespace Service',
      ref: { name: 'web', port: 80 },
      expect: { cluster: 'app/web/80', protocol: 'http1' },
    },
    {
      name: 'explicit core group and kind',
      ref: { group: '', kind: 'Service', name: 'web', port: 80 },
      expect: { cluster: 'app/web/80', protocol: 'http1' },
    },
    {
      name: 'h2c appProtocol gives http2',
      ref: { name: 'web', port: 9000 },
      expect: { cluster: 'app/web/9000', protocol: 'http2' },
    },
    {
      name: 'GRPCRoute use gives http2',
      ref: { name: 'web', port: 80 },
      use: 'grpc',
      expect: { cluster: 'app/web/80', protocol: 'http2' },
    },
    {
      name: 'TLSRoute use gives tcp',
      ref: { name: 'web', port: 80 },
      use: 'tcp',
      expect: { cluster: 'app/web/80', protocol: 'tcp' },
    },
    { name: 'missing Service', ref: { name: 'nope', port: 80 }, expect: { reason: 'BackendNotFound' } },
    {
      name: 'appProtocol https needs TLS origination',
      ref: { name: 'secure', port: 443 },
      expect: { reason: 'UnsupportedProtocol' },
    },
    {
      name: 'appProtocol https is fine for TLS passthrough',
      ref: { name: 'secure', port: 443 },
      use: 'tcp',
      expect: { cluster: 'app/secure/443', protocol: 'tcp' },
    },
    { name: 'missing port', ref: { name: 'web' }, expect: { reason: 'BackendNotFound' } },
    { name: 'port not on Service', ref: { name: 'web', port: 81 }, expect: { reason: 'BackendNotFound' } },
    { name: 'unknown kind', ref: { kind: 'Pod', name: 'web', port: 80 }, expect: { reason: 'InvalidKind' } },
    {
      name: 'unknown group',
      ref: { group: 'example.com', kind: 'Service', name: 'web', port: 80 },
      expect: { reason: 'InvalidKind' },
    },
    {
      name: 'cross namespace without grant',
      ref: { name: 'other', namespace: 'other', port: 8080 },
      expect: { reason: 'RefNotPermitted' },
    },
    {
      name: 'cross namespace without grant to a missing Service is still RefNotPermitted',
      ref: { name: 'ghost', namespace: 'other', port: 8080 },
      expect: { reason: 'RefNotPermitted' },
    },
    {
      name: 'cross namespace with grant',
      ref: { name: 'granted', namespace: 'shared', port: 8080 },
      expect: { cluster: 'shared/granted/8080', protocol: 'http1' },
    },
    {
      name: 'grant for HTTPRoute does not cover GRPCRoute',
      ref: { name: 'granted', namespace: 'shared', port: 8080 },
      from: { kind: 'GRPCRoute', namespace: 'app' },
      use: 'grpc',
      expect: { reason: 'RefNotPermitted' },
    },
    {
      name: 'grant for namespace app does not cover namespace other',
      ref: { name: 'granted', namespace: 'shared', port: 8080 },
      from: { kind: 'HTTPRoute', namespace: 'other' },
      expect: { reason: 'RefNotPermitted' },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = resolveBackendRef(view, c.from ?? FROM, c.ref, c.use ?? 'http');
      if ('reason' in c.expect) {
        assert.equal(r.ok, false);
        if (!r.ok) {
          assert.equal(r.reason, c.expect.reason);
          assert.ok(r.message.length > 0);
        }
      } else {
        assert.ok(r.ok, JSON.stringify(r));
        if (r.ok) {
          assert.equal(r.cluster.name, c.expect.cluster);
          assert.equal(r.cluster.protocol, c.expect.protocol);
        }
      }
    });
  }
});

describe('serviceEndpoints', () => {
  const svc = service(
    'web',
    [
      { name: 'http', port: 80 },
      { name: 'admin', port: 9090 },
    ],
    { namespace: 'app' },
  );
  const unnamed = service('plain', [{ port: 8080 }], { namespace: 'app' });

  test('matches slice ports by name, uses the slice port, skips not-ready, dedupes and sorts', () => {
    const view = storeOf(
      svc,
      endpointSlice(
        'web-1',
        'web',
        [
          { name: 'http', port: 3000 },
          { name: 'admin', port: 3001 },
        ],
        [
          { addresses: ['10.0.0.9'] },
          { addresses: ['10.0.0.3'], ready: false },
          { addresses: ['10.0.0.10'] },
        ],
        { namespace: 'app' },
      ),
      endpointSlice(
        'web-2',
        'web',
        [{ name: 'http', port: 3000 }],
        [{ addresses: ['10.0.0.9', '10.0.0.1'] }],
        {
          namespace: 'app',
        },
      ),
      // Same labels but another namespace: ignored.
      endpointSlice('web-3', 'web', [{ name: 'http', port: 3000 }], [{ addresses: ['10.9.9.9'] }], {
        namespace: 'x',
      }),
      // FQDN slices cannot feed EDS.
      endpointSlice('web-4', 'web', [{ name: 'http', port: 3000 }], [{ addresses: ['db.example.com'] }], {
        namespace: 'app',
        addressType: 'FQDN',
      }),
    );
    assert.deepEqual(serviceEndpoints(view, 'app', 'web', 80), [
      { address: '10.0.0.1', port: 3000, ready: true },
      { address: '10.0.0.10', port: 3000, ready: true },
      { address: '10.0.0.9', port: 3000, ready: true },
    ]);
    assert.deepEqual(serviceEndpoints(view, 'app', 'web', 9090), [
      { address: '10.0.0.10', port: 3001, ready: true },
      { address: '10.0.0.9', port: 3001, ready: true },
    ]);
  });

  test('an unnamed Service port matches the unnamed slice port', () => {
    const view = storeOf(
      unnamed,
      endpointSlice('plain-1', 'plain', [{ port: 3000 }], [{ addresses: ['10.0.0.1'] }], {
        namespace: 'app',
      }),
    );
    assert.deepEqual(serviceEndpoints(view, 'app', 'plain', 8080), [
      { address: '10.0.0.1', port: 3000, ready: true },
    ]);
  });

  test('missing Service, unknown port or no slices give no endpoints', () => {
    const view = storeOf(svc);
    assert.deepEqual(serviceEndpoints(view, 'app', 'web', 80), []);
    assert.deepEqual(serviceEndpoints(view, 'app', 'web', 81), []);
    assert.deepEqual(serviceEndpoints(view, 'app', 'nope', 80), []);
  });
});

describe('buildClusters', () => {
  test('dedupes by name, strongest protocol wins, sorted by name, endpoints attached', () => {
    const view = storeOf(
      service('b', [{ name: 'http', port: 80 }], { namespace: 'app' }),
      service('a', [{ name: 'http', port: 80 }], { namespace: 'app' }),
      endpointSlice('b-1', 'b', [{ name: 'http', port: 8080 }], [{ addresses: ['10.0.0.1'] }], {
        namespace: 'app',
      }),
    );
    const ref = (service: string, protocol: 'http1' | 'http2' | 'tcp') => ({
      name: `app/${service}/80`,
      namespace: 'app',
      service,
      port: 80,
      protocol,
    });
    const clusters = buildClusters(view, [
      ref('b', 'tcp'),
      ref('a', 'http1'),
      ref('b', 'http2'),
      ref('b', 'http1'),
    ]);
    assert.deepEqual(clusters, [
      { name: 'app/a/80', protocol: 'http1', endpoints: [] },
      { name: 'app/b/80', protocol: 'http2', endpoints: [{ address: '10.0.0.1', port: 8080, ready: true }] },
    ]);
  });
});

describe('refreshClusterEndpoints', () => {
  test('recomputes endpoints from the current slices, keeping names and protocols, leaving out refused ones', () => {
    const svc = service('web', [{ name: 'http', port: 80 }], { namespace: 'app' });
    const before = buildClusters(storeOf(svc), [
      { name: 'app/web/80', namespace: 'app', service: 'web', port: 80, protocol: 'http2' },
    ]);
    assert.deepEqual(before[0].endpoints, []);
    const view = storeOf(
      svc,
      endpointSlice(
        'web-1',
        'web',
        [{ name: 'http', port: 3000 }],
        [{ addresses: ['10.0.0.1'] }, { addresses: ['127.0.0.1'] }],
        { namespace: 'app' },
      ),
    );
    assert.deepEqual(refreshClusterEndpoints(view, before, {}), [
      {
        name: 'app/web/80',
        protocol: 'http2',
        endpoints: [{ address: '10.0.0.1', port: 3000, ready: true }],
      },
    ]);
    assert.deepEqual(
      refreshClusterEndpoints(view, before, { allowLoopback: true })[0].endpoints.map((e) => e.address),
      ['10.0.0.1', '127.0.0.1'],
    );
  });
});
