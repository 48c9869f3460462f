/**
 * Pure summaries for the end-to-end bench (bench/e2e.ts): medians and spreads of run figures,
 * and the targets they are read against.
 */

/** Median, least and greatest of a list of figures, and how many there were. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

/**
 * Returns the median (the mean of the middle two for an even count), min and max of `values`,
 * ignoring non-finite entries; all NaN when nothing is left. The README reports medians with
 * their spread, never the best run (bench/README.md).
 */
export function spread(values: readonly number[]): Spread {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (s.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]!, n: s.length };
}

/** Returns "median (min–max, n=N)" with `digits` decimals, or "n/a" for an empty spread. */
export function formatSpread(sp: Spread, unit: string, digits = 0): string {
  if (sp.n === 0) return 'n/a';
  const f = (v: number) => v.toFixed(digits);
  return sp.n === 1
    ? `${f(sp.median)} ${unit}`
    : `${f(sp.median)} ${unit} (${f(sp.min)}–${f(sp.max)}, n=${sp.n})`;
}

/** A target of issue 15 at the large size: the figure passes when the median is at most `max`. */
export interface Target {
  max: number;
  unit: string;
  text: string;
}

/** Returns whether `median` meets `target`; undefined when there is no figure. */
export function meets(median: number, target: Target | undefined): boolean | undefined {
  if (!target || !Number.isFinite(median)) return undefined;
  return median <= target.max;
}

/** Splits `total` into `parts` near-equal whole shares, the larger ones first. */
export function shares(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}
