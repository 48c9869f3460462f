/**
 * The checks rule compilation shares (matches.ts, compile.ts): a failed check throws a RuleError,
 * which drops the rule with its reason.
 */
import { Reason } from '../../status/conditions';

/** Thrown inside rule compilation to drop the rule with a reason. */
export class RuleError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Drops the rule being compiled: throws a RuleError with `reason`. */
export function fail(message: string, reason: string = Reason.UnsupportedValue): never {
  throw new RuleError(reason, message);
}

/** HTTP header names as the Gateway API CRD accepts them (RFC 7230 token). */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;
/** Headers Envoy refuses to let routes modify (it would NACK the whole RouteConfiguration). */
export const UNMODIFIABLE_HEADERS: ReadonlySet<string> = new Set(['host']);

/** Drops the rule unless `name` is a valid HTTP header name. */
export function checkHeaderName(name: unknown, what: string): asserts name is string {
  if (typeof name !== 'string' || !HEADER_NAME.test(name))
    fail(`${what}: invalid header name ${JSON.stringify(name)}`);
}

/**
 * Drops the rule unless `value` is a string without CR, LF or NUL, which never reach Envoy: they
 * are invalid in header values, paths and hostnames.
 */
export function checkValue(value: unknown, what: string): asserts value is string {
  if (typeof value !== 'string' || /[\r\n\0]/.test(value))
    fail(`${what}: invalid value ${JSON.stringify(value)}`);
}

/** Drops the rule unless `value` is a precise DNS name (RFC 1123, no wildcard, no port), as HTTPRoute filters require. */
export function checkHostname(value: unknown, what: string): void {
  const ok =
    typeof value === 'string' &&
    value.length <= 253 &&
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/i.test(value);
  if (!ok) fail(`${what}: invalid hostname ${JSON.stringify(value)}`);
}

/** Returns `v` when it is an array, else an empty array (specs are not trusted to be well formed). */
export function arr<T>(v: T[] | undefined | null): T[] {
  return Array.isArray(v) ? v : [];
}
