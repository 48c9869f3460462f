import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { compileHTTPRoute } from '../../../src/gateway/routes/compile';
import { CompiledRouteMemo } from '../../../src/gateway/routes/memo';
import {
  backendRef,
  backendService,
  httpRoute,
  referenceGrant,
  service,
  storeOf,
} from '../../support/objects';

const route = () =>
  httpRoute('r', [
    { backendRefs: [backendRef('web', 80)] },
    { backendRefs: [backendRef('api', 80, { namespace: 'other' })] },
  ]);

describe('CompiledRouteMemo', () => {
  test('same route and dependencies: the previous CompiledRoute itself', () => {
    const memo = new CompiledRouteMemo();
    const r = route();
    const store = storeOf(r, ...backendService('web', 80, ['10.0.0.1']));
    const a = memo.compile(compileHTTPRoute, store, r, {});
    const b = memo.compile(compileHTTPRoute, store, r, {});
    assert.equal(a, b);
    assert.deepEqual(a, compileHTTPRoute(store, r, {}));
  });

  test('an edited route object is compiled again', () => {
    const memo = new CompiledRouteMemo();
    const r = route();
    const store = storeOf(r, ...backendService('web', 80, ['10.0.0.1']));
    const a = memo.compile(compileHTTPRoute, store, r, {});
    const edited = route();
    store.put(edited);
    const b = memo.compile(compileHTTPRoute, store, edited, {});
    assert.notEqual(a, b);
    assert.deepEqual(b, compileHTTPRoute(store, edited, {}));
  });

  test('a Service it names appearing, changing or going away recompiles it', () => {
    const memo = new CompiledRouteMemo();
    const r = route();
    const store = storeOf(r);
    const missing = memo.compile(compileHTTPRoute, store, r, {});
    assert.ok(missing.refProblem, 'web does not exist yet');
    for (const o of backendService('web', 80, ['10.0.0.1'])) store.put(o);
    const found = memo.compile(compileHTTPRoute, store, r, {});
    assert.notEqual(found, missing);
    assert.deepEqual(found, compileHTTPRoute(store, r, {}));
    store.put(service('web', [{ name: 'http', port: 8080 }]));
    const moved = memo.compile(compileHTTPRoute, store, r, {});
    assert.notEqual(moved, found);
    assert.deepEqual(moved, compileHTTPRoute(store, r, {}));
    store.delete('Service', 'default', 'web');
    assert.deepEqual(memo.compile(compileHTTPRoute, store, r, {}), compileHTTPRoute(store, r, {}));
  });

  test('a ReferenceGrant added for a cross-namespace backend recompiles it', () => {
    const memo = new CompiledRouteMemo();
    const r = route();
    const store = storeOf(
      r,
      ...backendService('web', 80, ['10.0.0.1']),
      service('api', [{ port: 80 }], { namespace: 'other' }),
    );
    const denied = memo.compile(compileHTTPRoute, store, r, {});
    store.put(
      referenceGrant(
        'allow',
        {
          from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default' }],
          to: [{ group: '', kind: 'Service' }],
        },
        { namespace: 'other' },
      ),
    );
    const allowed = memo.compile(compileHTTPRoute, store, r, {});
    assert.notEqual(allowed, denied);
    assert.deepEqual(allowed, compileHTTPRoute(store, r, {}));
  });

  test('another store or another policy is never served from the memo', () => {
    const memo = new CompiledRouteMemo();
    const r = route();
    const s1 = storeOf(r, ...backendService('web', 80, ['10.0.0.1']));
    const s2 = storeOf(r);
    const a = memo.compile(compileHTTPRoute, s1, r, {});
    const b = memo.compile(compileHTTPRoute, s2, r, {});
    assert.notEqual(a, b);
    assert.deepEqual(b, compileHTTPRoute(s2, r, {}));
    const c = memo.compile(compileHTTPRoute, s2, r, { externalNameServices: true });
    assert.notEqual(c, b);
  });
});
