/**
 * The regular expression tree RE2 builds, with the constructors whose small rewrites change the
 * compiled program: squashing of nested repetition operators, and the factoring of alternations
 * (common literal prefixes, common leading pieces, single characters merged into one class).
 * Nodes are mutable and may be shared, exactly where RE2 mutates and shares them, so that the tree
 * handed to the compiler has RE2's shape.
 */
import { RuneSet, type FoldMode } from './runes';

/** Node kinds, in RE2's order. */
export const Op = {
  NoMatch: 1,
  EmptyMatch: 2,
  Literal: 3,
  LiteralString: 4,
  Concat: 5,
  Alternate: 6,
  Star: 7,
  Plus: 8,
  Quest: 9,
  Repeat: 10,
  Capture: 11,
  AnyChar: 12,
  AnyByte: 13,
  BeginLine: 14,
  EndLine: 15,
  WordBoundary: 16,
  NoWordBoundary: 17,
  BeginText: 18,
  EndText: 19,
  CharClass: 20,
  /** Parser stack markers, never in a finished tree. */
  LeftParen: 22,
  VerticalBar: 23,
} as const;

/** Parse flags RE2 records on nodes (the subset that can differ under Envoy's options). */
export const Flag = {
  FoldCase: 1 << 0,
  ClassNL: 1 << 2,
  DotNL: 1 << 3,
  OneLine: 1 << 4,
  Latin1: 1 << 5,
  NonGreedy: 1 << 6,
  PerlClasses: 1 << 7,
  PerlB: 1 << 8,
  PerlX: 1 << 9,
  UnicodeGroups: 1 << 10,
  WasDollar: 1 << 13,
} as const;

/** RE2's flags for default RE2::Options, which is what Envoy passes (ClassNL plus LikePerl). */
export const ENVOY_PARSE_FLAGS =
  Flag.ClassNL | Flag.OneLine | Flag.PerlClasses | Flag.PerlB | Flag.PerlX | Flag.UnicodeGroups;

export interface Re {
  op: number;
  flags: number;
  subs: Re[];
  /** Literal rune. */
  rune: number;
  /** LiteralString runes. */
  runes: number[];
  /** Repeat bounds; max -1 means unbounded. */
  min: number;
  max: number;
  /** Capture index; -1 for a non-capturing LeftParen marker. */
  cap: number;
  /** CharClass runes. */
  cc: RuneSet | undefined;
  /** A CharClass the parser is still building (RE2 keeps a CharClassBuilder until FinishRegexp). */
  building: boolean;
  /** Next node down the parser stack. */
  down: Re | undefined;
}

export function newRe(op: number, flags: number): Re {
  return {
    op,
    flags,
    subs: [],
    rune: 0,
    runes: [],
    min: 0,
    max: 0,
    cap: 0,
    cc: undefined,
    building: false,
    down: undefined,
  };
}

/** A node leaving the parser stack: unlinked, and a class no longer being built (FinishRegexp). */
export function finishedNode(re: Re): Re {
  re.down = undefined;
  re.building = false;
  return re;
}

export function literal(rune: number, flags: number): Re {
  const re = newRe(Op.Literal, flags);
  re.rune = rune;
  return re;
}

/** A literal string node: EmptyMatch for none, Literal for one rune (RE2's LiteralString). */
export function literalString(runes: number[], flags: number): Re {
  if (runes.length === 0) return newRe(Op.EmptyMatch, flags);
  if (runes.length === 1) return literal(runes[0], flags);
  const re = newRe(Op.LiteralString, flags);
  re.runes = runes.slice();
  return re;
}

export function charClass(cc: RuneSet, flags: number): Re {
  const re = newRe(Op.CharClass, flags);
  re.cc = cc;
  return re;
}

export function withSubs(op: number, flags: number, subs: Re[]): Re {
  const re = newRe(op, flags);
  re.subs = subs;
  return re;
}

export function repeat(sub: Re, flags: number, min: number, max: number): Re {
  const re = withSubs(Op.Repeat, flags, [sub]);
  re.min = min;
  re.max = max;
  return re;
}

export function capture(sub: Re, flags: number, cap: number): Re {
  const re = withSubs(Op.Capture, flags, [sub]);
  re.cap = cap;
  return re;
}

function isRepetitionOp(op: number): boolean {
  return op === Op.Star || op === Op.Plus || op === Op.Quest;
}

/** x*, x+ or x?, squashing `**`, `++`, `??` to one and any other mix of the three to `*`. */
export function starPlusOrQuest(op: number, sub: Re, flags: number): Re {
  if (op === sub.op && flags === sub.flags) return sub;
  if (isRepetitionOp(sub.op) && flags === sub.flags) {
    if (sub.op === Op.Star) return sub;
    return withSubs(Op.Star, flags, [sub.subs[0]]);
  }
  return withSubs(op, flags, [sub]);
}

/** Concatenation or alternation of subs (alternations factored when canFactor). */
export function concatOrAlternate(op: number, subs: Re[], flags: number, canFactor: boolean): Re {
  if (subs.length === 1) return subs[0];
  if (subs.length === 0) return newRe(op === Op.Alternate ? Op.NoMatch : Op.EmptyMatch, flags);
  let list = subs;
  if (op === Op.Alternate && canFactor) {
    list = subs.slice();
    const n = factorAlternation(list, 0, list.length, flags);
    if (n === 1) return list[0];
    list = list.slice(0, n);
  }
  return withSubs(op, flags, list);
}

export function concat(subs: Re[], flags: number): Re {
  return concatOrAlternate(Op.Concat, subs, flags, false);
}

export function alternateNoFactor(subs: Re[], flags: number): Re {
  return concatOrAlternate(Op.Alternate, subs, flags, false);
}

/** How a node's flags fold case in classes: Latin-1 folding pairs ASCII letters only. */
export function foldModeOf(flags: number): FoldMode {
  if (!(flags & Flag.FoldCase)) return 'none';
  return flags & Flag.Latin1 ? 'latin1' : 'unicode';
}

/** Equality of the node itself, not of its subtrees (RE2's TopEqual). */
function topEqual(a: Re, b: Re): boolean {
  if (a.op !== b.op) return false;
  switch (a.op) {
    case Op.EndText:
      return ((a.flags ^ b.flags) & Flag.WasDollar) === 0;
    case Op.Literal:
      return a.rune === b.rune && ((a.flags ^ b.flags) & Flag.FoldCase) === 0;
    case Op.LiteralString:
      return (
        ((a.flags ^ b.flags) & Flag.FoldCase) === 0 &&
        a.runes.length === b.runes.length &&
        a.runes.every((r, i) => r === b.runes[i])
      );
    case Op.Alternate:
    case Op.Concat:
      return a.subs.length === b.subs.length;
    case Op.Star:
    case Op.Plus:
    case Op.Quest:
      return ((a.flags ^ b.flags) & Flag.NonGreedy) === 0;
    case Op.Repeat:
      return ((a.flags ^ b.flags) & Flag.NonGreedy) === 0 && a.min === b.min && a.max === b.max;
    case Op.Capture:
      return a.cap === b.cap;
    case Op.CharClass: {
      const x = a.cc!.ranges;
      const y = b.cc!.ranges;
      return x.length === y.length && x.every((r, i) => r.lo === y[i].lo && r.hi === y[i].hi);
    }
    default:
      return true;
  }
}

/** Structural equality (RE2's Regexp::Equal), iterative so deep trees cannot overflow the stack. */
export function equal(a: Re, b: Re): boolean {
  const stack: [Re, Re][] = [[a, b]];
  while (stack.length) {
    const [x, y] = stack.pop()!;
    if (!topEqual(x, y)) return false;
    for (let i = 0; i < x.subs.length; i++) stack.push([x.subs[i], y.subs[i]]);
  }
  return true;
}

// ------------------------------------------------------------------------------------------------
// Alternation factoring (RE2's FactorAlternation and its three rounds)

/** The literal runes a node begins with, and their FoldCase and Latin1 flags (RE2's LeadingString). */
function leadingString(re: Re): { runes: number[]; fold: number } {
  let r = re;
  while (r.op === Op.Concat && r.subs.length > 0) r = r.subs[0];
  const fold = r.flags & (Flag.FoldCase | Flag.Latin1);
  if (r.op === Op.Literal) return { runes: [r.rune], fold };
  if (r.op === Op.LiteralString) return { runes: r.runes, fold };
  return { runes: [], fold };
}

/** Copies every field of `from` into `to`, so `to`'s parents see `from` (RE2's Swap). */
function replaceWith(to: Re, from: Re): void {
  Object.assign(to, { ...from, down: to.down });
}

/** Removes the first n literal runes of a node, in place (RE2's RemoveLeadingString). */
function removeLeadingString(re: Re, n: number): void {
  const stack: Re[] = [];
  let r = re;
  while (r.op === Op.Concat) {
    if (stack.length < 4) stack.push(r);
    r = r.subs[0];
  }
  if (r.op === Op.Literal) {
    r.rune = 0;
    r.op = Op.EmptyMatch;
  } else if (r.op === Op.LiteralString) {
    if (n >= r.runes.length) {
      r.runes = [];
      r.op = Op.EmptyMatch;
    } else if (n === r.runes.length - 1) {
      r.rune = r.runes[r.runes.length - 1];
      r.runes = [];
      r.op = Op.Literal;
    } else {
      r.runes = r.runes.slice(n);
    }
  }
  while (stack.length) {
    const c = stack.pop()!;
    if (c.subs[0].op !== Op.EmptyMatch) continue;
    if (c.subs.length === 2) replaceWith(c, c.subs[1]);
    else c.subs = c.subs.slice(1);
  }
}

/** The first piece of a node, or undefined when it begins with an empty match (RE2's LeadingRegexp). */
function leadingRegexp(re: Re): Re | undefined {
  if (re.op === Op.EmptyMatch) return undefined;
  if (re.op === Op.Concat && re.subs.length >= 2) {
    return re.subs[0].op === Op.EmptyMatch ? undefined : re.subs[0];
  }
  return re;
}

/** A node without its first piece (RE2's RemoveLeadingRegexp). */
function removeLeadingRegexp(re: Re): Re {
  if (re.op === Op.EmptyMatch) return re;
  if (re.op === Op.Concat && re.subs.length >= 2) {
    if (re.subs[0].op === Op.EmptyMatch) return re;
    if (re.subs.length === 2) return re.subs[1];
    re.subs = re.subs.slice(1);
    return re;
  }
  return newRe(Op.EmptyMatch, re.flags);
}

interface Splice {
  prefix: Re;
  /** Where the spliced alternatives start in the shared array, and how many. */
  off: number;
  n: number;
  /** How many alternatives remain once the suffixes were factored in turn. */
  nsuffix: number;
}

interface Frame {
  off: number;
  n: number;
  round: number;
  splices: Splice[];
  spliceIndex: number;
}

/**
 * Factors the alternatives list[off, off+n) in place and returns how many remain: round 1 pulls out
 * common literal prefixes, round 2 common leading pieces (anchors, classes, fixed repeats of one
 * character), round 3 merges runs of literals and classes into one class; the suffixes of rounds 1
 * and 2 are factored recursively (with an explicit stack, as RE2 does).
 */
function factorAlternation(list: Re[], off: number, n: number, flags: number): number {
  const stack: Frame[] = [{ off, n, round: 0, splices: [], spliceIndex: 0 }];
  for (;;) {
    const f = stack[stack.length - 1];
    if (f.splices.length === 0) {
      f.round++;
    } else if (f.spliceIndex < f.splices.length) {
      const s = f.splices[f.spliceIndex];
      stack.push({ off: s.off, n: s.n, round: 0, splices: [], spliceIndex: 0 });
      continue;
    } else {
      let out = 0;
      let si = 0;
      for (let i = 0; i < f.n;) {
        const s = f.splices[si];
        while (f.off + i < s.off) list[f.off + out++] = list[f.off + i++];
        if (f.round === 1 || f.round === 2) {
          const suffixes = alternateNoFactor(list.slice(s.off, s.off + s.nsuffix), flags);
          list[f.off + out++] = concat([s.prefix, suffixes], flags);
        } else {
          list[f.off + out++] = s.prefix;
        }
        i += s.n;
        if (++si === f.splices.length) {
          while (i < f.n) list[f.off + out++] = list[f.off + i++];
        }
      }
      f.splices = [];
      f.n = out;
      f.round++;
    }
    if (f.round === 1) round1(list, f);
    else if (f.round === 2) round2(list, f);
    else if (f.round === 3) round3(list, f, flags);
    else {
      if (stack.length === 1) return f.n;
      stack.pop();
      const parent = stack[stack.length - 1];
      parent.splices[parent.spliceIndex].nsuffix = f.n;
      parent.spliceIndex++;
      continue;
    }
    f.spliceIndex = f.splices.length === 0 || f.round === 3 ? f.splices.length : 0;
  }
}

function round1(list: Re[], f: Frame): void {
  let start = 0;
  let runes: number[] = [];
  let nrune = 0;
  let fold = 0;
  for (let i = 0; i <= f.n; i++) {
    let next: { runes: number[]; fold: number } | undefined;
    if (i < f.n) {
      next = leadingString(list[f.off + i]);
      if (next.fold === fold) {
        let same = 0;
        while (same < nrune && same < next.runes.length && runes[same] === next.runes[same]) same++;
        if (same > 0) {
          nrune = same;
          continue;
        }
      }
    }
    if (i - start >= 2) {
      const prefix = literalString(runes.slice(0, nrune), fold);
      for (let j = start; j < i; j++) removeLeadingString(list[f.off + j], nrune);
      f.splices.push({ prefix, off: f.off + start, n: i - start, nsuffix: -1 });
    }
    if (next) {
      start = i;
      runes = next.runes.slice();
      nrune = next.runes.length;
      fold = next.fold;
    }
  }
}

function isFactorableLead(first: Re): boolean {
  switch (first.op) {
    case Op.BeginLine:
    case Op.EndLine:
    case Op.WordBoundary:
    case Op.NoWordBoundary:
    case Op.BeginText:
    case Op.EndText:
    case Op.CharClass:
    case Op.AnyChar:
    case Op.AnyByte:
      return true;
    case Op.Repeat: {
      const sub = first.subs[0].op;
      return (
        first.min === first.max &&
        (sub === Op.Literal || sub === Op.CharClass || sub === Op.AnyChar || sub === Op.AnyByte)
      );
    }
    default:
      return false;
  }
}

function round2(list: Re[], f: Frame): void {
  let start = 0;
  let first: Re | undefined;
  for (let i = 0; i <= f.n; i++) {
    let next: Re | undefined;
    if (i < f.n) {
      next = leadingRegexp(list[f.off + i]);
      if (first !== undefined && next !== undefined && isFactorableLead(first) && equal(first, next))
        continue;
    }
    if (i - start >= 2) {
      const prefix = first!;
      for (let j = start; j < i; j++) list[f.off + j] = removeLeadingRegexp(list[f.off + j]);
      f.splices.push({ prefix, off: f.off + start, n: i - start, nsuffix: -1 });
    }
    if (i < f.n) {
      start = i;
      first = next;
    }
  }
}

function isCharLike(re: Re): boolean {
  return re.op === Op.Literal || re.op === Op.CharClass;
}

function round3(list: Re[], f: Frame, flags: number): void {
  let start = 0;
  let first: Re | undefined;
  for (let i = 0; i <= f.n; i++) {
    let next: Re | undefined;
    if (i < f.n) {
      next = list[f.off + i];
      if (first !== undefined && isCharLike(first) && isCharLike(next)) continue;
    }
    if (i - start >= 2) {
      const set = new RuneSet();
      for (let j = start; j < i; j++) {
        const re = list[f.off + j];
        const fold = foldModeOf(re.flags);
        if (re.op === Op.CharClass) {
          for (const r of re.cc!.ranges) set.addRangeFlags(r.lo, r.hi, fold);
        } else if (fold !== 'none') {
          const one = new RuneSet();
          one.addRangeFlags(re.rune, re.rune, fold);
          set.addSet(one);
        } else {
          set.addRange(re.rune, re.rune);
        }
      }
      f.splices.push({
        prefix: charClass(set, flags & ~Flag.FoldCase),
        off: f.off + start,
        n: i - start,
        nsuffix: -1,
      });
    }
    if (i < f.n) {
      start = i;
      first = next;
    }
  }
}
