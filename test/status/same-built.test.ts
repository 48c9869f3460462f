import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeStatus, sameBuiltStatus } from '../../src/status/merge';
import type { ObjectStatus } from '../../src/status/types';

function built(now: string, accepted: 'True' | 'False' = 'True', attached = 1): ObjectStatus {
  const cond = (type: string, status: 'True' | 'False') => ({
    type,
    status,
    reason: status === 'True' ? type : 'Invalid',
    message: '',
    observedGeneration: 1,
    lastTransitionTime: now,
  });
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'ListenerSet',
    metadata: { namespace: 'ns', name: 'ls' },
    status: {
      conditions: [cond('Accepted', accepted), cond('Programmed', 'True')],
      listeners: [{ name: 'https', attachedRoutes: attached, conditions: [cond('Accepted', accepted)] }],
    },
  };
}

describe('sameBuiltStatus', () => {
  test('ignores only lastTransitionTime', () => {
    assert.ok(sameBuiltStatus(built('2026-01-01T00:00:00Z'), built('2026-01-02T00:00:00Z')));
    assert.ok(!sameBuiltStatus(built('t'), built('t', 'False')));
    assert.ok(!sameBuiltStatus(built('t'), built('t', 'True', 2)));
  });

  test('when it holds, merging again gives the previous merged status', () => {
    const first = mergeStatus(undefined, built('2026-01-01T00:00:00Z'));
    const flipped = built('2026-01-02T00:00:00Z', 'False');
    const second = mergeStatus(first, flipped);
    const again = built('2026-01-03T00:00:00Z', 'False');
    assert.ok(sameBuiltStatus(flipped, again));
    assert.deepEqual(mergeStatus(second, again), second);
  });
});
