/**
 * Compiles an HTTPRoute rule's `retry` (GEP-1731) into a RetryModel, refusing what Envoy could not
 * take (docs/gateway-api.md §19).
 */
import type { RetryModel } from '../../model/fleet';
import type { HTTPRouteRetry } from '../api';
import { parseDuration } from './duration';
import { arr, fail } from './rule-checks';

/** Envoy's num_retries is a UInt32Value: a larger count would be refused with the whole configuration. */
export const MAX_RETRY_ATTEMPTS = 4_294_967_295;

/**
 * Returns the retry policy of a rule, or undefined when it has none. Drops the rule on a count
 * below 1 or above MAX_RETRY_ATTEMPTS, an invalid backoff, or a code outside 400-599: the CRD
 * refuses all but the too-large count, and none of them may reach Envoy.
 */
export function retryOf(retry: HTTPRouteRetry | undefined): RetryModel | undefined {
  if (retry === undefined || retry === null) return undefined;
  if (typeof retry !== 'object') fail('retry must be an object');
  const model: RetryModel = { codes: [] };
  if (retry.attempts !== undefined) {
    const n = retry.attempts;
    if (!Number.isSafeInteger(n) || n < 1) fail(`invalid retry.attempts ${JSON.stringify(n)}`);
    if (n > MAX_RETRY_ATTEMPTS)
      fail(`retry.attempts ${n} exceeds the supported maximum ${MAX_RETRY_ATTEMPTS}`);
    model.attempts = n;
  }
  if (retry.backoff !== undefined) {
    const ms = parseDuration(retry.backoff);
    if (ms === undefined) fail(`invalid retry.backoff ${JSON.stringify(retry.backoff)}`);
    // A zero minimum wait is met by any wait: Envoy's own default applies (its base must be > 0).
    if (ms > 0) model.backoffMs = ms;
  }
  const codes = new Set<number>();
  for (const c of arr(retry.codes)) {
    if (!Number.isInteger(c) || c < 400 || c > 599) fail(`invalid retry code ${JSON.stringify(c)}`);
    codes.add(c);
  }
  model.codes = [...codes].sort((a, b) => a - b);
  return model;
}
