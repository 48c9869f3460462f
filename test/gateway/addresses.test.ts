import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { OPTS, gateway, gatewayClass, httpListener, service, storeOf } from '../support/objects';
import type { BuildOptions } from '../../src/gateway/resolved';

function addressesOf(opts: BuildOptions, ...extra: Parameters<typeof storeOf>) {
  const store = storeOf(gatewayClass(), gateway('edge', [httpListener('http', 8080)]), ...extra);
  const gw = buildGateways(store, opts).statuses.find((s) => s.kind === 'Gateway')!;
  return gw.status.addresses;
}

describe('Gateway status.addresses', () => {
  test('empty when Convoy is not told where the Envoy fleet is', () => {
    assert.deepEqual(addressesOf(OPTS), []);
  });

  test('fixed addresses from flags, typed by shape', () => {
    assert.deepEqual(
      addressesOf({ ...OPTS, gatewayAddresses: { static: ['127.0.0.1', 'edge.example.com', '::1'] } }),
      [
        { type: 'IPAddress', value: '127.0.0.1' },
        { type: 'Hostname', value: 'edge.example.com' },
        { type: 'IPAddress', value: '::1' },
      ],
    );
  });

  test("the Envoy Service's load-balancer ingress, ahead of fixed addresses", () => {
    const envoy = {
      ...service('envoy', [{ name: 'http', port: 80 }], { namespace: 'convoy-system' }),
      loadBalancerIngress: [{ ip: '203.0.113.7' }, { hostname: 'lb.example.net' }],
    };
    const opts = {
      ...OPTS,
      gatewayAddresses: { service: { namespace: 'convoy-system', name: 'envoy' }, static: ['198.51.100.1'] },
    };
    assert.deepEqual(addressesOf(opts, envoy), [
      { type: 'IPAddress', value: '203.0.113.7' },
      { type: 'Hostname', value: 'lb.example.net' },
      { type: 'IPAddress', value: '198.51.100.1' },
    ]);
  });

  test("{namespace} and {name} in the Service name the Gateway's own Service", () => {
    const own = {
      ...service('envoy-edge', [{ name: 'http', port: 80 }]),
      loadBalancerIngress: [{ ip: '198.51.100.20' }],
    };
    const other = {
      ...service('envoy-other', [{ name: 'http', port: 80 }]),
      loadBalancerIngress: [{ ip: '198.51.100.21' }],
    };
    const opts = {
      ...OPTS,
      gatewayAddresses: { service: { namespace: '{namespace}', name: 'envoy-{name}' } },
    };
    assert.deepEqual(addressesOf(opts, own, other), [{ type: 'IPAddress', value: '198.51.100.20' }]);
    assert.deepEqual(addressesOf(opts, other), []);
  });
});
