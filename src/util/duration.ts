/**
 * Durations written the way operators write them on command lines: `90d`, `24h`, `1h30m`,
 * `45s`, `500ms`. Parsed to milliseconds; anything else is refused with a message that shows
 * the accepted form.
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+)(ms|s|m|h|d)/y;

/** Milliseconds in `text`; throws naming `what` when it is not a duration. */
export function parseDuration(text: string, what = 'duration'): number {
  let total = 0;
  PART.lastIndex = 0;
  let matched = 0;
  while (PART.lastIndex < text.length) {
    const m = PART.exec(text);
    if (!m) break;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    matched = PART.lastIndex;
  }
  if (text.length === 0 || matched !== text.length || !Number.isSafeInteger(total)) {
    throw new Error(
      `${what}: expected a duration such as 90d, 24h, 1h30m, 45s or 500ms, got ${JSON.stringify(text)}`,
    );
  }
  return total;
}

/** The shortest exact text for `ms` in the units above (e.g. 5400000 → "1h30m"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms']) {
    const size = UNIT_MS[unit]!;
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return out;
}
