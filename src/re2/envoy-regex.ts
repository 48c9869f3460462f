/**
 * Decides whether Envoy accepts a regular expression (a `safe_regex` in a route or header match)
 * the way Envoy 1.40 does, so that a regex Envoy would reject never reaches it: Envoy rejects the
 * whole RouteConfiguration it sits in, which every route on the listener shares
 * (docs/gateway-api.md §14, docs/security.md §5).
 *
 * Envoy 1.40 builds the regex with RE2's default options but for the encoding: Latin-1 (each byte
 * of the UTF-8 pattern is one rune) unless the runtime guard
 * `envoy.reloadable_features.re2_use_latin1_mode` is off, then UTF-8. It rejects the regex when RE2
 * reports an error or when RE2's ProgramSize() exceeds the runtime value
 * `re2.max_program_size.error_level` (100 by default). Convoy cannot see Envoy's runtime, so a
 * regex must pass in both encodings. Syntax is checked by RE2 itself (the re2-wasm package: an
 * older RE2, in UTF-8, which only makes it stricter, e.g. it lacks `(?<name>…)`), plus Latin-1's
 * own errors (no rune above U+00FF: `\x{100}`) found by this folder's parser. The program size is
 * computed by this folder's port of RE2's compiler (program-size.ts), which matches RE2's count
 * exactly or refuses (Unicode classes; case folding of non-ASCII letters in UTF-8).
 *
 * The check is bounded: patterns longer than {@link MAX_REGEX_BYTES} are refused before any work,
 * the size computation stops at {@link MAX_COMPILED_INSTRUCTIONS} instructions, and RE2 itself
 * only sees patterns whose program is known to fit or that fail to parse. Verdicts are memoized.
 */
import { re2ProgramSize, type Re2Encoding } from './program-size';
import { Re2SyntaxError } from './syntax-error';
import { Re2Unsupported } from './runes';
import { TooManyInstructions } from './compile';

/** Envoy's default `re2.max_program_size.error_level`: larger programs are rejected. */
export const ENVOY_MAX_PROGRAM_SIZE = 100;
/**
 * Longest pattern checked (UTF-8 bytes). A longer one is refused: every RE2 program that fits
 * Envoy's limit is far shorter, and the bound keeps the check fast.
 */
export const MAX_REGEX_BYTES = 1024;
/** Instructions compiled (before RE2's flattening) before the size computation gives up. */
export const MAX_COMPILED_INSTRUCTIONS = 2000;
const MEMO_ENTRIES = 10_000;

interface WrappedRe2 {
  ok(): boolean;
  error(): string;
  delete(): void;
}
interface Re2Wasm {
  WrappedRE2: new (pattern: string, ignoreCase: boolean, multiline: boolean, dotAll: boolean) => WrappedRe2;
}

const RE2_WASM = 're2-wasm/build/wasm/re2';
let wasm: Re2Wasm | undefined;

/**
 * RE2's error for the pattern, or undefined when RE2 accepts it. Uses re2-wasm's low-level
 * wrapper, which takes RE2 syntax as-is (its RE2 class would translate JavaScript syntax). The
 * flags (case-sensitive, one-line, dot without newline) give RE2's default options (UTF-8).
 * If the WASM instance aborts (out of memory), it is dropped and a fresh one loaded.
 */
export function re2Error(pattern: string): string | undefined {
  for (let attempt = 0; ; attempt++) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    wasm ??= require(RE2_WASM) as Re2Wasm;
    let re: WrappedRe2 | undefined;
    try {
      re = new wasm.WrappedRE2(pattern, false, false, false);
      return re.ok() ? undefined : re.error();
    } catch {
      wasm = undefined;
      delete require.cache[require.resolve(RE2_WASM)];
      if (attempt > 0) return 'RE2 could not compile it';
    } finally {
      try {
        re?.delete();
      } catch {
        // An aborted instance cannot free; it is dropped above.
      }
    }
  }
}

const memo = new Map<string, string | undefined>();

/**
 * Why Envoy would reject the regex (a sentence fragment such as "invalid escape sequence: \Z" or
 * "RE2 program size 1005 exceeds Envoy's limit of 100"), or undefined when Envoy accepts it.
 */
export function envoyRegexProblem(pattern: string): string | undefined {
  if (memo.has(pattern)) return memo.get(pattern);
  const problem = check(pattern);
  if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value!);
  memo.set(pattern, problem);
  return problem;
}

/**
 * The check, in an order that keeps RE2 (WASM) away from large programs: both program sizes are
 * computed first (bounded); RE2 only sees a pattern whose UTF-8 program (RE2 from npm compiles in
 * UTF-8) fits Envoy's limit, or that fails to parse before RE2 compiles anything. A pattern over
 * the limit is refused for its size even if RE2 would also find an error in it.
 */
function check(pattern: string): string | undefined {
  if (typeof pattern !== 'string' || pattern === '') return 'must not be empty';
  if (/\p{Cs}/u.test(pattern)) return 'is not valid Unicode';
  if (Buffer.byteLength(pattern, 'utf8') > MAX_REGEX_BYTES) return `is longer than ${MAX_REGEX_BYTES} bytes`;
  const utf8 = programSize(pattern, 'utf8');
  const latin1 = programSize(pattern, 'latin1');
  for (const r of [latin1, utf8]) if (r.kind === 'unsupported') return r.problem;
  if (utf8.kind === 'syntax') return re2Error(pattern) ?? utf8.problem;
  if (utf8.kind === 'size' && utf8.size <= ENVOY_MAX_PROGRAM_SIZE) {
    const error = re2Error(pattern);
    if (error !== undefined) return error;
  }
  // Envoy's default (Latin-1) first, then the UTF-8 mode it can be switched back to.
  if (latin1.kind !== 'size') return latin1.problem;
  if (latin1.size > ENVOY_MAX_PROGRAM_SIZE) return overLimit(latin1.size, 'latin1');
  if (utf8.kind !== 'size') return utf8.problem;
  if (utf8.size > ENVOY_MAX_PROGRAM_SIZE) return overLimit(utf8.size, 'utf8');
  return undefined;
}

function mode(encoding: Re2Encoding): string {
  return encoding === 'utf8' ? ' in UTF-8 mode' : '';
}

function overLimit(size: number, encoding: Re2Encoding): string {
  return `RE2 program size${mode(encoding)} ${size} exceeds Envoy's limit of ${ENVOY_MAX_PROGRAM_SIZE}`;
}

type SizeResult =
  | { kind: 'size'; size: number }
  | { kind: 'syntax' | 'unsupported' | 'too-large' | 'unknown'; problem: string };

/** The program size in one encoding, or why there is none (with a problem sentence). */
function programSize(pattern: string, encoding: Re2Encoding): SizeResult {
  try {
    return { kind: 'size', size: re2ProgramSize(pattern, encoding, MAX_COMPILED_INSTRUCTIONS) };
  } catch (e) {
    if (e instanceof TooManyInstructions) {
      const problem = `RE2 program size${mode(encoding)} is over Envoy's limit of ${ENVOY_MAX_PROGRAM_SIZE} (compilation stopped at ${MAX_COMPILED_INSTRUCTIONS} instructions)`;
      return { kind: 'too-large', problem };
    }
    if (e instanceof Re2Unsupported) {
      return {
        kind: 'unsupported',
        problem: `uses ${e.message}, whose RE2 program size Convoy cannot compute`,
      };
    }
    // A pattern this folder's parser finds malformed: its message is RE2's wording for the errors
    // RE2 from npm cannot see (Latin-1 has no rune above U+00FF: \x{100}); otherwise RE2 says why.
    if (e instanceof Re2SyntaxError) return { kind: 'syntax', problem: e.message };
    // Anything else thrown is a gap in the port; the regex is refused all the same.
    return { kind: 'unknown', problem: `Convoy cannot compute its RE2 program size${mode(encoding)}` };
  }
}
