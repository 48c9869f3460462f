import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  clusterName,
  clusterService,
  fleetName,
  hostnameChainName,
  httpRouteConfigName,
  httpsRouteConfigName,
  listenerName,
  listenerQualifiedName,
  parseClusterName,
  parseListenerQualifiedName,
  parseRouteMatchName,
  routeMatchName,
  secretName,
} from '../../src/model/names';
import { statusKey } from '../../src/status/types';
import { keyOf } from '../../src/store/objects';

describe('resource names (src/model/names.ts)', () => {
  test('the documented shapes', () => {
    assert.equal(fleetName('ns', 'gw'), 'ns/gw');
    assert.equal(listenerName('HTTPS', 8443), 'https-8443');
    assert.equal(httpRouteConfigName(8080), 'http-8080');
    assert.equal(httpsRouteConfigName(8443, '*'), 'https-8443/*');
    assert.equal(
      listenerQualifiedName({ kind: 'ListenerSet', namespace: 'a', name: 'b' }, 'l'),
      'ListenerSet/a/b/l',
    );
    assert.equal(hostnameChainName('Gateway/a/gw/tls', 'x.example.com'), 'Gateway/a/gw/tls/x.example.com');
    assert.equal(routeMatchName('HTTPRoute', 'ns', 'r', 1, 0), 'HTTPRoute/ns/r/rule/1/match/0');
    assert.equal(secretName('ns', 'cert'), 'ns/cert');
  });

  test('cluster names round-trip through parseClusterName', () => {
    for (const [ns, svc, port] of [
      ['default', 'echo', 80],
      ['a-b', 'c.d', 65535],
    ] as const) {
      for (const udp of [false, true]) {
        const name = clusterName(ns, svc, port, udp);
        assert.equal(name.endsWith('/udp'), udp);
        assert.deepEqual(parseClusterName(name), { namespace: ns, service: svc, port, udp });
        assert.equal(clusterService(name), `${ns}/${svc}`);
      }
    }
  });

  test('names that clusterName does not make do not parse', () => {
    for (const bad of [
      'ns/svc',
      'ns/svc/80/x',
      '/svc/80',
      'ns//80',
      'ns/svc/',
      'ns/svc/8.5',
      'ns/svc/65536',
    ]) {
      assert.equal(parseClusterName(bad), undefined, bad);
      assert.equal(clusterService(bad), undefined, bad);
    }
  });

  test('filter chain and route names parse back to the objects that made them', () => {
    const owner = { kind: 'ListenerSet', namespace: 'team-a', name: 'shop' };
    const qn = listenerQualifiedName(owner, 'web');
    assert.deepEqual(parseListenerQualifiedName(qn), { ...owner, listener: 'web' });
    assert.deepEqual(parseListenerQualifiedName(hostnameChainName(qn, 'x.example.com')), {
      ...owner,
      listener: 'web',
    });
    assert.deepEqual(parseRouteMatchName(routeMatchName('GRPCRoute', 'ns', 'r', 12, 3)), {
      kind: 'GRPCRoute',
      namespace: 'ns',
      name: 'r',
    });
    for (const bad of ['Gateway/ns/gw', 'Gateway/ns//l', 'Gateway/ns/gw/l/', 'a/b/c/d/e/f']) {
      assert.equal(parseListenerQualifiedName(bad), undefined, bad);
    }
    for (const bad of [
      'HTTPRoute/ns/r/rule/0',
      'HTTPRoute/ns/r/rule/x/match/0',
      'HTTPRoute/ns/r/path/0/match/0',
    ]) {
      assert.equal(parseRouteMatchName(bad), undefined, bad);
    }
  });

  test('a status and its object have the same store key', () => {
    const obj = { apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'ns', name: 's' } };
    assert.equal(statusKey({ ...obj, status: {} }), keyOf(obj));
    const cls = { apiVersion: 'v1', kind: 'GatewayClass', metadata: { name: 'c' } };
    assert.equal(statusKey({ ...cls, status: {} }), keyOf(cls));
  });
});
