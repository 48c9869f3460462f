import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileHTTPRoute } from '../../../src/gateway/routes/compile';
import type { HTTPRouteFilter } from '../../../src/gateway/api';
import { backendRef, httpRoute, service, storeOf } from '../../support/objects';

const view = storeOf(
  service('v1', [{ name: 'http', port: 80 }]),
  service('v2', [{ name: 'http', port: 80 }]),
);
const setBackend = (value: string): HTTPRouteFilter => ({
  type: 'RequestHeaderModifier',
  requestHeaderModifier: { set: [{ name: 'Backend', value }] },
});

describe('backendRef filters (HTTPRouteBackendRequestHeaderModification)', () => {
  test('each backend carries its own header modifiers', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('r', [
        {
          backendRefs: [
            { ...backendRef('v2', 80), weight: 10, filters: [setBackend('v2')] },
            {
              ...backendRef('v1', 80),
              weight: 10,
              filters: [
                setBackend('v1'),
                { type: 'ResponseHeaderModifier', responseHeaderModifier: { remove: ['server'] } },
              ],
            },
          ],
        },
      ]),
    );
    assert.deepEqual(c.ruleProblems, []);
    const action = c.entries[0]!.model.action;
    assert.equal(action.kind, 'forward');
    assert.deepEqual(action.kind === 'forward' && action.backends, [
      {
        cluster: 'default/v1/80',
        weight: 10,
        requestHeaders: { set: [{ name: 'Backend', value: 'v1' }] },
        responseHeaders: { remove: ['server'] },
      },
      { cluster: 'default/v2/80', weight: 10, requestHeaders: { set: [{ name: 'Backend', value: 'v2' }] } },
    ]);
  });

  test('refs to one cluster merge only when their filters are the same', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('r', [
        {
          backendRefs: [
            { ...backendRef('v1', 80), weight: 1, filters: [setBackend('a')] },
            { ...backendRef('v1', 80), weight: 2, filters: [setBackend('b')] },
            { ...backendRef('v1', 80), weight: 3, filters: [setBackend('a')] },
          ],
        },
      ]),
    );
    const action = c.entries[0]!.model.action;
    assert.deepEqual(
      action.kind === 'forward' && action.backends.map((b) => [b.weight, b.requestHeaders?.set?.[0]?.value]),
      [
        [4, 'a'],
        [2, 'b'],
      ],
    );
  });

  const dropped: [string, HTTPRouteFilter[], string][] = [
    [
      'a filter type other than the header modifiers',
      [{ type: 'URLRewrite', urlRewrite: {} }],
      'UnsupportedValue',
    ],
    ['the same filter twice', [setBackend('a'), setBackend('b')], 'IncompatibleFilters'],
    [
      'a header Envoy will not modify',
      [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'Host', value: 'x' }] } }],
      'UnsupportedValue',
    ],
  ];
  for (const [name, filters, reason] of dropped) {
    test(`drops the rule: ${name}`, () => {
      const c = compileHTTPRoute(
        view,
        httpRoute('r', [{ backendRefs: [{ ...backendRef('v1', 80), filters }] }]),
      );
      assert.equal(c.ruleProblems[0]?.reason, reason);
      assert.equal(c.entries.length, 0);
    });
  }
});
