import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayAndListenerSetStatuses } from '../../src/gateway/gateway-status';
import { resolveGateways } from '../../src/gateway/gateways';
import { compareListenerSets, listenerSetAllowed, listenerSetParent } from '../../src/gateway/listenersets';
import type { GatewayStatus, Listener, ListenerSetStatus, AllowedListeners } from '../../src/gateway/api';
import type { KubeObject } from '../../src/store/objects';
import type { ObjectStatus } from '../../src/status/types';
import {
  condSummary,
  gateway,
  gatewayClass,
  httpListener,
  httpsListener,
  listenerSet,
  namespace,
  OPTS,
  referenceGrant,
  storeOf,
  tlsSecret,
} from '../support/objects';

const G = 'gateway.networking.k8s.io';
const OK = [
  'Accepted=True/Accepted',
  'Programmed=True/Programmed',
  'ResolvedRefs=True/ResolvedRefs',
  'Conflicted=False/NoConflicts',
];
const conflicted = (reason: string) => [
  `Accepted=False/${reason}`,
  `Programmed=False/${reason}`,
  'ResolvedRefs=True/ResolvedRefs',
  `Conflicted=True/${reason}`,
];
const SET_OK = ['Accepted=True/Accepted', 'Programmed=True/Programmed'];
const SET_PARTIAL = ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed'];
const NOT_ALLOWED = ['Accepted=False/NotAllowed', 'Programmed=False/NotAllowed'];
const NOT_VALID = ['Accepted=False/ListenersNotValid', 'Programmed=False/ListenersNotValid'];

interface Outcome {
  statuses: ObjectStatus[];
  gw(name?: string): GatewayStatus;
  ls(namespace: string, name: string): ListenerSetStatus | undefined;
}

function run(...objects: KubeObject[]): Outcome {
  const view = storeOf(gatewayClass(), ...objects);
  const statuses = gatewayAndListenerSetStatuses(resolveGateways(view, OPTS), OPTS);
  return {
    statuses,
    gw(name = 'gw') {
      const s = statuses.find((x) => x.kind === 'Gateway' && x.metadata.name === name);
      assert.ok(s, `no status for Gateway ${name}`);
      return s.status as unknown as GatewayStatus;
    },
    ls(ns, name) {
      const s = statuses.find(
        (x) => x.kind === 'ListenerSet' && x.metadata.namespace === ns && x.metadata.name === name,
      );
      return s?.status as unknown as ListenerSetStatus | undefined;
    },
  };
}

const allow = (
  from: 'All' | 'Same' | 'None' | 'Selector',
  selector?: AllowedListeners['namespaces'],
): { allowedListeners: AllowedListeners } => ({
  allowedListeners: { namespaces: { from, ...(selector ?? {}) } },
});
const ls = (
  name: string,
  ns: string,
  listeners: Listener[],
  ts = '2026-01-01T00:00:00Z',
  parentNs?: string,
) =>
  listenerSet(name, { name: 'gw', ...(parentNs ? { namespace: parentNs } : {}) }, listeners, {
    namespace: ns,
    created: ts,
  });

describe('listenerSetParent', () => {
  const cases: { name: string; parentRef: Record<string, string>; want?: string }[] = [
    { name: 'defaults group, kind and namespace', parentRef: { name: 'gw' }, want: 'apps/gw' },
    { name: 'explicit namespace', parentRef: { name: 'gw', namespace: 'infra' }, want: 'infra/gw' },
    {
      name: 'explicit group and kind',
      parentRef: { group: G, kind: 'Gateway', name: 'gw' },
      want: 'apps/gw',
    },
    { name: 'other kind', parentRef: { kind: 'Service', name: 'gw' } },
    { name: 'other group', parentRef: { group: 'example.io', name: 'gw' } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // The parentRef exactly as given, without the defaults an API server would fill in.
      const obj = { ...listenerSet('s', { name: 'gw' }, [], { namespace: 'apps' }) };
      obj.spec = { parentRef: c.parentRef, listeners: [] };
      const p = listenerSetParent(obj);
      assert.equal(p ? `${p.namespace}/${p.name}` : undefined, c.want);
    });
  }
});

describe('compareListenerSets', () => {
  test('creationTimestamp first, then namespace/name', () => {
    const sets = [
      listenerSet('b', { name: 'gw' }, [], { namespace: 'x', created: '2026-01-02T00:00:00Z' }),
      listenerSet('a', { name: 'gw' }, [], { namespace: 'y', created: '2026-01-01T00:00:00Z' }),
      listenerSet('a', { name: 'gw' }, [], { namespace: 'x', created: '2026-01-02T00:00:00Z' }),
      listenerSet('c', { name: 'gw' }, [], { namespace: 'a', created: '2026-01-03T00:00:00Z' }),
    ];
    assert.deepEqual(
      [...sets].sort(compareListenerSets).map((s) => `${s.metadata.namespace}/${s.metadata.name}`),
      ['y/a', 'x/a', 'x/b', 'a/c'],
    );
  });
  test('timestamps compare as times, not strings', () => {
    const a = listenerSet('a', { name: 'gw' }, [], { namespace: 'x', created: '2026-01-01T00:00:01.5Z' });
    const b = listenerSet('b', { name: 'gw' }, [], { namespace: 'x', created: '2026-01-01T00:00:01Z' });
    assert.ok(compareListenerSets(b, a) < 0);
  });
});

describe('listenerSetAllowed', () => {
  const view = storeOf(namespace('labelled', { allowed: 'ns' }), namespace('plain'));
  const cases: { name: string; spec: Record<string, unknown>; ns: string; want: boolean }[] = [
    { name: 'absent allowedListeners = None', spec: {}, ns: 'infra', want: false },
    { name: 'None', spec: allow('None'), ns: 'infra', want: false },
    { name: 'Same, same namespace', spec: allow('Same'), ns: 'infra', want: true },
    { name: 'Same, other namespace', spec: allow('Same'), ns: 'plain', want: false },
    { name: 'All', spec: allow('All'), ns: 'plain', want: true },
    {
      name: 'Selector hit',
      spec: allow('Selector', { selector: { matchLabels: { allowed: 'ns' } } }),
      ns: 'labelled',
      want: true,
    },
    {
      name: 'Selector miss',
      spec: allow('Selector', { selector: { matchLabels: { allowed: 'ns' } } }),
      ns: 'plain',
      want: false,
    },
    {
      name: 'Selector on the namespace name label',
      spec: allow('Selector', { selector: { matchLabels: { 'kubernetes.io/metadata.name': 'plain' } } }),
      ns: 'plain',
      want: true,
    },
    {
      name: 'Selector without selector admits nothing',
      spec: allow('Selector'),
      ns: 'labelled',
      want: false,
    },
  ];
  for (const c of cases) {
    test(c.name, () =>
      assert.equal(
        listenerSetAllowed(view, gateway('gw', [httpListener('h')], { namespace: 'infra', ...c.spec }), c.ns),
        c.want,
      ),
    );
  }
});

describe('ListenerSet conformance scenarios', () => {
  test('DefaultNotAllowed / AllowedNamespaceNone', () => {
    for (const spec of [{}, allow('None')]) {
      const o = run(
        gateway('gw', [httpListener('gw-listener')], { namespace: 'infra', ...spec }),
        ls('set', 'infra', [httpListener('ls-listener', 80, 'a.example.com')]),
      );
      assert.deepEqual(condSummary(o.gw().conditions), [
        'Accepted=True/Accepted',
        'Programmed=True/Programmed',
      ]);
      assert.equal(o.gw().attachedListenerSets, 0);
      assert.deepEqual(condSummary(o.ls('infra', 'set')?.conditions), NOT_ALLOWED);
      assert.deepEqual(
        o.gw().listeners.map((l) => l.name),
        ['gw-listener'],
      );
    }
  });

  test('AllowedNamespaceSame', () => {
    const o = run(
      gateway('gw', [httpListener('gw-listener')], { namespace: 'infra', ...allow('Same') }),
      ls('same', 'infra', [httpListener('l', 80, 'a.example.com')]),
      ls('other', 'not-allowed-ns', [httpListener('l', 80, 'b.example.com')], undefined, 'infra'),
    );
    assert.equal(o.gw().attachedListenerSets, 1);
    assert.deepEqual(condSummary(o.ls('infra', 'same')?.conditions), SET_OK);
    assert.deepEqual(condSummary(o.ls('infra', 'same')?.listeners[0].conditions), OK);
    assert.deepEqual(condSummary(o.ls('not-allowed-ns', 'other')?.conditions), NOT_ALLOWED);
    const denied = o.ls('not-allowed-ns', 'other')?.listeners ?? [];
    assert.equal(denied.length, 1);
    assert.deepEqual(condSummary(denied[0].conditions), NOT_ALLOWED);
    assert.deepEqual(denied[0].supportedKinds, []);
  });

  test('AllowedNamespaceSelector', () => {
    const o = run(
      namespace('labelled', { allowed: 'ns' }),
      namespace('unlabelled'),
      gateway('gw', [httpListener('gw-listener')], {
        namespace: 'infra',
        ...allow('Selector', { selector: { matchLabels: { allowed: 'ns' } } }),
      }),
      ls('yes', 'labelled', [httpListener('l', 80, 'a.example.com')], undefined, 'infra'),
      ls('no', 'unlabelled', [httpListener('l', 80, 'b.example.com')], undefined, 'infra'),
    );
    assert.equal(o.gw().attachedListenerSets, 1);
    assert.deepEqual(condSummary(o.ls('labelled', 'yes')?.conditions), SET_OK);
    assert.deepEqual(condSummary(o.ls('unlabelled', 'no')?.conditions), NOT_ALLOWED);
  });

  test('AllowedRoutesSupportedKinds: TLS passthrough listener with kinds [HTTPRoute]', () => {
    const o = run(
      gateway('gw', [httpListener('gw-listener')], { namespace: 'infra', ...allow('Same') }),
      ls('set', 'infra', [
        {
          name: 'tls',
          port: 443,
          protocol: 'TLS',
          hostname: 't.example.com',
          tls: { mode: 'Passthrough' },
          allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }] },
        },
        {
          name: 'tls-ok',
          port: 443,
          protocol: 'TLS',
          hostname: 'u.example.com',
          tls: { mode: 'Passthrough' },
        },
      ]),
    );
    const st = o.ls('infra', 'set');
    assert.ok(st);
    assert.ok(condSummary(st.listeners[0].conditions).includes('ResolvedRefs=False/InvalidRouteKinds'));
    assert.deepEqual(st.listeners[0].supportedKinds, []);
    assert.deepEqual(st.listeners[1].supportedKinds, [{ group: G, kind: 'TLSRoute' }]);
    assert.deepEqual(condSummary(st.conditions), SET_PARTIAL);
  });

  test('HostnameConflict: Gateway wins, first ListenerSet wins, losers conflicted', () => {
    const o = run(
      gateway(
        'gw',
        [httpListener('gw-1', 80, 'gw-1.example.com'), httpListener('gw-2', 80, 'gw-2.example.com')],
        { namespace: 'infra', ...allow('Same') },
      ),
      ls(
        'set1',
        'infra',
        [
          httpListener('ok', 80, 'ls1.example.com'),
          httpListener('dup-gw', 80, 'gw-1.example.com'),
          httpListener('h', 80, 'h.example.com'),
        ],
        '2026-01-01T00:00:00Z',
      ),
      ls('set2', 'infra', [httpListener('dup-gw', 80, 'gw-2.example.com')], '2026-01-02T00:00:00Z'),
      ls(
        'set3',
        'infra',
        [httpListener('ok', 80, 'ls3.example.com'), httpListener('dup-h', 80, 'h.example.com')],
        '2026-01-03T00:00:00Z',
      ),
      ls('set4', 'infra', [httpListener('dup-h', 80, 'h.example.com')], '2026-01-04T00:00:00Z'),
    );
    const gw = o.gw();
    assert.deepEqual(condSummary(gw.conditions), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
    for (const l of gw.listeners) assert.deepEqual(condSummary(l.conditions), OK, l.name);
    assert.equal(gw.attachedListenerSets, 2);
    const s1 = o.ls('infra', 'set1');
    assert.deepEqual(condSummary(s1?.conditions), SET_PARTIAL);
    assert.deepEqual(
      s1?.listeners.map((l) => [l.name, condSummary(l.conditions)]),
      [
        ['ok', OK],
        ['dup-gw', conflicted('HostnameConflict')],
        ['h', OK],
      ],
    );
    assert.deepEqual(condSummary(o.ls('infra', 'set2')?.conditions), NOT_VALID);
    assert.deepEqual(
      condSummary(o.ls('infra', 'set2')?.listeners[0].conditions),
      conflicted('HostnameConflict'),
    );
    // Healthy listeners list at least HTTPRoute; conflicted ones support nothing.
    assert.ok(s1?.listeners[0].supportedKinds.some((k) => k.group === G && k.kind === 'HTTPRoute'));
    assert.deepEqual(s1?.listeners[1].supportedKinds, []);
    const s3 = o.ls('infra', 'set3');
    assert.deepEqual(condSummary(s3?.conditions), SET_PARTIAL);
    assert.deepEqual(condSummary(s3?.listeners[0].conditions), OK);
    assert.deepEqual(condSummary(s3?.listeners[1].conditions), conflicted('HostnameConflict'));
    assert.deepEqual(condSummary(o.ls('infra', 'set4')?.conditions), NOT_VALID);
  });

  test('ProtocolConflict: TCP on :80 loses; HTTP siblings in the same set stay accepted', () => {
    const tcp = (name: string): Listener => ({ name, port: 80, protocol: 'TCP' });
    const o = run(
      gateway('gw', [httpListener('gw-1', 80, 'gw-1.example.com')], { namespace: 'infra', ...allow('Same') }),
      ls('set1', 'infra', [httpListener('ok', 80, 'ls1.example.com'), tcp('tcp')], '2026-01-01T00:00:00Z'),
      ls('set2', 'infra', [tcp('tcp')], '2026-01-02T00:00:00Z'),
      ls('set3', 'infra', [tcp('tcp'), httpListener('ok', 80, 'ls3.example.com')], '2026-01-03T00:00:00Z'),
    );
    assert.deepEqual(condSummary(o.gw().listeners[0].conditions), OK);
    assert.equal(o.gw().attachedListenerSets, 2);
    const s1 = o.ls('infra', 'set1');
    assert.deepEqual(condSummary(s1?.listeners[0].conditions), OK);
    assert.deepEqual(condSummary(s1?.listeners[1].conditions), conflicted('ProtocolConflict'));
    assert.deepEqual(condSummary(s1?.conditions), SET_PARTIAL);
    assert.deepEqual(condSummary(o.ls('infra', 'set2')?.conditions), NOT_VALID);
    assert.deepEqual(
      condSummary(o.ls('infra', 'set2')?.listeners[0].conditions),
      conflicted('ProtocolConflict'),
    );
    const s3 = o.ls('infra', 'set3');
    assert.deepEqual(condSummary(s3?.listeners[0].conditions), conflicted('ProtocolConflict'));
    assert.deepEqual(condSummary(s3?.listeners[1].conditions), OK);
  });

  test('ReferenceGrant: a Gateway grant does not cover a ListenerSet', () => {
    const certRef = { name: 'cert', namespace: 'web-backend' };
    const httpsL = (name: string, host: string): Listener => ({
      name,
      port: 443,
      protocol: 'HTTPS',
      hostname: host,
      tls: { certificateRefs: [certRef] },
    });
    const o = run(
      tlsSecret('cert', { namespace: 'web-backend' }),
      referenceGrant(
        'for-gateway',
        {
          from: [{ group: G, kind: 'Gateway', namespace: 'infra' }],
          to: [{ group: '', kind: 'Secret' }],
        },
        { namespace: 'web-backend' },
      ),
      referenceGrant(
        'for-listenerset',
        {
          from: [{ group: G, kind: 'ListenerSet', namespace: 'infra' }],
          to: [{ group: '', kind: 'Secret', name: 'cert' }],
        },
        { namespace: 'web-backend' },
      ),
      gateway('gw', [httpsL('gw-https', 'gw.example.com')], { namespace: 'infra', ...allow('All') }),
      ls('granted', 'infra', [httpsL('https', 'a.example.com')], '2026-01-01T00:00:00Z'),
      ls('ungranted', 'other', [httpsL('https', 'b.example.com')], '2026-01-02T00:00:00Z', 'infra'),
    );
    assert.deepEqual(condSummary(o.gw().listeners[0].conditions), OK);
    assert.deepEqual(condSummary(o.ls('infra', 'granted')?.conditions), SET_OK);
    assert.deepEqual(condSummary(o.ls('infra', 'granted')?.listeners[0].conditions), OK);
    const bad = o.ls('other', 'ungranted');
    assert.deepEqual(condSummary(bad?.conditions), NOT_VALID);
    assert.ok(condSummary(bad?.listeners[0].conditions).includes('ResolvedRefs=False/RefNotPermitted'));
    assert.ok(condSummary(bad?.listeners[0].conditions).includes('Programmed=False/Invalid'));
  });
});

describe('merge and ResolvedGateway shape', () => {
  test('Gateway listeners first, then sets by precedence; names only unique per owner', () => {
    const view = storeOf(
      gatewayClass(),
      tlsSecret('cert', { namespace: 'apps' }),
      gateway('gw', [httpListener('web', 80, 'gw.example.com')], { namespace: 'infra', ...allow('All') }),
      ls('late', 'apps', [httpListener('web', 80, 'late.example.com')], '2026-01-05T00:00:00Z', 'infra'),
      ls(
        'early',
        'apps',
        [httpsListener('web', 443, 'early.example.com', 'cert')],
        '2026-01-01T00:00:00Z',
        'infra',
      ),
      listenerSet('elsewhere', { name: 'other-gw', namespace: 'infra' }, [httpListener('web')], {
        namespace: 'apps',
      }),
    );
    const [g] = resolveGateways(view, OPTS);
    assert.deepEqual(
      g.listeners.map((l) => l.qualifiedName),
      ['Gateway/infra/gw/web', 'ListenerSet/apps/early/web', 'ListenerSet/apps/late/web'],
    );
    assert.deepEqual(
      g.listenerSets.map((s) => s.object.metadata.name),
      ['early', 'late'],
    );
    assert.ok(g.listenerSets.every((s) => s.accepted));
    const early = g.listenerSets[0].listeners[0];
    assert.deepEqual(early.owner, { kind: 'ListenerSet', namespace: 'apps', name: 'early' });
    assert.deepEqual(
      early.certificates.map((c) => c.name),
      ['apps/cert'],
    );
    // "Same" on a ListenerSet listener means the set's namespace: resolved as Same, owner carries it.
    assert.deepEqual(early.allowedNamespaces, { from: 'Same' });
  });

  test('not-allowed sets are reported but contribute no listeners to the merged list', () => {
    const view = storeOf(
      gatewayClass(),
      gateway('gw', [httpListener('web', 80, 'gw.example.com')], { namespace: 'infra', ...allow('Same') }),
      ls('outsider', 'apps', [httpListener('web', 80, 'gw.example.com')], undefined, 'infra'),
    );
    const [g] = resolveGateways(view, OPTS);
    assert.deepEqual(
      g.listeners.map((l) => l.qualifiedName),
      ['Gateway/infra/gw/web'],
    );
    assert.equal(g.listenerSets.length, 1);
    assert.equal(g.listenerSets[0].accepted, false);
    assert.equal(g.listenerSets[0].listeners.length, 1);
    assert.equal(g.listenerSets[0].listeners[0].ready, false);
    assert.deepEqual(g.listenerSets[0].listeners[0].certificates, []);
  });

  test('resolution records what status reports: the Gateway problem and each set admission', () => {
    const view = storeOf(
      gatewayClass(),
      gateway('gw', [httpListener('web', 80, 'gw.example.com')], {
        namespace: 'infra',
        ...allow('Same'),
        spec: { infrastructure: { parametersRef: { group: 'example.io', kind: 'Params', name: 'p' } } },
      }),
      ls('outsider', 'apps', [httpListener('x', 80, 'x.example.com')], '2026-01-01T00:00:00Z', 'infra'),
      ls('insider', 'infra', [httpListener('y', 80, 'y.example.com')], '2026-01-02T00:00:00Z'),
    );
    const [g] = resolveGateways(view, OPTS);
    assert.equal(g.problem?.reason, 'InvalidParameters');
    assert.deepEqual(
      g.listenerSets.map((s) => [s.object.metadata.name, s.allowed]),
      [
        ['outsider', false],
        ['insider', true],
      ],
    );
    // Status follows the record, not the store: an admitted set recorded as not admitted is
    // reported NotAllowed, and a Gateway without a recorded problem is judged by its listeners.
    const edited = {
      ...g,
      problem: undefined,
      accepted: true,
      listenerSets: [{ ...g.listenerSets[1], allowed: false }],
    };
    const statuses = gatewayAndListenerSetStatuses([edited], OPTS);
    const set = statuses.find((s) => s.kind === 'ListenerSet')?.status as unknown as ListenerSetStatus;
    assert.deepEqual(condSummary(set.conditions), NOT_ALLOWED);
    const gw = statuses.find((s) => s.kind === 'Gateway')?.status as unknown as GatewayStatus;
    assert.deepEqual(condSummary(gw.conditions).slice(0, 1), ['Accepted=True/ListenersNotValid']);
  });

  test('a not-allowed set does not make a later allowed set conflict', () => {
    const o = run(
      gateway('gw', [httpListener('web', 80, 'gw.example.com')], { namespace: 'infra', ...allow('Same') }),
      ls('outsider', 'apps', [httpListener('x', 80, 'x.example.com')], '2026-01-01T00:00:00Z', 'infra'),
      ls('insider', 'infra', [httpListener('x', 80, 'x.example.com')], '2026-01-02T00:00:00Z'),
    );
    assert.deepEqual(condSummary(o.ls('infra', 'insider')?.listeners[0].conditions), OK);
    assert.equal(o.gw().attachedListenerSets, 1);
  });

  test('parent Gateway not accepted → ParentNotAccepted, set listeners not ready', () => {
    const view = storeOf(
      gatewayClass(),
      gateway('gw', [{ name: 'bad', port: 80, protocol: 'INVALID' }], {
        namespace: 'infra',
        ...allow('Same'),
      }),
      ls('set', 'infra', [httpListener('web', 8080, 'a.example.com')]),
    );
    const gws = resolveGateways(view, OPTS);
    assert.equal(gws[0].accepted, false);
    assert.ok(gws[0].listeners.every((l) => !l.ready));
    const statuses = gatewayAndListenerSetStatuses(gws, OPTS);
    const st = statuses.find((s) => s.kind === 'ListenerSet')?.status as unknown as ListenerSetStatus;
    assert.deepEqual(condSummary(st.conditions), [
      'Accepted=False/ParentNotAccepted',
      'Programmed=False/ParentNotProgrammed',
    ]);
    assert.ok(condSummary(st.listeners[0].conditions).includes('Programmed=False/Invalid'));
    const gw = statuses.find((s) => s.kind === 'Gateway')?.status as unknown as GatewayStatus;
    assert.equal(gw.attachedListenerSets, 0);
  });

  test('sets of foreign or missing Gateways get no status', () => {
    const o = run(
      gatewayClass('theirs', 'other.io/c'),
      gateway('gw', [httpListener('web')], { namespace: 'infra', ...allow('All'), className: 'theirs' }),
      ls('set', 'infra', [httpListener('web', 80, 'a.example.com')]),
      listenerSet('lost', { name: 'nope' }, [httpListener('web')], { namespace: 'infra' }),
    );
    assert.deepEqual(o.statuses, []);
  });

  test('ListenerSet listeners never appear in Gateway status, nor the reverse', () => {
    const o = run(
      gateway('gw', [httpListener('gw-only', 80, 'gw.example.com')], {
        namespace: 'infra',
        ...allow('Same'),
      }),
      ls('set', 'infra', [httpListener('ls-only', 80, 'ls.example.com')]),
    );
    assert.deepEqual(
      o.gw().listeners.map((l) => l.name),
      ['gw-only'],
    );
    assert.deepEqual(
      o.ls('infra', 'set')?.listeners.map((l) => l.name),
      ['ls-only'],
    );
    assert.equal(o.gw().attachedListenerSets, 1);
  });

  test('ListenerSet conditions carry the set generation', () => {
    const set = listenerSet('set', { name: 'gw' }, [httpListener('l', 80, 'a.example.com')], {
      namespace: 'infra',
      generation: 4,
    });
    const o = run(
      gateway('gw', [httpListener('web')], { namespace: 'infra', ...allow('Same'), generation: 9 }),
      set,
    );
    const st = o.statuses.find((s) => s.kind === 'ListenerSet');
    assert.equal(st?.metadata.generation, 4);
    const status = st?.status as unknown as ListenerSetStatus;
    for (const c of [...status.conditions, ...status.listeners[0].conditions])
      assert.equal(c.observedGeneration, 4);
    for (const c of o.gw().conditions) assert.equal(c.observedGeneration, 9);
  });

  test('deleting a higher-precedence set lets the lower one take over', () => {
    const gw = gateway('gw', [httpListener('web', 80, 'gw.example.com')], {
      namespace: 'infra',
      ...allow('Same'),
    });
    const first = ls('first', 'infra', [httpListener('x', 80, 'x.example.com')], '2026-01-01T00:00:00Z');
    const second = ls('second', 'infra', [httpListener('x', 80, 'x.example.com')], '2026-01-02T00:00:00Z');
    assert.deepEqual(condSummary(run(gw, first, second).ls('infra', 'second')?.conditions), NOT_VALID);
    assert.deepEqual(condSummary(run(gw, second).ls('infra', 'second')?.conditions), SET_OK);
  });
});
