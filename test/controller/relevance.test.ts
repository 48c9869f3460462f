import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ReferenceIndex,
  changeImpact,
  changesRefusals,
  envoyServiceKeys,
} from '../../src/controller/relevance';
import { configMap, endpointSlice, gateway, httpListener, service, storeOf } from '../support/objects';

test('envoyServiceKeys: a fixed --envoy-service is one key; {namespace}/{name} give one key per Gateway', () => {
  const store = storeOf(
    gateway('edge', [httpListener('http', 80)]),
    gateway('inner', [httpListener('http', 80)], { namespace: 'apps' }),
  );
  assert.deepEqual(envoyServiceKeys({ namespace: 'convoy-system', name: 'envoy' }, store), [
    'convoy-system/envoy',
  ]);
  assert.deepEqual(envoyServiceKeys({ namespace: '{namespace}', name: 'envoy-{name}' }, store).sort(), [
    'apps/envoy-inner',
    'default/envoy-edge',
  ]);
});

test("a change of a Gateway's own Envoy Service triggers a full build; an unrelated Service does not", () => {
  const store = storeOf(gateway('edge', [httpListener('http', 80)]));
  const index = ReferenceIndex.fromStore(
    store,
    envoyServiceKeys({ namespace: '{namespace}', name: 'envoy-{name}' }, store),
  );
  const own = {
    ...service('envoy-edge', [{ name: 'http', port: 80 }]),
    loadBalancerIngress: [{ ip: '198.51.100.9' }],
  };
  const other = service('unrelated', [{ name: 'http', port: 80 }]);
  assert.equal(changeImpact({ type: 'put', key: 'k', kind: 'Service', object: own }, index), 'full');
  assert.equal(changeImpact({ type: 'put', key: 'k', kind: 'Service', object: other }, index), 'none');
});

test('a ConfigMap triggers a build only when a Gateway validates client certificates with it', () => {
  const store = storeOf(
    gateway('edge', [httpListener('http', 80)], {
      spec: {
        tls: {
          frontend: {
            default: { validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] } },
            perPort: [
              {
                port: 443,
                tls: {
                  validation: {
                    caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'shared', namespace: 'pki' }],
                  },
                },
              },
            ],
          },
        },
      },
    }),
  );
  const index = ReferenceIndex.fromStore(store);
  const put = (name: string, namespace = 'default') => ({
    type: 'put' as const,
    key: 'k',
    kind: 'ConfigMap',
    object: configMap(name, { 'ca.crt': 'x' }, { namespace }),
  });
  assert.equal(changeImpact(put('ca'), index), 'full');
  assert.equal(changeImpact(put('shared', 'pki'), index), 'full');
  assert.equal(changeImpact(put('leader-election'), index), 'none');
  assert.equal(changeImpact(put('shared'), index), 'none');
});

test('an EndpointSlice that holds or held a refused endpoint changes the refusals, referenced or not', () => {
  const policy = { protectedPorts: [19000] };
  const admin = endpointSlice('probe-1', 'probe', [{ port: 19000 }], [{ addresses: ['127.0.0.1'] }]);
  const fine = endpointSlice('probe-1', 'probe', [{ port: 19000 }], [{ addresses: ['192.0.2.7'] }]);
  const key = 'EndpointSlice/default/probe-1';
  const put = (object: typeof admin, previous?: typeof admin) =>
    ({ type: 'put', key, kind: 'EndpointSlice', object, previous }) as const;
  assert.equal(changesRefusals(put(admin), policy), true, 'a refused endpoint appears');
  assert.equal(changesRefusals(put(fine, admin), policy), true, 'a refused endpoint goes');
  assert.equal(
    changesRefusals({ type: 'delete', key, kind: 'EndpointSlice', previous: admin }, policy),
    true,
  );
  assert.equal(changesRefusals(put(fine, fine), policy), false, 'no refused endpoint either side');
  assert.equal(changesRefusals(put(admin), {}), true, 'a host-local address is refused without a policy');
});
