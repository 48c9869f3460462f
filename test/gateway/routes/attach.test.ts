import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../../src/gateway/build';
import type { KubeObject } from '../../../src/store/objects';
import type { GatewayBuildResult } from '../../../src/gateway/resolved';
import type { ParentReference } from '../../../src/gateway/api';
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
  routeParents,
  storeOf,
  tlsListener,
  tlsRoute,
} from '../../support/objects';

const LS = { group: 'gateway.networking.k8s.io', kind: 'ListenerSet' };

/** Per parentRef: "Accepted=<status>/<reason>" of the route's status entries. */
function accepted(
  result: GatewayBuildResult,
  name: string,
  ns = 'default',
  kind = 'HTTPRoute',
): string[] | undefined {
  return routeParents(result.statuses, kind, name, ns)?.map((p) => {
    const c = p.conditions.find((x) => x.type === 'Accepted')!;
    return `${c.status}/${c.reason}`;
  });
}

/** attachedRoutes per listener of a Gateway or ListenerSet status. */
function attached(
  result: GatewayBuildResult,
  kind: string,
  name: string,
  ns = 'default',
): Record<string, number> {
  const s = result.statuses.find(
    (x) => x.kind === kind && x.metadata.name === name && x.metadata.namespace === ns,
  );
  assert.ok(s, `${kind} ${ns}/${name} has a status`);
  const out: Record<string, number> = {};
  for (const l of s.status.listeners as { name: string; attachedRoutes: number }[])
    out[l.name] = l.attachedRoutes;
  return out;
}

function route(
  name: string,
  parentRefs: ParentReference[],
  o: { namespace?: string; hostnames?: string[] } = {},
): KubeObject {
  return httpRoute(name, [{ backendRefs: [backendRef('web', 80, { namespace: 'default' })] }], {
    parentRefs,
    ...o,
  });
}

const base = [
  gatewayClass(),
  namespace('default'),
  namespace('team-a', { team: 'a' }),
  namespace('team-b', { team: 'b' }),
  ...backendService('web', 80, ['10.0.0.1']),
];

describe('route attachment: parentRef sectionName and port', () => {
  const gw = gateway('gw', [
    httpListener('http', 80),
    httpListener('admin', 8080, 'admin.example.com'),
    httpListener('alt', 8080, 'alt.example.com'),
  ]);
  const cases: { name: string; ref: ParentReference; expect: string; counts: Record<string, number> }[] = [
    {
      name: 'no sectionName: every listener',
      ref: parentRef('gw'),
      expect: 'True/Accepted',
      counts: { http: 1, admin: 1, alt: 1 },
    },
    {
      name: 'sectionName',
      ref: parentRef('gw', { sectionName: 'admin' }),
      expect: 'True/Accepted',
      counts: { http: 0, admin: 1, alt: 0 },
    },
    {
      name: 'unknown sectionName',
      ref: parentRef('gw', { sectionName: 'nope' }),
      expect: 'False/NoMatchingParent',
      counts: { http: 0, admin: 0, alt: 0 },
    },
    {
      name: 'port selects every listener on it',
      ref: parentRef('gw', { port: 8080 }),
      expect: 'True/Accepted',
      counts: { http: 0, admin: 1, alt: 1 },
    },
    {
      name: 'port with no listener',
      ref: parentRef('gw', { port: 9999 }),
      expect: 'False/NoMatchingParent',
      counts: { http: 0, admin: 0, alt: 0 },
    },
    {
      name: 'sectionName and port both match',
      ref: parentRef('gw', { sectionName: 'alt', port: 8080 }),
      expect: 'True/Accepted',
      counts: { http: 0, admin: 0, alt: 1 },
    },
    {
      name: 'sectionName matches, port does not',
      ref: parentRef('gw', { sectionName: 'http', port: 8080 }),
      expect: 'False/NoMatchingParent',
      counts: { http: 0, admin: 0, alt: 0 },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const result = buildGateways(storeOf(...base, gw, route('r', [c.ref])), OPTS);
      assert.deepEqual(accepted(result, 'r'), [c.expect]);
      assert.deepEqual(attached(result, 'Gateway', 'gw'), c.counts);
    });
  }
});

describe('route attachment: allowedRoutes namespaces and kinds', () => {
  const gw = gateway(
    'gw',
    [
      httpListener('same', 80, 'same.example.com'),
      httpListener('all', 80, 'all.example.com', { allowedRoutes: { namespaces: { from: 'All' } } }),
      httpListener('team-a', 80, 'a.example.com', {
        allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { team: 'a' } } } },
      }),
      httpListener('grpc-only', 80, 'grpc.example.com', {
        allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'GRPCRoute' }] },
      }),
    ],
    { namespace: 'infra' },
  );
  const ref = (sectionName?: string) =>
    parentRef('gw', { namespace: 'infra', ...(sectionName ? { sectionName } : {}) });
  const cases: { name: string; ns: string; ref: ParentReference; expect: string }[] = [
    { name: 'Same: route in the Gateway namespace', ns: 'infra', ref: ref('same'), expect: 'True/Accepted' },
    { name: 'Same: route elsewhere', ns: 'team-b', ref: ref('same'), expect: 'False/NotAllowedByListeners' },
    { name: 'All: any namespace', ns: 'team-b', ref: ref('all'), expect: 'True/Accepted' },
    { name: 'Selector: labelled namespace', ns: 'team-a', ref: ref('team-a'), expect: 'True/Accepted' },
    {
      name: 'Selector: unlabelled namespace',
      ns: 'team-b',
      ref: ref('team-a'),
      expect: 'False/NotAllowedByListeners',
    },
    {
      name: 'kinds: HTTPRoute not in the list',
      ns: 'infra',
      ref: ref('grpc-only'),
      expect: 'False/NotAllowedByListeners',
    },
    {
      name: 'whole Gateway: accepted when at least one listener allows it',
      ns: 'team-b',
      ref: ref(),
      expect: 'True/Accepted',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const result = buildGateways(storeOf(...base, gw, route('r', [c.ref], { namespace: c.ns })), OPTS);
      assert.deepEqual(accepted(result, 'r', c.ns), [c.expect]);
    });
  }

  test('whole Gateway from team-b: attached only to the All listener', () => {
    const result = buildGateways(storeOf(...base, gw, route('r', [ref()], { namespace: 'team-b' })), OPTS);
    assert.deepEqual(attached(result, 'Gateway', 'gw', 'infra'), {
      same: 0,
      all: 1,
      'team-a': 0,
      'grpc-only': 0,
    });
  });

  test('TLSRoute on HTTP/HTTPS listeners is NotAllowedByListeners', () => {
    const result = buildGateways(
      storeOf(
        ...base,
        gw,
        tlsRoute('t', ['all.example.com'], [{ backendRefs: [backendRef('web', 80)] }], {
          namespace: 'infra',
          parentRefs: [ref()],
        }),
      ),
      OPTS,
    );
    assert.deepEqual(accepted(result, 't', 'infra', 'TLSRoute'), ['False/NotAllowedByListeners']);
  });
});

describe('route attachment: hostnames', () => {
  const gw = gateway('gw', [
    httpListener('exact', 80, 'very.specific.com'),
    httpListener('wild', 80, '*.wildcard.io'),
  ]);
  const cases: { name: string; hostnames?: string[]; expect: string; counts: Record<string, number> }[] = [
    { name: 'no route hostnames: every listener', expect: 'True/Accepted', counts: { exact: 1, wild: 1 } },
    {
      name: 'exact match',
      hostnames: ['very.specific.com'],
      expect: 'True/Accepted',
      counts: { exact: 1, wild: 0 },
    },
    {
      name: 'route wildcard narrows to the listener host',
      hostnames: ['*.specific.com'],
      expect: 'True/Accepted',
      counts: { exact: 1, wild: 0 },
    },
    {
      name: 'under the listener wildcard',
      hostnames: ['a.b.wildcard.io'],
      expect: 'True/Accepted',
      counts: { exact: 0, wild: 1 },
    },
    {
      name: 'the wildcard base is not matched',
      hostnames: ['wildcard.io'],
      expect: 'False/NoMatchingListenerHostname',
      counts: { exact: 0, wild: 0 },
    },
    {
      name: 'nothing intersects',
      hostnames: ['other.com', 'specific.com'],
      expect: 'False/NoMatchingListenerHostname',
      counts: { exact: 0, wild: 0 },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const result = buildGateways(
        storeOf(...base, gw, route('r', [parentRef('gw')], { hostnames: c.hostnames })),
        OPTS,
      );
      assert.deepEqual(accepted(result, 'r'), [c.expect]);
      assert.deepEqual(attached(result, 'Gateway', 'gw'), c.counts);
    });
  }
});

describe('route attachment: ListenerSets (direct parent rule)', () => {
  const gw = gateway('gw', [httpListener('gw-http', 80, 'gw.example.com')], {
    allowedListeners: { namespaces: { from: 'All' } },
  });
  const set = listenerSet('set', { name: 'gw' }, [
    httpListener('ls-http', 80, 'ls.example.com'),
    httpListener('ls-only-listener', 8080, 'ls2.example.com'),
  ]);
  const objects = [...base, gw, set];

  test('Gateway parentRef reaches only Gateway listeners; ListenerSet parentRef only the set', () => {
    const result = buildGateways(
      storeOf(...objects, route('to-gw', [parentRef('gw')]), route('to-set', [parentRef('set', LS)])),
      OPTS,
    );
    assert.deepEqual(accepted(result, 'to-gw'), ['True/Accepted']);
    assert.deepEqual(accepted(result, 'to-set'), ['True/Accepted']);
    assert.deepEqual(attached(result, 'Gateway', 'gw'), { 'gw-http': 1 });
    assert.deepEqual(attached(result, 'ListenerSet', 'set'), { 'ls-http': 1, 'ls-only-listener': 1 });
  });

  test('a Gateway sectionName that exists only on the set is NoMatchingParent; both parents are independent', () => {
    const result = buildGateways(
      storeOf(
        ...objects,
        route('dual', [
          parentRef('gw', { sectionName: 'ls-only-listener' }),
          parentRef('set', { ...LS, sectionName: 'ls-only-listener' }),
        ]),
      ),
      OPTS,
    );
    assert.deepEqual(accepted(result, 'dual'), ['False/NoMatchingParent', 'True/Accepted']);
    const parents = routeParents(result.statuses, 'HTTPRoute', 'dual')!;
    assert.deepEqual(parents[1].parentRef, { name: 'set', ...LS, sectionName: 'ls-only-listener' });
    assert.deepEqual(attached(result, 'ListenerSet', 'set'), { 'ls-http': 0, 'ls-only-listener': 1 });
  });

  test('ListenerSet port selects the set listeners on that port', () => {
    const result = buildGateways(
      storeOf(...objects, route('r', [parentRef('set', { ...LS, port: 8080 })])),
      OPTS,
    );
    assert.deepEqual(attached(result, 'ListenerSet', 'set'), { 'ls-http': 0, 'ls-only-listener': 1 });
  });

  test('"Same" on a set listener means the set namespace, not the Gateway namespace', () => {
    const crossSet = listenerSet(
      'x-set',
      { name: 'gw', namespace: 'default' },
      [httpListener('x', 80, 'x.example.com')],
      {
        namespace: 'team-a',
      },
    );
    const result = buildGateways(
      storeOf(
        ...objects,
        crossSet,
        route('in-set-ns', [parentRef('x-set', { ...LS, namespace: 'team-a' })], { namespace: 'team-a' }),
        route('in-gw-ns', [parentRef('x-set', { ...LS, namespace: 'team-a' })]),
      ),
      OPTS,
    );
    assert.deepEqual(accepted(result, 'in-set-ns', 'team-a'), ['True/Accepted']);
    assert.deepEqual(accepted(result, 'in-gw-ns'), ['False/NotAllowedByListeners']);
    assert.deepEqual(attached(result, 'ListenerSet', 'x-set', 'team-a'), { x: 1 });
  });

  test('a ListenerSet the Gateway does not admit: NoMatchingParent, nothing attached', () => {
    const closed = gateway('gw', [httpListener('gw-http', 80, 'gw.example.com')]);
    const result = buildGateways(storeOf(...base, closed, set, route('r', [parentRef('set', LS)])), OPTS);
    assert.deepEqual(accepted(result, 'r'), ['False/NoMatchingParent']);
  });
});

describe('route status', () => {
  const gw = gateway('gw', [httpListener('http', 80)]);

  test('only parentRefs to Convoy parents get entries; parentRef echoed as written', () => {
    const foreign = gateway('foreign', [httpListener('http', 80)], { className: 'other' });
    const explicit = {
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      name: 'gw',
      namespace: 'default',
    };
    const result = buildGateways(
      storeOf(
        ...base,
        gatewayClass('other', 'example.com/other'),
        gw,
        foreign,
        route('r', [
          parentRef('foreign'),
          explicit,
          parentRef('missing'),
          { name: 'gw', group: '', kind: 'Service' },
        ]),
        route('only-foreign', [parentRef('foreign')]),
      ),
      OPTS,
    );
    const parents = routeParents(result.statuses, 'HTTPRoute', 'r')!;
    assert.deepEqual(
      parents.map((p) => p.parentRef),
      [explicit],
    );
    assert.equal(parents[0].controllerName, OPTS.controllerName);
    assert.equal(routeParents(result.statuses, 'HTTPRoute', 'only-foreign'), undefined);
  });

  test('ResolvedRefs=False does not prevent Accepted=True; every condition has observedGeneration', () => {
    const r = httpRoute('r', [{ backendRefs: [backendRef('missing', 80)] }], { generation: 7 });
    const result = buildGateways(storeOf(...base, gw, r), OPTS);
    const [p] = routeParents(result.statuses, 'HTTPRoute', 'r')!;
    assert.deepEqual(
      p.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`),
      ['Accepted=True/Accepted', 'ResolvedRefs=False/BackendNotFound'],
    );
    assert.ok(p.conditions.every((c) => c.observedGeneration === 7));
    assert.deepEqual(attached(result, 'Gateway', 'gw'), { http: 1 });
  });

  test('some rules invalid: Accepted with PartiallyInvalid; all invalid: Accepted=False and not counted', () => {
    const partly = httpRoute('partly', [
      { backendRefs: [backendRef('web', 80)] },
      { matches: [{ method: 'BREW' }] },
    ]);
    const broken = httpRoute('broken', [{ matches: [{ method: 'BREW' }] }]);
    const result = buildGateways(storeOf(...base, gw, partly, broken), OPTS);
    const [p] = routeParents(result.statuses, 'HTTPRoute', 'partly')!;
    assert.deepEqual(
      p.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`),
      ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs', 'PartiallyInvalid=True/UnsupportedValue'],
    );
    assert.match(p.conditions[2].message, /^Dropped Rule/);
    assert.deepEqual(accepted(result, 'broken'), ['False/UnsupportedValue']);
    assert.deepEqual(attached(result, 'Gateway', 'gw'), { http: 1 });
  });

  test('a listener with an unresolved certificate still counts its routes but is not programmed', () => {
    const httpsGw = gateway('gw', [httpsListener('https', 443, 'secure.example.com', 'missing-secret')]);
    const result = buildGateways(storeOf(...base, httpsGw, route('r', [parentRef('gw')])), OPTS);
    assert.deepEqual(accepted(result, 'r'), ['True/Accepted']);
    assert.deepEqual(attached(result, 'Gateway', 'gw'), { https: 1 });
    assert.deepEqual(result.fleets[0].ports, []);
  });

  test('TLSRoute on a TLS listener: hostnames must intersect', () => {
    const tlsGw = gateway('gw', [tlsListener('tls', 443, '*.example.com', 'Passthrough')]);
    const result = buildGateways(
      storeOf(
        ...base,
        tlsGw,
        tlsRoute('ok', ['db.example.com'], [{ backendRefs: [backendRef('web', 80)] }]),
        tlsRoute('miss', ['db.other.com'], [{ backendRefs: [backendRef('web', 80)] }]),
      ),
      OPTS,
    );
    assert.deepEqual(accepted(result, 'ok', 'default', 'TLSRoute'), ['True/Accepted']);
    assert.deepEqual(accepted(result, 'miss', 'default', 'TLSRoute'), ['False/NoMatchingListenerHostname']);
    assert.deepEqual(attached(result, 'Gateway', 'gw'), { tls: 1 });
  });
});
