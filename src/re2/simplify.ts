/**
 * RE2's simplification before compiling: runs of the same repeated piece are coalesced
 * (`a*a+` → `a{1,}`), counted repetitions are expanded into copies of their subexpression
 * (`x{2,4}` → `xx(x(x)?)?`), and empty or full classes become NoMatch or AnyChar. Expanded copies
 * share one node, as in RE2; the compiler emits instructions for every occurrence.
 */
import { RUNE_MAX } from './runes';
import {
  concat,
  equal,
  Flag,
  literalString,
  newRe,
  Op,
  repeat,
  starPlusOrQuest,
  withSubs,
  type Re,
} from './regexp';

/** The simplified tree for a parsed one (RE2's Regexp::Simplify). */
export function simplifyRe2(re: Re): Re {
  return simplify(coalesce(re));
}

function sameChildren(re: Re, children: Re[]): boolean {
  return children.every((c, i) => c === re.subs[i]);
}

/** A copy of re with new children, keeping its repeat bounds and capture index. */
function rebuilt(re: Re, children: Re[]): Re {
  const n = withSubs(re.op, re.flags, children);
  n.min = re.min;
  n.max = re.max;
  n.cap = re.cap;
  return n;
}

// ------------------------------------------------------------------------------------------------
// Coalescing (RE2's CoalesceWalker)

function coalesce(re: Re): Re {
  if (re.subs.length === 0) return re;
  const children = re.subs.map(coalesce);
  if (re.op !== Op.Concat) return sameChildren(re, children) ? re : rebuilt(re, children);
  let can = false;
  for (let i = 0; i + 1 < children.length; i++) if (canCoalesce(children[i], children[i + 1])) can = true;
  if (!can) return sameChildren(re, children) ? re : rebuilt(re, children);
  for (let i = 0; i + 1 < children.length; i++) {
    if (canCoalesce(children[i], children[i + 1])) {
      const [a, b] = doCoalesce(children[i], children[i + 1]);
      children[i] = a;
      children[i + 1] = b;
    }
  }
  return withSubs(
    re.op,
    re.flags,
    children.filter((c) => c.op !== Op.EmptyMatch),
  );
}

function isRepeated(op: number): boolean {
  return op === Op.Star || op === Op.Plus || op === Op.Quest || op === Op.Repeat;
}

function isSingleChar(op: number): boolean {
  return op === Op.Literal || op === Op.CharClass || op === Op.AnyChar || op === Op.AnyByte;
}

function canCoalesce(r1: Re, r2: Re): boolean {
  if (!isRepeated(r1.op) || !isSingleChar(r1.subs[0].op)) return false;
  const piece = r1.subs[0];
  if (
    isRepeated(r2.op) &&
    equal(piece, r2.subs[0]) &&
    (r1.flags & Flag.NonGreedy) === (r2.flags & Flag.NonGreedy)
  ) {
    return true;
  }
  if (equal(piece, r2)) return true;
  return (
    piece.op === Op.Literal &&
    r2.op === Op.LiteralString &&
    r2.runes[0] === piece.rune &&
    (piece.flags & Flag.FoldCase) === (r2.flags & Flag.FoldCase)
  );
}

/** Merges r2 into the repetition r1; returns the two new nodes (the first possibly EmptyMatch). */
function doCoalesce(r1: Re, r2: Re): [Re, Re] {
  const piece = r1.subs[0];
  const bounds: Record<number, [number, number]> = {
    [Op.Star]: [0, -1],
    [Op.Plus]: [1, -1],
    [Op.Quest]: [0, 1],
    [Op.Repeat]: [r1.min, r1.max],
  };
  let [min, max] = bounds[r1.op];
  const empty = (): [Re, Re] => [newRe(Op.EmptyMatch, 0), repeat(piece, r1.flags, min, max)];
  switch (r2.op) {
    case Op.Star:
      max = -1;
      return empty();
    case Op.Plus:
      min++;
      max = -1;
      return empty();
    case Op.Quest:
      if (max !== -1) max++;
      return empty();
    case Op.Repeat:
      min += r2.min;
      if (r2.max === -1) max = -1;
      else if (max !== -1) max += r2.max;
      return empty();
    case Op.LiteralString: {
      let n = 1;
      while (n < r2.runes.length && r2.runes[n] === piece.rune) n++;
      min += n;
      if (max !== -1) max += n;
      if (n === r2.runes.length) return empty();
      return [repeat(piece, r1.flags, min, max), literalString(r2.runes.slice(n), r2.flags)];
    }
    default:
      min++;
      if (max !== -1) max++;
      return empty();
  }
}

// ------------------------------------------------------------------------------------------------
// Simplification (RE2's SimplifyWalker)

function simplify(re: Re): Re {
  switch (re.op) {
    case Op.Concat:
    case Op.Alternate: {
      const children = re.subs.map(simplify);
      return sameChildren(re, children) ? re : withSubs(re.op, re.flags, children);
    }
    case Op.Capture: {
      const sub = simplify(re.subs[0]);
      return sub === re.subs[0] ? re : rebuilt(re, [sub]);
    }
    case Op.Star:
    case Op.Plus:
    case Op.Quest: {
      const sub = simplify(re.subs[0]);
      if (sub.op === Op.EmptyMatch) return sub;
      if (sub === re.subs[0]) return re;
      if (re.op === sub.op && re.flags === sub.flags) return sub;
      return withSubs(re.op, re.flags, [sub]);
    }
    case Op.Repeat: {
      const sub = simplify(re.subs[0]);
      if (sub.op === Op.EmptyMatch) return sub;
      return simplifyRepeat(sub, re.min, re.max, re.flags);
    }
    case Op.CharClass: {
      const size = re.cc!.size;
      if (size === 0) return newRe(Op.NoMatch, re.flags);
      if (size === RUNE_MAX + 1) return newRe(Op.AnyChar, re.flags);
      return re;
    }
    default:
      return re;
  }
}

function isEmptyWidth(re: Re): boolean {
  return (
    re.op === Op.BeginLine ||
    re.op === Op.EndLine ||
    re.op === Op.WordBoundary ||
    re.op === Op.NoWordBoundary ||
    re.op === Op.BeginText ||
    re.op === Op.EndText
  );
}

/** x{min,max} as copies of x (RE2's SimplifyRepeat); empty-width x repeats at most once. */
function simplifyRepeat(re: Re, minIn: number, maxIn: number, f: number): Re {
  let min = minIn;
  let max = maxIn;
  if (isEmptyWidth(re) || ((re.op === Op.Concat || re.op === Op.Alternate) && re.subs.every(isEmptyWidth))) {
    min = Math.min(min, 1);
    max = Math.min(max, 1);
  }
  if (max === -1) {
    if (min === 0) return starPlusOrQuest(Op.Star, re, f);
    if (min === 1) return starPlusOrQuest(Op.Plus, re, f);
    const subs: Re[] = new Array<Re>(min - 1).fill(re);
    subs.push(starPlusOrQuest(Op.Plus, re, f));
    return concat(subs, f);
  }
  if (min === 0 && max === 0) return newRe(Op.EmptyMatch, f);
  if (min === 1 && max === 1) return re;
  let nre: Re | undefined;
  if (min > 0) nre = concat(new Array<Re>(min).fill(re), f);
  if (max > min) {
    let suf = starPlusOrQuest(Op.Quest, re, f);
    for (let i = min + 1; i < max; i++) suf = starPlusOrQuest(Op.Quest, withSubs(Op.Concat, f, [re, suf]), f);
    nre = nre === undefined ? suf : withSubs(Op.Concat, f, [nre, suf]);
  }
  return nre ?? newRe(Op.NoMatch, f);
}
