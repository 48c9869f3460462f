import type { RouteAction } from '../../generated/envoy/config/route/v3/RouteAction';
import type { RetryPolicy } from '../../generated/envoy/config/route/v3/RetryPolicy';
import type { RetryModel, RouteModel } from '../../model/fleet';
import { durationMs } from './common';

/**
 * Translates a route's timeouts and retry policy (docs/gateway-api.md §19) to the `timeout` and
 * `retry_policy` of its RouteAction, within a budget Envoy accepts.
 */

/** The retry conditions every Gateway API retry policy gets: connection errors and per-try timeouts. */
export const CONNECTION_RETRY_ON = 'connect-failure,refused-stream,reset';
/** Envoy's default base interval between retries, in milliseconds. */
const ENVOY_DEFAULT_BACKOFF_MS = 25;
/** Envoy's default number of retries when num_retries is unset. */
const ENVOY_DEFAULT_RETRIES = 1;
/** Envoy caps the wait between retries at ten times the base interval by default. */
const ENVOY_MAX_BACKOFF_FACTOR = 10;
/** The longest google.protobuf.Duration (10,000 years), in milliseconds. */
export const MAX_PROTO_DURATION_MS = 315_576_000_000 * 1000;

/**
 * Returns the longest a request with per-try timeout `perTryMs` can take through every attempt
 * and the longest wait between them; undefined when that exceeds a protobuf Duration.
 *
 * The route timeout must not cut retries short when only a backend timeout is set: each attempt
 * is bounded by the per-try timeout, each wait by Envoy's maximum backoff, so the sum bounds the
 * whole request, and using it as the route timeout keeps the bound visible in the configuration.
 */
export function retryBudgetMs(perTryMs: number, retry: RetryModel): number | undefined {
  const retries = retry.attempts ?? ENVOY_DEFAULT_RETRIES;
  const maxWait = (retry.backoffMs ?? ENVOY_DEFAULT_BACKOFF_MS) * ENVOY_MAX_BACKOFF_FACTOR;
  const budget = perTryMs * (retries + 1) + maxWait * retries;
  return Number.isSafeInteger(budget) && budget <= MAX_PROTO_DURATION_MS ? budget : undefined;
}

/** Translates a retry policy: retried conditions, count, backoff and the per-try timeout. */
function retryPolicy(retry: RetryModel | undefined, perTryMs: number | undefined): RetryPolicy | undefined {
  if (!retry) {
    // A retry policy without retry_on never retries; it only carries the per-attempt timeout.
    return perTryMs ? { per_try_timeout: durationMs(perTryMs) } : undefined;
  }
  const out: RetryPolicy = {
    retry_on: retry.codes.length ? `${CONNECTION_RETRY_ON},retriable-status-codes` : CONNECTION_RETRY_ON,
  };
  if (retry.attempts !== undefined) out.num_retries = { value: retry.attempts };
  if (perTryMs) out.per_try_timeout = durationMs(perTryMs);
  if (retry.backoffMs !== undefined) out.retry_back_off = { base_interval: durationMs(retry.backoffMs) };
  if (retry.codes.length) out.retriable_status_codes = [...retry.codes];
  return out;
}

/**
 * Returns the `timeout` and `retry_policy` of a forwarding route.
 *
 * - timeouts.request set: it is the route timeout (0 disables it); Envoy counts every attempt and
 *   wait against it, as GEP-1731 requires.
 * - only timeouts.backendRequest: without retries it is also the route timeout (Envoy's 15 s
 *   default must not cut it short); with retries the route timeout is retryBudgetMs, or disabled
 *   when that exceeds a Duration (the per-try timeout and the count still bound the request).
 * - neither: Envoy's default route timeout (15 s).
 */
export function timeoutAndRetry(route: RouteModel): Pick<RouteAction, 'timeout' | 'retry_policy'> {
  const out: Pick<RouteAction, 'timeout' | 'retry_policy'> = {};
  const perTry = route.perTryTimeoutMs;
  if (route.timeoutMs !== undefined) out.timeout = durationMs(route.timeoutMs);
  else if (perTry) {
    out.timeout = durationMs(route.retry ? (retryBudgetMs(perTry, route.retry) ?? 0) : perTry);
  }
  const policy = retryPolicy(route.retry, perTry);
  if (policy) out.retry_policy = policy;
  return out;
}
