import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { labelsMatch, namespaceLabels } from '../../src/gateway/selectors';
import type { LabelSelector } from '../../src/gateway/resolved';
import { namespace, storeOf } from '../support/objects';

describe('labelsMatch', () => {
  const labels = { env: 'prod', team: 'web', tier: 'front' };
  const cases: { name: string; selector: LabelSelector; labels?: Record<string, string>; want: boolean }[] = [
    { name: 'empty selector matches everything', selector: {}, want: true },
    { name: 'empty selector matches no labels', selector: {}, labels: undefined, want: true },
    { name: 'matchLabels hit', selector: { matchLabels: { env: 'prod' } }, want: true },
    { name: 'matchLabels all must hit', selector: { matchLabels: { env: 'prod', team: 'db' } }, want: false },
    { name: 'matchLabels missing key', selector: { matchLabels: { zone: 'a' } }, want: false },
    {
      name: 'matchLabels on undefined labels',
      selector: { matchLabels: { env: 'prod' } },
      labels: undefined,
      want: false,
    },
    {
      name: 'In hit',
      selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['dev', 'prod'] }] },
      want: true,
    },
    {
      name: 'In miss',
      selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['dev'] }] },
      want: false,
    },
    {
      name: 'In on absent key',
      selector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
      want: false,
    },
    {
      name: 'NotIn hit',
      selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev'] }] },
      want: true,
    },
    {
      name: 'NotIn miss',
      selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] },
      want: false,
    },
    {
      name: 'NotIn on absent key matches',
      selector: { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] },
      want: true,
    },
    { name: 'Exists', selector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] }, want: true },
    {
      name: 'Exists miss',
      selector: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] },
      want: false,
    },
    {
      name: 'DoesNotExist',
      selector: { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] },
      want: true,
    },
    {
      name: 'DoesNotExist miss',
      selector: { matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] },
      want: false,
    },
    {
      name: 'labels and expressions are ANDed',
      selector: {
        matchLabels: { env: 'prod' },
        matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }],
      },
      want: false,
    },
    {
      name: 'unknown operator matches nothing',
      selector: { matchExpressions: [{ key: 'env', operator: 'Bogus' as 'In', values: ['prod'] }] },
      want: false,
    },
    {
      name: 'inherited property names are not labels',
      selector: { matchExpressions: [{ key: 'toString', operator: 'Exists' }] },
      want: false,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(labelsMatch(c.selector, 'labels' in c ? c.labels : labels), c.want);
    });
  }
});

describe('namespaceLabels', () => {
  test('labels of the Namespace object plus kubernetes.io/metadata.name', () => {
    // Without the name label the API server adds: namespaceLabels adds it itself.
    const view = storeOf({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a', labels: { allowed: 'ns' } },
    });
    assert.deepEqual(namespaceLabels(view, 'team-a'), {
      allowed: 'ns',
      'kubernetes.io/metadata.name': 'team-a',
    });
  });
  test('a namespace without an object still has its name label', () => {
    assert.deepEqual(namespaceLabels(storeOf(), 'ghost'), { 'kubernetes.io/metadata.name': 'ghost' });
  });
  test('the name label cannot be spoofed by a user label', () => {
    const view = storeOf(namespace('team-a', { 'kubernetes.io/metadata.name': 'other' }));
    assert.equal(namespaceLabels(view, 'team-a')['kubernetes.io/metadata.name'], 'team-a');
  });
});
