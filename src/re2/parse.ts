/**
 * Parses an RE2 pattern into the tree RE2's parser builds for Envoy's options, including the
 * parser's own rewrites (literal strings, single-rune classes, squashed repetition operators,
 * factored alternations), since they change the compiled program's size.
 *
 * It follows the grammar of a valid pattern and throws Re2SyntaxError on anything else, with RE2's
 * wording for escapes (the error Latin-1 adds, runes above U+00FF, is only found here); RE2 itself
 * gives the message for other errors.
 *
 * This file reads the pattern (lexical pieces, flags, escapes, classes); parse-stack.ts holds the
 * stack the tree is built on and its rewrites.
 */
import {
  addGroup,
  PERL_GROUPS,
  posixGroup,
  Re2Unsupported,
  RUNE_MAX,
  RuneSet,
  type FoldMode,
  type RuneGroup,
} from './runes';
import { Flag, newRe, Op, type Re } from './regexp';
import { buildingClass, ParseStack } from './parse-stack';
import { Re2SyntaxError, unexpected } from './syntax-error';

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

/**
 * Parses a valid RE2 pattern the way RE2::Init does with Envoy's options. In Latin-1 mode the
 * pattern is given as bytes (RE2 reads each byte of Envoy's UTF-8 string as one Latin-1 rune), in
 * UTF-8 mode as code points.
 */
export function parseRe2(pattern: readonly number[], latin1: boolean): Re {
  return new Parser(pattern, latin1).parse();
}

/** Reads the pattern with a cursor and drives the parse stack (parse-stack.ts). */
class Parser extends ParseStack {
  private i = 0;

  constructor(
    private readonly t: readonly number[],
    latin1: boolean,
  ) {
    super(latin1);
  }

  /** How classes fold case under the current flags. */
  private foldMode(): FoldMode {
    if (!(this.flags & Flag.FoldCase)) return 'none';
    return this.latin1 ? 'latin1' : 'unicode';
  }

  /** Parses the whole pattern into its tree. */
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
  // Lexical pieces

  /**
   * Parses a `(?` group at the cursor: named captures, flag groups `(?i-s:` and bare flag changes
   * `(?i)`; look-arounds are refused as RE2 refuses them.
   */
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

  /** Parses an escape at the cursor: assertions, `\Q...\E`, Unicode and Perl classes, or one rune. */
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

  /** Parses a bracketed class `[...]` at the cursor, with POSIX, Perl and Unicode groups and ranges. */
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

  /** One rune of a bracketed class, escaped or not. */
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
