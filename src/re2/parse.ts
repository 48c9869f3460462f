/**
 * Parses an RE2 pattern into the tree RE2's parser builds for Envoy's options, including the
 * parser's own rewrites (literal strings, single-rune classes, squashed repetition operators,
 * factored alternations), since they change the compiled program's size.
 *
 * It follows the grammar of a valid pattern and throws Re2SyntaxError on anything else, with RE2's
 * wording for escapes (the error Latin-1 adds, runes above U+00FF, is only found here); RE2 itself
 * gives the message for other errors.
 */
import {
  addGroup,
  cycleFold,
  PERL_GROUPS,
  posixGroup,
  Re2Unsupported,
  RUNE_MAX,
  RuneSet,
  type FoldMode,
  type RuneGroup,
} from './runes';
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

const ch = (c: string): number => c.charCodeAt(0);
const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39;
const isOctal = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x37;
const isHex = (c: number | undefined): boolean =>
  c !== undefined && (isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
const isAlnum = (c: number): boolean => isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const ANY_GROUP: RuneGroup = {
  negated: false,
  ranges: [
    [0, 0xffff],
    [0x10000, RUNE_MAX],
  ],
};

/** A pattern this parser finds invalid; RE2 itself gives the authoritative message. */
export class Re2SyntaxError extends Error {}

/** The largest repetition count RE2 accepts, also the bound on nested counts multiplied. */
const MAX_REPEAT = 1000;

function unexpected(what: string): never {
  throw new Re2SyntaxError(`unexpected ${what}`);
}

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

/**
 * Parses a valid RE2 pattern the way RE2::Init does with Envoy's options. In Latin-1 mode the
 * pattern is given as bytes (RE2 reads each byte of Envoy's UTF-8 string as one Latin-1 rune), in
 * UTF-8 mode as code points.
 */
export function parseRe2(pattern: readonly number[], latin1: boolean): Re {
  return new Parser(pattern, latin1).parse();
}

class Parser {
  private flags: number;
  private top: Re | undefined;
  private ncap = 0;
  private i = 0;
  private readonly runeMax: number;

  constructor(
    private readonly t: readonly number[],
    private readonly latin1: boolean,
  ) {
    this.flags = ENVOY_PARSE_FLAGS | (latin1 ? Flag.Latin1 : 0);
    this.runeMax = latin1 ? 0xff : RUNE_MAX;
  }

  /** How classes fold case under the current flags. */
  private foldMode(): FoldMode {
    if (!(this.flags & Flag.FoldCase)) return 'none';
    return this.latin1 ? 'latin1' : 'unicode';
  }

  parse(): Re {
    const t = this.t;
    let lastUnary = false;
    while (this.i < t.length) {
      let unary = false;
      const c = t[this.i];
      switch (c) {
        case ch('('):
          if (t[this.i + 1] === ch('?')) {
            this.parsePerlFlags();
          } else {
            this.doLeftParen();
            this.i++;
          }
          break;
        case ch('|'):
          this.doVerticalBar();
          this.i++;
          break;
        case ch(')'):
          this.doRightParen();
          this.i++;
          break;
        case ch('^'):
          this.pushSimpleOp(this.flags & Flag.OneLine ? Op.BeginText : Op.BeginLine);
          this.i++;
          break;
        case ch('$'):
          if (this.flags & Flag.OneLine) this.pushRegexp(newRe(Op.EndText, this.flags | Flag.WasDollar));
          else this.pushSimpleOp(Op.EndLine);
          this.i++;
          break;
        case ch('.'):
          this.pushDot();
          this.i++;
          break;
        case ch('['):
          this.pushRegexp(this.parseCharClass());
          break;
        case ch('*'):
        case ch('+'):
        case ch('?'): {
          const op = c === ch('*') ? Op.Star : c === ch('+') ? Op.Plus : Op.Quest;
          this.i++;
          const nongreedy = t[this.i] === ch('?');
          if (nongreedy) this.i++;
          if (lastUnary) unexpected('repetition of a repetition');
          this.pushRepeatOp(op, nongreedy);
          unary = true;
          break;
        }
        case ch('{'): {
          const rep = this.maybeParseRepetition();
          if (!rep) {
            this.pushLiteral(ch('{'));
            this.i++;
            break;
          }
          const nongreedy = t[this.i] === ch('?');
          if (nongreedy) this.i++;
          if (lastUnary) unexpected('repetition of a repetition');
          this.pushRepetition(rep.min, rep.max, nongreedy);
          unary = true;
          break;
        }
        case ch('\\'):
          this.parseBackslash();
          break;
        default:
          this.pushLiteral(c);
          this.i++;
      }
      lastUnary = unary;
    }
    return this.doFinish();
  }

  // ----------------------------------------------------------------------------------------------
  // Stack operations (RE2's ParseState)

  private isMarker(op: number): boolean {
    return op >= Op.LeftParen;
  }

  private pushRegexp(node: Re): void {
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

  private pushSimpleOp(op: number): void {
    this.pushRegexp(newRe(op, this.flags));
  }

  private pushLiteral(r: number): void {
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

  private pushDot(): void {
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

  private pushRepeatOp(op: number, nongreedy: boolean): void {
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

  private pushRepetition(min: number, max: number, nongreedy: boolean): void {
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

  private doLeftParen(): void {
    const re = newRe(Op.LeftParen, this.flags);
    re.cap = ++this.ncap;
    this.pushRegexp(re);
  }

  private doLeftParenNoCapture(): void {
    const re = newRe(Op.LeftParen, this.flags);
    re.cap = -1;
    this.pushRegexp(re);
  }

  private doVerticalBar(): void {
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

  private doRightParen(): void {
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

  private doFinish(): Re {
    this.doAlternation();
    const re = this.top;
    if (!re || re.down) unexpected('missing )');
    this.top = undefined;
    return finishedNode(re);
  }

  private doConcatenation(): void {
    const r1 = this.top;
    if (!r1 || this.isMarker(r1.op)) this.pushRegexp(newRe(Op.EmptyMatch, this.flags));
    this.doCollapse(Op.Concat);
  }

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

  // ----------------------------------------------------------------------------------------------
  // Lexical pieces

  private parsePerlFlags(): void {
    const t = this.t;
    const i = this.i;
    const rem = t.length - i;
    const lookAround =
      (rem > 3 && (t[i + 2] === ch('=') || t[i + 2] === ch('!'))) ||
      (rem > 4 && t[i + 2] === ch('<') && (t[i + 3] === ch('=') || t[i + 3] === ch('!')));
    if (lookAround) unexpected('look-around');
    const named =
      (rem > 4 && t[i + 2] === ch('P') && t[i + 3] === ch('<')) || (rem > 3 && t[i + 2] === ch('<'));
    if (named) {
      const begin = t[i + 2] === ch('P') ? 4 : 3;
      const end = t.indexOf(ch('>'), i + begin);
      if (end < 0) unexpected('capture name');
      this.doLeftParen();
      this.i = end + 1;
      return;
    }
    this.i += 2;
    let negated = false;
    let sawFlags = false;
    let nflags = this.flags;
    for (;;) {
      const c = t[this.i++];
      if (c === undefined) unexpected('end of flags');
      if (c === ch('i')) {
        sawFlags = true;
        nflags = negated ? nflags & ~Flag.FoldCase : nflags | Flag.FoldCase;
      } else if (c === ch('m')) {
        sawFlags = true;
        nflags = negated ? nflags | Flag.OneLine : nflags & ~Flag.OneLine;
      } else if (c === ch('s')) {
        sawFlags = true;
        nflags = negated ? nflags & ~Flag.DotNL : nflags | Flag.DotNL;
      } else if (c === ch('U')) {
        sawFlags = true;
        nflags = negated ? nflags & ~Flag.NonGreedy : nflags | Flag.NonGreedy;
      } else if (c === ch('-')) {
        if (negated) unexpected('flags');
        negated = true;
        sawFlags = false;
      } else if (c === ch(':')) {
        this.doLeftParenNoCapture();
        break;
      } else if (c === ch(')')) {
        break;
      } else {
        unexpected('flag');
      }
    }
    if (negated && !sawFlags) unexpected('flags');
    this.flags = nflags;
  }

  /** `{n}`, `{n,}` or `{n,m}` at the cursor, or undefined when it is a literal `{`. */
  private maybeParseRepetition(): { min: number; max: number } | undefined {
    const t = this.t;
    let i = this.i + 1;
    const integer = (): number | undefined => {
      if (!isDigit(t[i])) return undefined;
      if (t[i] === ch('0') && isDigit(t[i + 1])) return undefined;
      let n = 0;
      while (isDigit(t[i])) {
        if (n >= 100_000_000) return undefined;
        n = n * 10 + t[i] - 0x30;
        i++;
      }
      return n;
    };
    const min = integer();
    if (min === undefined || i >= t.length) return undefined;
    let max = min;
    if (t[i] === ch(',')) {
      i++;
      if (i >= t.length) return undefined;
      if (t[i] === ch('}')) {
        max = -1;
      } else {
        const m = integer();
        if (m === undefined) return undefined;
        max = m;
      }
    }
    if (t[i] !== ch('}')) return undefined;
    this.i = i + 1;
    return { min, max };
  }

  private parseBackslash(): void {
    const t = this.t;
    const next = t[this.i + 1];
    if (next === ch('b') || next === ch('B')) {
      this.pushSimpleOp(next === ch('b') ? Op.WordBoundary : Op.NoWordBoundary);
      this.i += 2;
      return;
    }
    if (next === ch('A') || next === ch('z') || next === ch('C')) {
      this.pushSimpleOp(next === ch('A') ? Op.BeginText : next === ch('z') ? Op.EndText : Op.AnyByte);
      this.i += 2;
      return;
    }
    if (next === ch('Q')) {
      this.i += 2;
      while (this.i < t.length) {
        if (t[this.i] === ch('\\') && t[this.i + 1] === ch('E')) {
          this.i += 2;
          break;
        }
        this.pushLiteral(t[this.i++]);
      }
      return;
    }
    if (next === ch('p') || next === ch('P')) {
      const cc = new RuneSet();
      this.parseUnicodeGroup(cc);
      this.pushRegexp(buildingClass(cc, this.flags & ~Flag.FoldCase));
      return;
    }
    const perl = perlGroup(next);
    if (perl) {
      const cc = new RuneSet();
      addGroup(cc, perl, perl.negated, this.foldMode());
      this.pushRegexp(buildingClass(cc, this.flags & ~Flag.FoldCase));
      this.i += 2;
      return;
    }
    this.pushLiteral(this.parseEscape());
  }

  /** `\p{Any}`-style groups; only Any is known here (the others need Unicode tables). */
  private parseUnicodeGroup(cc: RuneSet): void {
    const t = this.t;
    let negated = t[this.i + 1] === ch('P');
    this.i += 2;
    let name: number[];
    if (t[this.i] !== ch('{')) {
      name = [t[this.i++]];
    } else {
      const end = t.indexOf(ch('}'), this.i);
      if (end < 0) unexpected('Unicode class');
      name = t.slice(this.i + 1, end);
      this.i = end + 1;
    }
    if (name[0] === ch('^')) {
      negated = !negated;
      name = name.slice(1);
    }
    if (String.fromCodePoint(...name) !== 'Any') {
      throw new Re2Unsupported('Unicode classes (\\p{...})');
    }
    addGroup(cc, ANY_GROUP, negated, this.foldMode());
  }

  /** One escaped rune: octal, hex, control letters or escaped punctuation (RE2's ParseEscape). */
  private parseEscape(): number {
    const t = this.t;
    const start = this.i;
    const bad = (): never => {
      throw new Re2SyntaxError(`invalid escape sequence: ${this.text(start, this.i)}`);
    };
    this.i++;
    const c = t[this.i++];
    if (c === undefined) unexpected('trailing \\');
    if (c >= ch('1') && c <= ch('7') && !isOctal(t[this.i])) bad();
    if (c >= ch('0') && c <= ch('7')) {
      let code = c - 0x30;
      for (let k = 0; k < 2 && isOctal(t[this.i]); k++) code = code * 8 + t[this.i++] - 0x30;
      if (code > this.runeMax) bad();
      return code;
    }
    if (c === ch('x')) {
      const x = t[this.i++];
      if (x === ch('{')) {
        let code = 0;
        let digits = 0;
        while (isHex(t[this.i])) {
          code = code * 16 + parseInt(String.fromCharCode(t[this.i++]), 16);
          digits++;
          if (code > this.runeMax) bad();
        }
        if (t[this.i] !== ch('}') || digits === 0) bad();
        this.i++;
        return code;
      }
      const y = t[this.i++];
      if (!isHex(x) || !isHex(y)) bad();
      return parseInt(String.fromCharCode(x, y), 16);
    }
    const controls: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, a: 0x07, f: 0x0c, v: 0x0b };
    const control = controls[String.fromCodePoint(c)];
    if (control !== undefined) return control;
    if (c < 0x80 && !isAlnum(c)) return c;
    return bad();
  }

  /** The pattern text between two cursor positions. */
  private text(from: number, to: number): string {
    const runes = this.t.slice(from, to);
    return this.latin1 ? Buffer.from(runes).toString('utf8') : String.fromCodePoint(...runes);
  }

  private parseCharClass(): Re {
    const t = this.t;
    const fold = this.foldMode();
    const cc = new RuneSet();
    this.i++;
    let negated = false;
    if (t[this.i] === ch('^')) {
      negated = true;
      this.i++;
    }
    let first = true;
    while (this.i < t.length && (t[this.i] !== ch(']') || first)) {
      first = false;
      const rem = t.length - this.i;
      if (rem > 2 && t[this.i] === ch('[') && t[this.i + 1] === ch(':')) {
        const group = this.maybeParsePosixName();
        if (group) {
          addGroup(cc, group, group.negated, fold);
          continue;
        }
      }
      if (rem > 2 && t[this.i] === ch('\\') && (t[this.i + 1] === ch('p') || t[this.i + 1] === ch('P'))) {
        this.parseUnicodeGroup(cc);
        continue;
      }
      const perl = t[this.i] === ch('\\') ? perlGroup(t[this.i + 1]) : undefined;
      if (perl) {
        addGroup(cc, perl, perl.negated, fold);
        this.i += 2;
        continue;
      }
      const lo = this.parseClassChar();
      let hi = lo;
      if (t.length - this.i >= 2 && t[this.i] === ch('-') && t[this.i + 1] !== ch(']')) {
        this.i++;
        hi = this.parseClassChar();
        if (hi < lo) unexpected('class range');
      }
      cc.addRangeFlags(lo, hi, fold);
    }
    if (this.i >= t.length) unexpected('missing ]');
    this.i++;
    if (negated) cc.negate();
    return buildingClass(cc, this.flags & ~Flag.FoldCase);
  }

  private parseClassChar(): number {
    if (this.i >= this.t.length) unexpected('missing ]');
    if (this.t[this.i] === ch('\\')) return this.parseEscape();
    return this.t[this.i++];
  }

  /** `[:name:]` at the cursor, consumed when it names a POSIX class. */
  private maybeParsePosixName(): RuneGroup | undefined {
    const t = this.t;
    let q = this.i + 2;
    while (q <= t.length - 2 && !(t[q] === ch(':') && t[q + 1] === ch(']'))) q++;
    if (q > t.length - 2) return undefined;
    const group = posixGroup(String.fromCodePoint(...t.slice(this.i + 2, q)));
    if (!group) unexpected('POSIX class');
    this.i = q + 2;
    return group;
  }
}

/** The Perl class `\\c` names, if any. */
function perlGroup(c: number | undefined): RuneGroup | undefined {
  if (c === undefined) return undefined;
  const name = String.fromCodePoint(c);
  return Object.prototype.hasOwnProperty.call(PERL_GROUPS, name) ? PERL_GROUPS[name] : undefined;
}

function buildingClass(cc: RuneSet, flags: number): Re {
  const re = charClass(cc, flags);
  re.building = true;
  return re;
}
