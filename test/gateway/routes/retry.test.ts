import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileHTTPRoute } from '../../../src/gateway/routes/compile';
import { MAX_RETRY_ATTEMPTS, retryOf } from '../../../src/gateway/routes/retry';
import { timeoutAndRetry, retryBudgetMs, MAX_PROTO_DURATION_MS } from '../../../src/envoy/translate/retry';
import type { HTTPRouteRetry, HTTPRouteRule } from '../../../src/gateway/api';
import type { RouteModel } from '../../../src/model/fleet';
import { backendRef, httpRoute, service, storeOf } from '../../support/objects';

const view = storeOf(service('web', [{ name: 'http', port: 80 }]));
const rule = (extra: Partial<HTTPRouteRule>): HTTPRouteRule => ({
  backendRefs: [backendRef('web', 80)],
  ...extra,
});

describe('retryOf: compiling HTTPRoute rules[].retry', () => {
  test('codes are sorted and de-duplicated; attempts and backoff carried', () => {
    assert.deepEqual(retryOf({ codes: [503, 500, 503], attempts: 3, backoff: '1s100ms' }), {
      codes: [500, 503],
      attempts: 3,
      backoffMs: 1100,
    });
  });
  test('an empty retry retries connection errors only; a zero backoff leaves Envoy its default', () => {
    assert.deepEqual(retryOf({}), { codes: [] });
    assert.deepEqual(retryOf({ backoff: '0s' }), { codes: [] });
    assert.equal(retryOf(undefined), undefined);
  });
  const bad: [string, HTTPRouteRetry][] = [
    ['attempts 0', { attempts: 0 }],
    ['attempts not an integer', { attempts: 1.5 }],
    ['attempts beyond Envoy num_retries (uint32)', { attempts: MAX_RETRY_ATTEMPTS + 1 }],
    ['code below 400', { codes: [399] }],
    ['code above 599', { codes: [600] }],
    ['backoff not a Gateway API duration', { backoff: '1.5s' }],
  ];
  for (const [name, retry] of bad) {
    test(`drops the rule: ${name}`, () => {
      const c = compileHTTPRoute(view, httpRoute('r', [rule({ retry }), rule({})]));
      assert.equal(c.ruleProblems.length, 1);
      assert.equal(c.ruleProblems[0].rule, 0);
      assert.equal(c.ruleProblems[0].reason, 'UnsupportedValue');
      assert.equal(c.entries.length, 1, 'the other rule is kept');
    });
  }
  test('the model of every match of the rule carries the retry', () => {
    const c = compileHTTPRoute(
      view,
      httpRoute('r', [
        rule({
          matches: [
            { path: { type: 'PathPrefix', value: '/a' } },
            { path: { type: 'PathPrefix', value: '/b' } },
          ],
          retry: { codes: [500], attempts: 2 },
        }),
      ]),
    );
    assert.deepEqual(
      c.entries.map((e) => e.model.retry),
      [
        { codes: [500], attempts: 2 },
        { codes: [500], attempts: 2 },
      ],
    );
  });
});

describe('timeoutAndRetry: the timeout budget', () => {
  const route = (extra: Partial<RouteModel>): RouteModel => ({
    name: 'HTTPRoute/default/r/rule/0/match/0',
    match: {},
    action: { kind: 'forward', backends: [{ cluster: 'default/web/80', weight: 1 }] },
    ...extra,
  });
  test('no retry: a backend timeout alone is also the route timeout, and never retried', () => {
    assert.deepEqual(timeoutAndRetry(route({ perTryTimeoutMs: 2000 })), {
      timeout: { seconds: 2 },
      retry_policy: { per_try_timeout: { seconds: 2 } },
    });
  });
  test('a request timeout bounds every attempt and wait', () => {
    const out = timeoutAndRetry(
      route({ timeoutMs: 3000, perTryTimeoutMs: 1000, retry: { codes: [500], attempts: 5 } }),
    );
    assert.deepEqual(out.timeout, { seconds: 3 });
    assert.equal(out.retry_policy?.num_retries?.value, 5);
  });
  test('a backend timeout with retries: every attempt plus the longest waits', () => {
    // 3 attempts of 1 s, 2 waits of at most 10 x 100 ms.
    assert.equal(retryBudgetMs(1000, { codes: [], attempts: 2, backoffMs: 100 }), 5000);
    const out = timeoutAndRetry(
      route({ perTryTimeoutMs: 1000, retry: { codes: [], attempts: 2, backoffMs: 100 } }),
    );
    assert.deepEqual(out.timeout, { seconds: 5 });
    assert.equal(out.retry_policy?.retry_on, 'connect-failure,refused-stream,reset');
  });
  test('a budget beyond a protobuf Duration disables the route timeout instead', () => {
    const retry = { codes: [500], attempts: MAX_RETRY_ATTEMPTS, backoffMs: 3_600_000 };
    assert.equal(retryBudgetMs(1000, retry), undefined);
    assert.ok(retryBudgetMs(1, { codes: [] })! <= MAX_PROTO_DURATION_MS);
    assert.deepEqual(timeoutAndRetry(route({ perTryTimeoutMs: 1000, retry })).timeout, {});
  });
  test('codes become retriable-status-codes', () => {
    const out = timeoutAndRetry(route({ retry: { codes: [500, 502] } }));
    assert.deepEqual(out.retry_policy, {
      retry_on: 'connect-failure,refused-stream,reset,retriable-status-codes',
      retriable_status_codes: [500, 502],
    });
    assert.equal(out.timeout, undefined, "Envoy's default route timeout applies");
  });
});
