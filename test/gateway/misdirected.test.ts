import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { translateFleet } from '../../src/envoy/translate';
import type { KubeObject } from '../../src/store/objects';
import {
  OPTS,
  backendRef,
  backendService,
  gateway,
  gatewayClass,
  httpRoute,
  httpsListener,
  parentRef,
  storeOf,
  tlsListener,
  tlsSecret,
} from '../support/objects';

/** Misdirected requests (421) on HTTPS listeners sharing a port, docs/gateway-api.md §26. */

// The listeners of the conformance test HTTPRouteHTTPSListenerDetectMisdirectedRequests.
const listeners = [
  httpsListener('https', 443, undefined, 'cert'),
  httpsListener('second', 443, 'second-example.org', 'cert'),
  httpsListener('wildcard', 443, '*.wildcard.org', 'cert'),
  httpsListener('fourth', 443, 'fourth-example.wildcard.org', 'cert'),
  tlsListener('passthrough', 443, 'tls.example.org', 'Passthrough'),
];

function build(...objects: KubeObject[]) {
  return buildGateways(
    storeOf(
      gatewayClass(),
      tlsSecret('cert'),
      ...backendService('web', 80, ['10.0.0.1']),
      gateway('gw', listeners),
      ...objects,
    ),
    OPTS,
  ).fleets[0];
}

const route = (name: string, section: string, hostnames?: string[]) =>
  httpRoute(name, [{ backendRefs: [backendRef('web', 80)] }], {
    parentRefs: [parentRef('gw', { sectionName: section })],
    ...(hostnames ? { hostnames } : {}),
  });

describe('misdirected hosts', () => {
  test('each chain misdirects the hosts the other listeners of its port win by SNI', () => {
    const fleet = build();
    const chains = Object.fromEntries(
      fleet.ports[0].filterChains
        .filter((c) => c.protocol === 'HTTPS')
        .map((c) => [c.name, c.misdirectedHosts]),
    );
    assert.deepEqual(chains, {
      'Gateway/default/gw/https': [
        '*.wildcard.org',
        'fourth-example.wildcard.org',
        'second-example.org',
        'tls.example.org',
      ],
      'Gateway/default/gw/second': ['*'],
      'Gateway/default/gw/wildcard': ['*', 'fourth-example.wildcard.org'],
      'Gateway/default/gw/fourth': ['*'],
    });
  });

  test('the route configuration keeps its own hosts, then a 404 own-host host, then the 421 host', () => {
    const res = translateFleet(
      build(route('one', 'https', ['example.org']), route('three', 'wildcard', ['a.wildcard.org'])),
    );
    const rc = (name: string) => res.routes.find((r) => r.name === name);
    const summary = (name: string) =>
      rc(name)?.virtual_hosts?.map((vh) => [
        vh.name,
        vh.domains,
        vh.routes?.map((r) => r.direct_response?.status ?? 'route') ?? [],
      ]);
    assert.deepEqual(summary('https-443/*'), [
      ['example.org', ['example.org'], ['route']],
      [
        'misdirected:421',
        ['*.wildcard.org', 'fourth-example.wildcard.org', 'second-example.org', 'tls.example.org'],
        [421],
      ],
    ]);
    assert.deepEqual(summary('https-443/*.wildcard.org'), [
      ['a.wildcard.org', ['a.wildcard.org'], ['route']],
      ['*.wildcard.org', ['*.wildcard.org'], []],
      ['misdirected:421', ['*', 'fourth-example.wildcard.org'], [421]],
    ]);
    // A route for the listener's own hostname: no second virtual host for it.
    assert.deepEqual(
      translateFleet(build(route('two', 'second')))
        .routes.find((r) => r.name === 'https-443/second-example.org')
        ?.virtual_hosts?.map((vh) => vh.name),
      ['second-example.org', 'misdirected:421'],
    );
  });

  test('a listener added to the port changes route configurations only, never the Listener', () => {
    const before = translateFleet(build(route('one', 'https', ['example.org'])));
    const more = buildGateways(
      storeOf(
        gatewayClass(),
        tlsSecret('cert'),
        ...backendService('web', 80, ['10.0.0.1']),
        gateway('gw', [...listeners, httpsListener('new', 443, 'new.example.org', 'cert')]),
        route('one', 'https', ['example.org']),
      ),
      OPTS,
    ).fleets[0];
    const after = translateFleet(more);
    const chainsOf = (r: typeof before) =>
      r.listeners[0].filter_chains?.filter((c) => c.name !== 'Gateway/default/gw/new');
    assert.deepEqual(chainsOf(after), chainsOf(before));
    const catchAll = after.routes.find((r) => r.name === 'https-443/*');
    assert.ok(catchAll?.virtual_hosts?.at(-1)?.domains?.includes('new.example.org'));
  });
});
