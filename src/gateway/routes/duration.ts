/**
 * Gateway API durations (GEP-2257): one to four `<number><unit>` groups, numbers of 1-5 digits,
 * units h, m, s, ms. Examples: "10s", "500ms", "1h2m", "0s" (disables the timeout).
 */

const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
const PART = /([0-9]{1,5})(ms|h|m|s)/g;
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };

/** Returns a Gateway API duration in milliseconds, or undefined when the string is not valid. */
export function parseDuration(value: string): number | undefined {
  if (typeof value !== 'string' || !DURATION.test(value)) return undefined;
  let total = 0;
  for (const m of value.matchAll(PART)) total += Number(m[1]) * UNIT_MS[m[2]];
  return total;
}
