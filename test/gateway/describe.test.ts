import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { explainHost, explainListener, hostnameSpecificity } from '../../src/gateway/describe';
import {
  OPTS,
  backendRef,
  backendService,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  httpsListener,
  listenerSet,
  namespace,
  parentRef,
  storeOf,
  tlsSecret,
} from '../support/objects';

/**
 * `convoy describe` explains a real build (buildGateways over objects): the listener that serves a
 * hostname per port, its certificate and routes, and why each other candidate lost.
 */

function world() {
  const store = storeOf(
    namespace('default'),
    namespace('other'),
    gatewayClass(),
    gateway(
      'gw',
      [
        httpListener('http', 80),
        httpsListener('wild', 443, '*.example.com', 'wild'),
        httpListener('dup-a', 8080, 'dup.example.com'),
        httpListener('dup-b', 8080, 'dup.example.com', {
          protocol: 'HTTPS',
          tls: { certificateRefs: [{ name: 'wild' }] },
        }),
      ],
      { allowedListeners: { namespaces: { from: 'Same' } } },
    ),
    listenerSet('team', { name: 'gw' }, [httpsListener('www', 443, 'www.example.com', 'www')]),
    listenerSet(
      'outsider',
      { name: 'gw', namespace: 'default' },
      [httpsListener('www', 443, 'www.example.com', 'www')],
      {
        namespace: 'other',
      },
    ),
    tlsSecret('wild', { hostnames: ['*.example.com'] }),
    tlsSecret('www', { hostnames: ['www.example.com'] }),
    ...backendService('web', 80, ['10.0.0.1']),
    httpRoute('site', [{ backendRefs: [backendRef('web', 80)] }], { hostnames: ['www.example.com'] }),
    httpRoute('team-site', [{ backendRefs: [backendRef('web', 80)] }], {
      hostnames: ['www.example.com'],
      parentRefs: [parentRef('team', { kind: 'ListenerSet', group: 'gateway.networking.k8s.io' })],
    }),
  );
  return buildGateways(store, OPTS).state;
}

describe('describe host', () => {
  test('per port: the most specific ready listener serves; the others say why not', () => {
    const ports = explainHost(world(), 'www.example.com');
    assert.deepEqual(
      ports.map((p) => [p.gateway, p.port, p.serving?.listener]),
      [
        ['default/gw', 80, 'Gateway/default/gw/http'],
        ['default/gw', 443, 'ListenerSet/default/team/www'],
      ],
    );
    const http = ports[0];
    assert.deepEqual(
      http.serving?.routes.map((r) => [r.route, r.hostnames, r.backends]),
      [['HTTPRoute/default/site', ['www.example.com'], ['default/web/80']]],
    );
    const https = ports[1];
    assert.deepEqual(
      https.serving?.certificates.map((c) => [c.secret, c.dnsNames]),
      [['default/www', ['www.example.com']]],
    );
    assert.ok(https.serving!.certificates[0].notAfter! > https.serving!.certificates[0].notBefore!);
    assert.deepEqual(
      https.serving?.routes.map((r) => r.route),
      ['HTTPRoute/default/team-site'],
    );
    const lost = new Map(https.lost.map((c) => [c.listener, c.reason]));
    assert.match(
      lost.get('Gateway/default/gw/wild') ?? '',
      /^a more specific hostname wins: www\.example\.com/,
    );
    assert.match(lost.get('ListenerSet/other/outsider/www') ?? '', /^not allowed: .*namespace other/);
    assert.equal(lost.size, 2);
  });

  test('a conflicted listener loses with its condition', () => {
    const [p] = explainHost(world(), 'dup.example.com').filter((x) => x.port === 8080);
    const all = [p.serving?.listener, ...p.lost.map((c) => c.listener)].sort();
    assert.deepEqual(all.filter(Boolean), ['Gateway/default/gw/dup-a', 'Gateway/default/gw/dup-b']);
    assert.ok(p.lost.length >= 1);
    for (const c of p.lost) assert.match(c.reason, /^(conflict|not ready): /);
  });

  test('a name no listener hostname matches gets nothing on that port', () => {
    const ports = explainHost(world(), 'www.elsewhere.org');
    assert.deepEqual(
      ports.map((p) => p.port),
      [80],
      'only the listener without a hostname matches',
    );
  });
});

describe('describe listener', () => {
  test('a ListenerSet listener with its routes and the listeners sharing its port', () => {
    const [found, ...more] = explainListener(world(), 'default', 'team', 'www');
    assert.equal(more.length, 0);
    assert.equal(found.listener.listener, 'ListenerSet/default/team/www');
    assert.equal(found.listener.ready, true);
    assert.deepEqual(
      found.listener.routes.map((r) => r.route),
      ['HTTPRoute/default/team-site'],
    );
    assert.deepEqual(found.samePort.map((c) => c.listener).sort(), [
      'Gateway/default/gw/wild',
      'ListenerSet/other/outsider/www',
    ]);
    assert.deepEqual(explainListener(world(), 'default', 'team', 'nope'), []);
  });
});

test('hostname specificity: exact over longer wildcard over shorter wildcard over none; no match is 0', () => {
  const h = 'a.b.example.com';
  const order = [h, '*.b.example.com', '*.example.com', undefined].map((l) => hostnameSpecificity(l, h));
  assert.deepEqual(
    [...order].sort((x, y) => y - x),
    order,
  );
  assert.equal(hostnameSpecificity('*.example.com', 'example.com'), 0);
  assert.equal(hostnameSpecificity('other.com', h), 0);
  assert.equal(hostnameSpecificity('A.B.Example.com.', h) > 1000, true);
});
