/**
 * RE2's ProgramSize() for a pattern compiled with Envoy's options, in Latin-1 or UTF-8, computed
 * without RE2: the pattern is parsed, its literal prefix after `^` split off (RE2 matches that part
 * separately), simplified, compiled, optimized and flattened exactly as RE2 2024-07-02 (Envoy
 * 1.40's RE2) does. test/re2 compares the result with the sizes the real Envoy reports.
 *
 * Work is bounded: past `maxInstructions` compiled instructions (before flattening) or as many
 * tree visits, it throws TooManyInstructions rather than finish; patterns needing Unicode tables
 * throw Re2Unsupported; patterns it finds malformed throw Re2SyntaxError.
 */
import { compileProgram } from './compile';
import { flattenedSize, optimize } from './flatten';
import { parseRe2 } from './parse';
import { concat, Flag, newRe, Op, type Re } from './regexp';
import { simplifyRe2 } from './simplify';

/** The part RE2 compiles after removing a required literal prefix (RE2's RequiredPrefix). */
function withoutRequiredPrefix(re: Re): Re {
  if (re.op !== Op.Concat) return re;
  let i = 0;
  while (i < re.subs.length && re.subs[i].op === Op.BeginText) i++;
  if (i === 0 || i >= re.subs.length) return re;
  const lit = re.subs[i].op;
  if (lit !== Op.Literal && lit !== Op.LiteralString) return re;
  i++;
  return i < re.subs.length ? concat(re.subs.slice(i), re.flags) : newRe(Op.EmptyMatch, re.flags);
}

/** The encodings Envoy may compile with: Latin-1 by default since 1.40, UTF-8 before (or when reverted). */
export type Re2Encoding = 'latin1' | 'utf8';

/**
 * RE2's ProgramSize() for a pattern (a well-formed string) compiled in the given encoding; see the
 * module comment for what it throws. In Latin-1, RE2 reads each byte of the UTF-8 pattern Envoy
 * holds as one rune.
 */
export function re2ProgramSize(pattern: string, encoding: Re2Encoding, maxInstructions: number): number {
  const latin1 = encoding === 'latin1';
  const runes = latin1 ? [...Buffer.from(pattern, 'utf8')] : Array.from(pattern, (c) => c.codePointAt(0)!);
  const tree = withoutRequiredPrefix(parseRe2(runes, latin1));
  const program = compileProgram(simplifyRe2(tree), maxInstructions, (tree.flags & Flag.Latin1) !== 0);
  optimize(program);
  return flattenedSize(program);
}
