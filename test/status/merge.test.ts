import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, mergeStatus, statusesEqual } from '../../src/status/merge';
import type { Condition, ObjectStatus } from '../../src/status/types';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-02-02T00:00:00Z';

function c(type: string, status: Condition['status'], time: string, reason = type, gen = 1): Condition {
  return {
    type,
    status,
    reason,
    message: `${type} message`,
    observedGeneration: gen,
    lastTransitionTime: time,
  };
}

function obj(status: Record<string, unknown>, kind = 'Gateway'): ObjectStatus {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind,
    metadata: { namespace: 'infra', name: 'gw', generation: 1 },
    status,
  };
}

const times = (conds: unknown) => (conds as Condition[]).map((x) => `${x.type}@${x.lastTransitionTime}`);

describe('mergeStatus', () => {
  test('no previous status → next unchanged', () => {
    const next = obj({ conditions: [c('Accepted', 'True', T1)] });
    assert.deepEqual(mergeStatus(undefined, next), next);
  });

  const topCases: { name: string; prev: Condition[]; next: Condition[]; want: string[] }[] = [
    {
      name: 'unchanged status keeps the old time',
      prev: [c('Accepted', 'True', T0)],
      next: [c('Accepted', 'True', T1)],
      want: [`Accepted@${T0}`],
    },
    {
      name: 'changed status takes the new time',
      prev: [c('Accepted', 'True', T0)],
      next: [c('Accepted', 'False', T1)],
      want: [`Accepted@${T1}`],
    },
    {
      name: 'same status with a new reason still keeps the old time',
      prev: [c('Accepted', 'True', T0, 'Accepted')],
      next: [c('Accepted', 'True', T1, 'ListenersNotValid')],
      want: [`Accepted@${T0}`],
    },
    {
      name: 'new condition type takes the new time',
      prev: [c('Accepted', 'True', T0)],
      next: [c('Accepted', 'True', T1), c('Programmed', 'True', T1)],
      want: [`Accepted@${T0}`, `Programmed@${T1}`],
    },
    {
      name: 'conditions dropped from next stay dropped',
      prev: [c('Accepted', 'True', T0), c('Conflicted', 'True', T0)],
      next: [c('Accepted', 'True', T1)],
      want: [`Accepted@${T0}`],
    },
  ];
  for (const tc of topCases) {
    test(`top-level: ${tc.name}`, () => {
      const merged = mergeStatus(obj({ conditions: tc.prev }), obj({ conditions: tc.next }));
      assert.deepEqual(times(merged.status.conditions), tc.want);
    });
  }

  test('foreign condition types are preserved untouched, after ours', () => {
    const foreign = { ...c('example.io/Stale', 'True', T0, 'Seeded', 1) };
    const merged = mergeStatus(
      obj({
        conditions: [foreign, c('Accepted', 'True', T0)],
        listeners: [
          {
            name: 'a',
            attachedRoutes: 0,
            supportedKinds: [],
            conditions: [foreign, c('Conflicted', 'True', T0)],
          },
        ],
      }),
      obj({
        conditions: [c('Accepted', 'True', T1, 'Accepted', 2)],
        listeners: [
          {
            name: 'a',
            attachedRoutes: 0,
            supportedKinds: [],
            conditions: [c('Programmed', 'True', T1, 'Programmed', 2)],
          },
        ],
      }),
    );
    assert.deepEqual(merged.status.conditions, [c('Accepted', 'True', T0, 'Accepted', 2), foreign]);
    const [l] = merged.status.listeners as { conditions: Condition[] }[];
    // Our Conflicted condition is gone (we stopped writing it); the foreign one stays as it was.
    assert.deepEqual(l.conditions, [c('Programmed', 'True', T1, 'Programmed', 2), foreign]);
  });

  test('merged condition keeps the new reason, message and observedGeneration', () => {
    const merged = mergeStatus(
      obj({ conditions: [c('Accepted', 'True', T0, 'Accepted', 1)] }),
      obj({ conditions: [c('Accepted', 'True', T1, 'ListenersNotValid', 2)] }),
    );
    assert.deepEqual((merged.status.conditions as Condition[])[0], {
      ...c('Accepted', 'True', T0, 'ListenersNotValid', 2),
    });
  });

  test('listeners are matched by name, not position', () => {
    const prev = obj({
      conditions: [],
      listeners: [
        { name: 'a', attachedRoutes: 0, supportedKinds: [], conditions: [c('Programmed', 'True', T0)] },
        { name: 'b', attachedRoutes: 0, supportedKinds: [], conditions: [c('Programmed', 'False', T0)] },
      ],
    });
    const next = obj({
      conditions: [],
      listeners: [
        { name: 'b', attachedRoutes: 1, supportedKinds: [], conditions: [c('Programmed', 'False', T1)] },
        { name: 'c', attachedRoutes: 0, supportedKinds: [], conditions: [c('Programmed', 'True', T1)] },
        { name: 'a', attachedRoutes: 0, supportedKinds: [], conditions: [c('Programmed', 'False', T1)] },
      ],
    });
    const merged = mergeStatus(prev, next).status.listeners as {
      name: string;
      attachedRoutes: number;
      conditions: Condition[];
    }[];
    assert.deepEqual(
      merged.map((l) => `${l.name}:${times(l.conditions).join()}`),
      [`b:Programmed@${T0}`, `c:Programmed@${T1}`, `a:Programmed@${T1}`],
    );
    assert.equal(merged[0].attachedRoutes, 1);
  });

  test('route parents are matched by parentRef and controllerName', () => {
    const ref1 = { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', namespace: 'infra' };
    const ref2 = { ...ref1, sectionName: 'web' };
    const refReordered = {
      namespace: 'infra',
      name: 'gw',
      kind: 'Gateway',
      group: 'gateway.networking.k8s.io',
    };
    const prev = obj(
      {
        parents: [
          { parentRef: ref1, controllerName: 'convoy', conditions: [c('Accepted', 'True', T0)] },
          { parentRef: ref2, controllerName: 'convoy', conditions: [c('Accepted', 'True', T0)] },
          { parentRef: ref1, controllerName: 'other', conditions: [c('Accepted', 'False', T0)] },
        ],
      },
      'HTTPRoute',
    );
    const next = obj(
      {
        parents: [
          { parentRef: refReordered, controllerName: 'convoy', conditions: [c('Accepted', 'True', T1)] },
          { parentRef: ref2, controllerName: 'convoy', conditions: [c('Accepted', 'False', T1)] },
        ],
      },
      'HTTPRoute',
    );
    const merged = mergeStatus(prev, next).status.parents as { conditions: Condition[] }[];
    assert.deepEqual(
      merged.map((p) => times(p.conditions).join()),
      [`Accepted@${T0}`, `Accepted@${T1}`],
    );
  });

  test('does not mutate its inputs', () => {
    const prev = obj({ conditions: [c('Accepted', 'True', T0)] });
    const next = obj({ conditions: [c('Accepted', 'True', T1)] });
    const snapshot = JSON.stringify([prev, next]);
    mergeStatus(prev, next);
    assert.equal(JSON.stringify([prev, next]), snapshot);
  });

  test('other status fields come from next', () => {
    const merged = mergeStatus(
      obj({ conditions: [], attachedListenerSets: 1, addresses: [{ type: 'IPAddress', value: '1.1.1.1' }] }),
      obj({ conditions: [], attachedListenerSets: 2 }),
    );
    assert.deepEqual(merged.status, { conditions: [], attachedListenerSets: 2 });
  });
});

describe('statusesEqual', () => {
  const base = () =>
    obj({
      conditions: [c('Accepted', 'True', T0)],
      listeners: [
        { name: 'a', attachedRoutes: 0, supportedKinds: [], conditions: [c('Programmed', 'True', T0)] },
      ],
    });
  const cases: { name: string; mutate: (s: ObjectStatus) => void; want: boolean }[] = [
    { name: 'identical', mutate: () => {}, want: true },
    {
      name: 'only lastTransitionTime differs',
      mutate: (s) => {
        (s.status.conditions as Condition[])[0].lastTransitionTime = T1;
        (s.status.listeners as { conditions: Condition[] }[])[0].conditions[0].lastTransitionTime = T1;
      },
      want: true,
    },
    {
      name: 'key order differs',
      mutate: (s) => {
        s.status = { listeners: s.status.listeners, conditions: s.status.conditions };
      },
      want: true,
    },
    {
      name: 'status differs',
      mutate: (s) => ((s.status.conditions as Condition[])[0].status = 'False'),
      want: false,
    },
    {
      name: 'reason differs',
      mutate: (s) => ((s.status.conditions as Condition[])[0].reason = 'Other'),
      want: false,
    },
    {
      name: 'observedGeneration differs',
      mutate: (s) => ((s.status.conditions as Condition[])[0].observedGeneration = 2),
      want: false,
    },
    {
      name: 'attachedRoutes differs',
      mutate: (s) => ((s.status.listeners as { attachedRoutes: number }[])[0].attachedRoutes = 5),
      want: false,
    },
    { name: 'generation differs', mutate: (s) => (s.metadata.generation = 2), want: false },
    { name: 'extra field', mutate: (s) => (s.status.attachedListenerSets = 0), want: false },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const b = base();
      tc.mutate(b);
      assert.equal(statusesEqual(base(), b), tc.want);
      assert.equal(statusesEqual(b, base()), tc.want);
    });
  }
  test('a non-condition field named lastTransitionTime still counts', () => {
    assert.equal(
      statusesEqual(obj({ x: { lastTransitionTime: T0 } }), obj({ x: { lastTransitionTime: T1 } })),
      false,
    );
  });
  test('canonicalJson sorts keys and drops undefined', () => {
    assert.equal(canonicalJson({ b: 1, a: [{ d: undefined, c: 'x' }] }), '{"a":[{"c":"x"}],"b":1}');
  });
});
