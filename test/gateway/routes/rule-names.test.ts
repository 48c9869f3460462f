import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileGRPCRoute, compileHTTPRoute } from '../../../src/gateway/routes/compile';
import { duplicateNames, ruleLabel, ruleNamesOf } from '../../../src/gateway/routes/rule-names';
import { backendRef, grpcRoute, httpRoute, service, storeOf } from '../../support/objects';

const view = storeOf(
  service('web', [{ name: 'http', port: 80 }]),
  service('grpc', [{ name: 'grpc', port: 9000 }]),
);
const web = [backendRef('web', 80)];

describe('named route rules (GEP-995)', () => {
  test('every match of a named rule carries the stat prefix; unnamed rules none', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('shop', [
        {
          name: 'checkout',
          matches: [
            { path: { type: 'PathPrefix', value: '/a' } },
            { path: { type: 'PathPrefix', value: '/b' } },
          ],
          backendRefs: web,
        },
        { backendRefs: web },
      ]),
    );
    assert.deepEqual(
      c.entries.map((e) => e.model.statPrefix),
      ['HTTPRoute/default/shop/checkout', 'HTTPRoute/default/shop/checkout', undefined],
    );
  });

  test('GRPCRoute named rules get the prefix too', () => {
    const c = compileGRPCRoute(
      view,
      grpcRoute('g', [{ name: 'echo', backendRefs: [backendRef('grpc', 9000)] }]),
    );
    assert.equal(c.entries[0]?.model.statPrefix, 'GRPCRoute/default/g/echo');
  });

  test('a dropped named rule is reported by index and name', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('shop', [
        { name: 'bad', filters: [{ type: 'Unknown' }], backendRefs: web },
        { backendRefs: web },
      ]),
    );
    assert.match(c.ruleProblems[0]!.message, /^rule 0 "bad": unsupported filter type Unknown/);
  });

  test('a name used twice: the later rule is dropped with UnsupportedValue naming the first', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('shop', [
        { name: 'same', matches: [{ path: { type: 'PathPrefix', value: '/a' } }], backendRefs: web },
        { name: 'same', matches: [{ path: { type: 'PathPrefix', value: '/b' } }], backendRefs: web },
        { name: 'other', backendRefs: web },
      ]),
    );
    assert.equal(c.ruleProblems.length, 1);
    assert.equal(c.ruleProblems[0]!.rule, 1);
    assert.equal(c.ruleProblems[0]!.reason, 'UnsupportedValue');
    assert.match(c.ruleProblems[0]!.message, /rule 1 "same": the name is already used by rule 0/);
    assert.equal(c.entries.length, 2);
  });

  test('helpers: invalid names are ignored; labels; duplicates point at the first use', () => {
    assert.deepEqual(ruleNamesOf([{ name: 'a' }, {}, { name: 'Bad_Name' }, { name: 7 }, null]), [
      'a',
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    assert.equal(ruleLabel(3, undefined), 'rule 3');
    assert.equal(ruleLabel(3, 'x'), 'rule 3 "x"');
    assert.deepEqual(duplicateNames(['a', 'b', 'a', undefined, 'a']), [
      undefined,
      undefined,
      0,
      undefined,
      0,
    ]);
  });
});
