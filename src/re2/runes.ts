/**
 * Rune sets as RE2 builds them for character classes: sorted, disjoint, non-abutting ranges of
 * runes, plus the ASCII-only Perl and POSIX groups and case folding.
 *
 * Two encodings matter (see program-size.ts): Latin-1, where runes are bytes and case folding
 * only pairs ASCII letters, and UTF-8, where runes are Unicode code points. UTF-8 case folding is
 * known here for ASCII and for the two non-ASCII runes that fold to ASCII letters (U+017F ſ,
 * U+212A K); folding any other rune needs Unicode tables Convoy does not carry, so it raises
 * {@link Re2Unsupported} and the caller refuses the regex.
 */

/** The largest Unicode code point. */
export const RUNE_MAX = 0x10ffff;
/** Runes below this are single bytes in UTF-8. */
export const RUNE_SELF = 0x80;

/** A regex this estimator cannot size exactly (it needs Unicode tables); callers refuse it. */
export class Re2Unsupported extends Error {}

/** How a class folds case: not at all, RE2's Latin-1 way (ASCII letters), or Unicode simple folding. */
export type FoldMode = 'none' | 'latin1' | 'unicode';

export interface RuneRange {
  lo: number;
  hi: number;
}

const LONG_S = 0x17f;
const KELVIN = 0x212a;
const A_UPPER = 0x41;
const Z_UPPER = 0x5a;
const A_LOWER = 0x61;
const Z_LOWER = 0x7a;

/** A mutable set of runes kept as sorted, disjoint, non-abutting ranges. */
export class RuneSet {
  ranges: RuneRange[] = [];
  /** Number of runes in the set. */
  size = 0;

  /** A copy of the set. */
  clone(): RuneSet {
    const c = new RuneSet();
    c.ranges = this.ranges.map((r) => ({ ...r }));
    c.size = this.size;
    return c;
  }

  contains(r: number): boolean {
    return this.indexOf(r) >= 0;
  }

  /** Index of the range holding r, or -1. */
  private indexOf(r: number): number {
    let lo = 0;
    let hi = this.ranges.length - 1;
    while (lo <= hi) {
      const m = (lo + hi) >> 1;
      const rr = this.ranges[m];
      if (rr.hi < r) lo = m + 1;
      else if (r < rr.lo) hi = m - 1;
      else return m;
    }
    return -1;
  }

  /**
   * Adds lo-hi; returns false when one existing range already held all of it (RE2's answer, which
   * stops its folding recursion), true otherwise.
   */
  addRange(lo: number, hi: number): boolean {
    if (hi < lo) return false;
    const at = this.indexOf(lo);
    if (at >= 0 && this.ranges[at].hi >= hi) return false;
    const kept: RuneRange[] = [];
    let nlo = lo;
    let nhi = hi;
    let inserted = false;
    for (const r of this.ranges) {
      if (r.hi < nlo - 1) {
        kept.push(r);
      } else if (r.lo > nhi + 1) {
        if (!inserted) {
          kept.push({ lo: nlo, hi: nhi });
          inserted = true;
        }
        kept.push(r);
      } else {
        this.size -= r.hi - r.lo + 1;
        nlo = Math.min(nlo, r.lo);
        nhi = Math.max(nhi, r.hi);
      }
    }
    if (!inserted) kept.push({ lo: nlo, hi: nhi });
    this.size += nhi - nlo + 1;
    this.ranges = kept;
    return true;
  }

  addSet(other: RuneSet): void {
    for (const r of other.ranges) this.addRange(r.lo, r.hi);
  }

  /** Replaces the set by its complement in 0-RUNE_MAX. */
  negate(): void {
    const out: RuneRange[] = [];
    let next = 0;
    for (const r of this.ranges) {
      if (r.lo > next) out.push({ lo: next, hi: r.lo - 1 });
      next = r.hi + 1;
    }
    if (next <= RUNE_MAX) out.push({ lo: next, hi: RUNE_MAX });
    this.ranges = out;
    this.size = RUNE_MAX + 1 - this.size;
  }

  /** True when the set treats A-Z exactly as it treats a-z (RE2's FoldsASCII). */
  foldsAscii(): boolean {
    for (let i = 0; i < 26; i++) {
      if (this.contains(A_UPPER + i) !== this.contains(A_LOWER + i)) return false;
    }
    return true;
  }

  /** Removes every rune above r (RE2's RemoveAbove, applied to Latin-1 classes). */
  removeAbove(r: number): void {
    const kept: RuneRange[] = [];
    for (const rr of this.ranges) {
      if (rr.lo > r) {
        this.size -= rr.hi - rr.lo + 1;
      } else if (rr.hi > r) {
        this.size -= rr.hi - r;
        kept.push({ lo: rr.lo, hi: r });
      } else {
        kept.push(rr);
      }
    }
    this.ranges = kept;
  }

  /**
   * Adds lo-hi and every rune that simple case folding makes equal to one of them: the fold
   * closure, as RE2's AddFoldedRange computes it for classes built with one set of flags.
   */
  addFoldedRange(lo: number, hi: number): void {
    checkFoldable(lo, hi);
    this.addLatin1FoldedRange(lo, hi);
    const has = (r: number): boolean => lo <= r && r <= hi;
    if (has(0x4b) || has(0x6b) || has(KELVIN)) {
      this.addRange(0x4b, 0x4b);
      this.addRange(0x6b, 0x6b);
      this.addRange(KELVIN, KELVIN);
    }
    if (has(0x53) || has(0x73) || has(LONG_S)) {
      this.addRange(0x53, 0x53);
      this.addRange(0x73, 0x73);
      this.addRange(LONG_S, LONG_S);
    }
  }

  /** Adds lo-hi and the other case of each ASCII letter in it (RE2's AddFoldedRangeLatin1). */
  addLatin1FoldedRange(lo: number, hi: number): void {
    this.addRange(lo, hi);
    for (const [a, b] of [
      [A_UPPER, Z_UPPER],
      [A_LOWER, Z_LOWER],
    ]) {
      const flo = Math.max(lo, a);
      const fhi = Math.min(hi, b);
      if (flo <= fhi) this.addRange(flo ^ 0x20, fhi ^ 0x20);
    }
  }

  /** Adds lo-hi, folded as the mode says (RE2's AddRangeFlags for Envoy's options). */
  addRangeFlags(lo: number, hi: number, fold: FoldMode): void {
    if (fold === 'unicode') this.addFoldedRange(lo, hi);
    else if (fold === 'latin1') this.addLatin1FoldedRange(lo, hi);
    else this.addRange(lo, hi);
  }
}

/** Refuses a fold of runes whose case variants are outside ASCII and not ſ or K. */
function checkFoldable(lo: number, hi: number): void {
  for (let r = Math.max(lo, RUNE_SELF); r <= hi; r++) {
    if (r !== LONG_S && r !== KELVIN) {
      throw new Re2Unsupported('case-insensitive matching of non-ASCII characters');
    }
  }
}

/**
 * The next rune in r's case-folding orbit (RE2's CycleFoldRune), for the runes whose orbit is known
 * here; r itself when it has no case variant. Orbits: {K, k, K}, {S, s, ſ}, {X, x} for other letters.
 */
export function cycleFold(r: number): number {
  if (r >= RUNE_SELF && r !== LONG_S && r !== KELVIN) {
    throw new Re2Unsupported('case-insensitive matching of non-ASCII characters');
  }
  if (r === 0x4b) return 0x6b;
  if (r === 0x6b) return KELVIN;
  if (r === KELVIN) return 0x4b;
  if (r === 0x53) return 0x73;
  if (r === 0x73) return LONG_S;
  if (r === LONG_S) return 0x53;
  if ((A_UPPER <= r && r <= Z_UPPER) || (A_LOWER <= r && r <= Z_LOWER)) return r ^ 0x20;
  return r;
}

/** A named group of runes, given by its ranges, possibly negated. */
export interface RuneGroup {
  negated: boolean;
  ranges: [number, number][];
}

const DIGIT: [number, number][] = [[0x30, 0x39]];
const SPACE_PERL: [number, number][] = [
  [0x09, 0x0a],
  [0x0c, 0x0d],
  [0x20, 0x20],
];
const WORD: [number, number][] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];

/** The Perl classes RE2 knows (ASCII only, as in RE2). */
export const PERL_GROUPS: Readonly<Record<string, RuneGroup>> = {
  d: { negated: false, ranges: DIGIT },
  D: { negated: true, ranges: DIGIT },
  s: { negated: false, ranges: SPACE_PERL },
  S: { negated: true, ranges: SPACE_PERL },
  w: { negated: false, ranges: WORD },
  W: { negated: true, ranges: WORD },
};

const POSIX: Readonly<Record<string, [number, number][]>> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: DIGIT,
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: WORD,
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};

/** The POSIX class named like `alpha` or `^alpha` (as inside `[[:alpha:]]`), if RE2 knows it. */
export function posixGroup(name: string): RuneGroup | undefined {
  const negated = name.startsWith('^');
  const base = negated ? name.slice(1) : name;
  if (!Object.prototype.hasOwnProperty.call(POSIX, base)) return undefined;
  return { negated, ranges: POSIX[base] };
}

/**
 * Adds a group to a set as RE2's AddUGroup does: a negated group under case folding is the
 * complement of the folded group; otherwise the gaps between its ranges are added.
 */
export function addGroup(set: RuneSet, group: RuneGroup, negated: boolean, fold: FoldMode): void {
  if (!negated) {
    for (const [lo, hi] of group.ranges) set.addRangeFlags(lo, hi, fold);
    return;
  }
  if (fold !== 'none') {
    const positive = new RuneSet();
    addGroup(positive, group, false, fold);
    positive.negate();
    set.addSet(positive);
    return;
  }
  let next = 0;
  for (const [lo, hi] of group.ranges) {
    if (next < lo) set.addRange(next, lo - 1);
    next = hi + 1;
  }
  if (next <= RUNE_MAX) set.addRange(next, RUNE_MAX);
}

/** UTF-8 bytes of a rune, as RE2's runetochar writes them (surrogates are encoded like any rune). */
export function utf8Bytes(r: number): number[] {
  if (r < 0x80) return [r];
  if (r < 0x800) return [0xc0 | (r >> 6), 0x80 | (r & 0x3f)];
  if (r < 0x10000) return [0xe0 | (r >> 12), 0x80 | ((r >> 6) & 0x3f), 0x80 | (r & 0x3f)];
  return [0xf0 | (r >> 18), 0x80 | ((r >> 12) & 0x3f), 0x80 | ((r >> 6) & 0x3f), 0x80 | (r & 0x3f)];
}
