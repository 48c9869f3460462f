/**
 * Random regular expressions for property tests: a small grammar of RE2 syntax (literals,
 * escapes, non-ASCII runes, classes with ranges, negation, Perl and POSIX groups, anchors, flag
 * groups, captures, alternation, all repetition forms with counts near Envoy's limits), driven by
 * a seeded generator so a failure can be replayed from its seed.
 */

/** A deterministic pseudo-random generator (mulberry32): numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LITERALS = [
  ...'abcxyz/-_019KkSs'.split(''),
  '\\.',
  '\\/',
  '\\-',
  '\\?',
  '\\x41',
  '\\x{e9}',
  '\\101',
  '\\n',
  '\\t',
  ' ',
  'é',
  'ÿ',
  '日',
  '𝄞',
];
const CLASS_ITEMS = [
  'a-z',
  'A-Z',
  '0-9',
  'a',
  'k',
  's',
  '_',
  '/',
  '.',
  '\\-',
  '\\]',
  '\\d',
  '\\w',
  '\\s',
  '\\D',
  '\\W',
  '[:alpha:]',
  '[:^digit:]',
  '[:punct:]',
  'é',
  'à-ÿ',
  '\\x00-\\x7f',
  '\\x{80}-\\x{ff}',
];
const ATOMS = [
  '.',
  '^',
  '$',
  '\\A',
  '\\z',
  '\\b',
  '\\B',
  '\\d',
  '\\w',
  '\\s',
  '\\S',
  '\\W',
  '\\Qa.b\\E',
  '\\C',
];
const GROUPS = ['(', '(?:', '(?i:', '(?s:', '(?m:', '(?U:', '(?P<id>', '(?-i:'];

/** One random pattern; most are valid RE2, some are not (unknown escapes, bad counts). */
export function randomRegex(rand: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
  const charClass = (): string => {
    const items = Array.from({ length: int(1, 3) }, () => pick(CLASS_ITEMS)).join('');
    return `[${rand() < 0.3 ? '^' : ''}${items}]`;
  };
  const atom = (depth: number): string => {
    const r = rand();
    if (r < 0.4) return pick(LITERALS).repeat(int(1, 3));
    if (r < 0.6) return charClass();
    if (r < 0.72) return pick(ATOMS);
    if (r < 0.74) return pick(['\\x{100}', '\\Z', '\\8', '(?=a)', 'a**']);
    if (depth >= 3) return pick(LITERALS);
    const g = pick(GROUPS);
    return `${rand() < 0.15 ? '(?i)' : ''}${g}${alternation(depth + 1)})`;
  };
  const piece = (depth: number): string => {
    const a = atom(depth);
    if (rand() < 0.55) return a;
    const lo = int(0, 8);
    const big = int(10, 110);
    const op = pick([
      '*',
      '+',
      '?',
      `{${lo}}`,
      `{${lo},}`,
      `{${lo},${lo + int(0, 6)}}`,
      `{${big}}`,
      `{0,${big}}`,
    ]);
    return a + op + (rand() < 0.2 ? '?' : '');
  };
  const concat = (depth: number): string => Array.from({ length: int(1, 4) }, () => piece(depth)).join('');
  const alternation = (depth: number): string =>
    Array.from({ length: rand() < 0.65 ? 1 : int(2, 4) }, () => concat(depth)).join('|');
  return alternation(0);
}
