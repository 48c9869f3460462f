/**
 * The stack of RE2's parser (its ParseState): nodes and markers pushed as the pattern is read,
 * collapsed into concatenations, alternations and groups with the rewrites RE2 makes on the way
 * (literal strings, single-rune classes, squashed repetition operators), since they change the
 * compiled program's size. parse.ts reads the pattern and drives it.
 */
import { cycleFold, RUNE_MAX, RuneSet } from './runes';
import {
  capture,
  charClass,
  concatOrAlternate,
  ENVOY_PARSE_FLAGS,
  finishedNode,
  Flag,
  literal,
  newRe,
  Op,
  repeat,
  withSubs,
  type Re,
} from './regexp';
import { unexpected } from './syntax-error';

/** The largest repetition count RE2 accepts, also the bound on nested counts multiplied. */
const MAX_REPEAT = 1000;

/**
 * Whether nested counted repetitions stay within RE2's bound: dividing 1000 by each count on the
 * way down (integer division, as RE2's RepetitionWalker) must never reach 0.
 */
function repetitionsWithinBound(root: Re): boolean {
  const stack: [Re, number][] = [[root, MAX_REPEAT]];
  while (stack.length) {
    const [re, parentBudget] = stack.pop()!;
    let budget = parentBudget;
    if (re.op === Op.Repeat) {
      const m = re.max < 0 ? re.min : re.max;
      if (m > 0) budget = Math.floor(budget / m);
    }
    if (budget === 0) return false;
    for (const sub of re.subs) stack.push([sub, budget]);
  }
  return true;
}

/** The parse stack with the flags in effect; a subclass reads the pattern and calls its operations. */
export class ParseStack {
  protected flags: number;
  private top: Re | undefined;
  private ncap = 0;
  protected readonly runeMax: number;

  constructor(protected readonly latin1: boolean) {
    this.flags = ENVOY_PARSE_FLAGS | (latin1 ? Flag.Latin1 : 0);
    this.runeMax = latin1 ? 0xff : RUNE_MAX;
  }

  /** Whether a stack node is a marker (a left parenthesis or a pending alternation), not a regexp. */
  private isMarker(op: number): boolean {
    return op >= Op.LeftParen;
  }

  /**
   * Pushes a finished node, first merging adjacent literals; a class being built of one rune, or of
   * one ASCII letter in both cases, becomes a literal as RE2's PushRegexp makes it.
   */
  protected pushRegexp(node: Re): void {
    this.maybeConcatString(-1, 0);
    let re = node;
    if (re.op === Op.CharClass && re.building) {
      const cc = re.cc!;
      cc.removeAbove(this.runeMax);
      if (cc.size === 1) {
        re = literal(cc.ranges[0].lo, this.flags);
      } else if (cc.size === 2) {
        const r = cc.ranges[0].lo;
        if (r >= 0x41 && r <= 0x5a && cc.contains(r + 0x20))
          re = literal(r + 0x20, this.flags | Flag.FoldCase);
      }
    }
    re.down = this.top;
    this.top = re;
  }

  /** Pushes an operator without arguments (anchors, word boundaries, any-char). */
  protected pushSimpleOp(op: number): void {
    this.pushRegexp(newRe(op, this.flags));
  }

  /** Pushes one literal rune; under case folding it becomes the class of its case variants. */
  protected pushLiteral(r: number): void {
    const isLetter = (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a);
    if (this.flags & Flag.FoldCase && this.latin1 && isLetter) {
      const cc = new RuneSet();
      cc.addLatin1FoldedRange(r, r);
      this.pushRegexp(buildingClass(cc, this.flags & ~Flag.FoldCase));
      return;
    }
    if (this.flags & Flag.FoldCase && !this.latin1 && cycleFold(r) !== r) {
      const cc = new RuneSet();
      let x = r;
      do {
        cc.addRange(x, x);
        x = cycleFold(x);
      } while (x !== r);
      this.pushRegexp(buildingClass(cc, this.flags & ~Flag.FoldCase));
      return;
    }
    if (this.maybeConcatString(r, this.flags)) return;
    this.pushRegexp(literal(r, this.flags));
  }

  /** Pushes `.`: any rune, or any rune but newline unless the s flag is set. */
  protected pushDot(): void {
    if (this.flags & Flag.DotNL) {
      this.pushSimpleOp(Op.AnyChar);
      return;
    }
    const cc = new RuneSet();
    cc.addRange(0, 0x09);
    cc.addRange(0x0b, this.runeMax);
    this.pushRegexp(buildingClass(cc, this.flags & ~Flag.FoldCase));
  }

  /**
   * Merges the two literals on top of the stack into one literal string; with r ≥ 0, the top node
   * is then reused for the new literal r (RE2's MaybeConcatString).
   */
  private maybeConcatString(r: number, flags: number): boolean {
    const re1 = this.top;
    const re2 = re1?.down;
    if (!re1 || !re2) return false;
    if (re1.op !== Op.Literal && re1.op !== Op.LiteralString) return false;
    if (re2.op !== Op.Literal && re2.op !== Op.LiteralString) return false;
    if ((re1.flags & Flag.FoldCase) !== (re2.flags & Flag.FoldCase)) return false;
    if (re2.op === Op.Literal) {
      re2.op = Op.LiteralString;
      re2.runes = [re2.rune];
    }
    if (re1.op === Op.Literal) {
      re2.runes.push(re1.rune);
    } else {
      re2.runes.push(...re1.runes);
      re1.runes = [];
    }
    if (r >= 0) {
      re1.op = Op.Literal;
      re1.rune = r;
      re1.flags = flags;
      return true;
    }
    this.top = re2;
    return false;
  }

  /**
   * Applies `*`, `+` or `?` to the top node; repeated operators squash as RE2 squashes them
   * (`a**` is `a*`, mixed ones become `*`).
   */
  protected pushRepeatOp(op: number, nongreedy: boolean): void {
    const top = this.top;
    if (!top || this.isMarker(top.op)) unexpected('repetition argument');
    const fl = nongreedy ? this.flags ^ Flag.NonGreedy : this.flags;
    if (op === top.op && fl === top.flags) return;
    if ((top.op === Op.Star || top.op === Op.Plus || top.op === Op.Quest) && fl === top.flags) {
      top.op = Op.Star;
      return;
    }
    const down = top.down;
    const re = withSubs(op, fl, [finishedNode(top)]);
    re.down = down;
    this.top = re;
  }

  /** Applies `{min,max}` to the top node, refusing counts above RE2's bound, nested ones included. */
  protected pushRepetition(min: number, max: number, nongreedy: boolean): void {
    const top = this.top;
    if (!top || this.isMarker(top.op)) unexpected('repetition argument');
    const fl = nongreedy ? this.flags ^ Flag.NonGreedy : this.flags;
    if ((max !== -1 && max < min) || min > MAX_REPEAT || max > MAX_REPEAT) unexpected('repetition size');
    const down = top.down;
    const re = repeat(finishedNode(top), fl, min, max);
    re.down = down;
    this.top = re;
    if ((min >= 2 || max >= 2) && !repetitionsWithinBound(re)) unexpected('repetition size');
  }

  /** Pushes the marker of a capturing group. */
  protected doLeftParen(): void {
    const re = newRe(Op.LeftParen, this.flags);
    re.cap = ++this.ncap;
    this.pushRegexp(re);
  }

  /** Pushes the marker of a non-capturing group. */
  protected doLeftParenNoCapture(): void {
    const re = newRe(Op.LeftParen, this.flags);
    re.cap = -1;
    this.pushRegexp(re);
  }

  /**
   * Ends one branch of an alternation; adjacent branches of a single char-like node merge with an
   * any-char branch as RE2's DoVerticalBar merges them.
   */
  protected doVerticalBar(): void {
    this.maybeConcatString(-1, 0);
    this.doConcatenation();
    const r1 = this.top;
    const r2 = r1?.down;
    if (r1 && r2 && r2.op === Op.VerticalBar) {
      const r3 = r2.down;
      const charLike = (re: Re): boolean =>
        re.op === Op.Literal || re.op === Op.CharClass || re.op === Op.AnyChar;
      if (r3 && (r1.op === Op.AnyChar || r3.op === Op.AnyChar)) {
        if (r3.op === Op.AnyChar && charLike(r1)) {
          this.top = r2;
          return;
        }
        if (r1.op === Op.AnyChar && charLike(r3)) {
          r1.down = r3.down;
          r2.down = r1;
          this.top = r2;
          return;
        }
      }
      r1.down = r2.down;
      r2.down = r1;
      this.top = r2;
      return;
    }
    this.pushSimpleOp(Op.VerticalBar);
  }

  /** Closes the innermost group, restoring the flags of its start. */
  protected doRightParen(): void {
    this.doAlternation();
    const r1 = this.top;
    const r2 = r1?.down;
    if (!r1 || !r2 || r2.op !== Op.LeftParen) unexpected(')');
    this.top = r2.down;
    this.flags = r2.flags;
    if (r2.cap > 0) {
      this.pushRegexp(capture(finishedNode(r1), r2.flags, r2.cap));
    } else {
      this.pushRegexp(r1);
    }
  }

  /** Ends the pattern: collapses the stack into the one tree, refusing an unclosed group. */
  protected doFinish(): Re {
    this.doAlternation();
    const re = this.top;
    if (!re || re.down) unexpected('missing )');
    this.top = undefined;
    return finishedNode(re);
  }

  /** Collapses the nodes above the topmost marker into a concatenation (empty-match when none). */
  private doConcatenation(): void {
    const r1 = this.top;
    if (!r1 || this.isMarker(r1.op)) this.pushRegexp(newRe(Op.EmptyMatch, this.flags));
    this.doCollapse(Op.Concat);
  }

  /** Collapses the branches above the topmost marker into an alternation. */
  private doAlternation(): void {
    this.doVerticalBar();
    this.top = this.top!.down;
    this.doCollapse(Op.Alternate);
  }

  /** Replaces the nodes above the topmost marker by their concatenation or alternation. */
  private doCollapse(op: number): void {
    let next: Re | undefined;
    const items: Re[] = [];
    for (let sub = this.top; sub && !this.isMarker(sub.op); sub = next) {
      next = sub.down;
      items.push(sub);
    }
    if (this.top && this.top.down === next) return;
    const subs: Re[] = [];
    for (let k = items.length - 1; k >= 0; k--) {
      const sub = items[k];
      if (sub.op === op) subs.push(...sub.subs);
      else subs.push(finishedNode(sub));
    }
    const re = concatOrAlternate(op, subs, this.flags, true);
    re.down = next;
    this.top = re;
  }
}

/** Makes a class node marked as still being built, which pushRegexp may turn into a literal. */
export function buildingClass(cc: RuneSet, flags: number): Re {
  const re = charClass(cc, flags);
  re.building = true;
  return re;
}
