/**
 * Decides whether Envoy accepts a regular expression (a `safe_regex` in a route or header match)
 * the way Envoy 1.40 does, so that a regex Envoy would reject never reaches it: Envoy rejects the
 * whole RouteConfiguration it sits in, which every route on the listener shares
 * (docs/gateway-api.md §14, docs/security.md §5).
 *
 * Envoy builds the regex with RE2's default options and rejects it when RE2 reports an error or
 * when RE2's ProgramSize() exceeds the runtime value `re2.max_program_size.error_level` (100 unless
 * the operator changed Envoy's runtime). Syntax is checked by RE2 itself (the re2-wasm package, an
 * older RE2 than Envoy's; the differences only make it stricter, e.g. it lacks `(?<name>…)`); the
 * program size is computed by this folder's port of RE2's compiler (program-size.ts), which
 * matches RE2's count exactly or refuses (Unicode classes, case folding of non-ASCII letters).
 *
 * The check is bounded: patterns longer than {@link MAX_REGEX_BYTES} are refused before any work,
 * the size computation stops at {@link MAX_COMPILED_INSTRUCTIONS} instructions, and RE2 itself
 * only sees patterns whose program is known to be small or that fail to parse. Verdicts are
 * memoized.
 */
import { re2ProgramSize, type Re2Encoding } from './program-size';
import { Re2SyntaxError } from './parse';
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
 * flags (case-sensitive, one-line, dot without newline) give RE2's default options, as Envoy uses.
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

function check(pattern: string): string | undefined {
  if (typeof pattern !== 'string' || pattern === '') return 'must not be empty';
  if (/\p{Cs}/u.test(pattern)) return 'is not valid Unicode';
  if (Buffer.byteLength(pattern, 'utf8') > MAX_REGEX_BYTES) return `is longer than ${MAX_REGEX_BYTES} bytes`;
  const latin1 = programSize(pattern, 'latin1');
  if (typeof latin1 === 'string') return latin1;
  const error = re2Error(pattern);
  if (error !== undefined) return error;
  if (latin1 > ENVOY_MAX_PROGRAM_SIZE)
    return `RE2 program size ${latin1} exceeds Envoy's limit of ${ENVOY_MAX_PROGRAM_SIZE}`;
  const utf8 = programSize(pattern, 'utf8');
  if (typeof utf8 === 'string') return utf8;
  if (utf8 > ENVOY_MAX_PROGRAM_SIZE) {
    return `RE2 program size in UTF-8 mode ${utf8} exceeds Envoy's limit of ${ENVOY_MAX_PROGRAM_SIZE}`;
  }
  return undefined;
}

/** The program size in one encoding, or why it cannot be had (a problem sentence). */
function programSize(pattern: string, encoding: Re2Encoding): number | string {
  const mode = encoding === 'utf8' ? ' in UTF-8 mode' : '';
  try {
    return re2ProgramSize(pattern, encoding, MAX_COMPILED_INSTRUCTIONS);
  } catch (e) {
    if (e instanceof TooManyInstructions) {
      return `RE2 program size${mode} is over Envoy's limit of ${ENVOY_MAX_PROGRAM_SIZE} (compilation stopped at ${MAX_COMPILED_INSTRUCTIONS} instructions)`;
    }
    if (e instanceof Re2Unsupported) return `uses ${e.message}, whose RE2 program size Convoy cannot compute`;
    // Malformed for this folder's parser: RE2 says why (it stops at the error, before compiling);
    // when it does not (the error is Latin-1's, like \x{100}), the parser's message stands.
    // Anything else thrown is a gap in the port; the regex is refused all the same.
    if (e instanceof Re2SyntaxError) return re2Error(pattern) ?? e.message;
    return `Convoy cannot compute its RE2 program size${mode}`;
  }
}
