/** The error the RE2 parser throws on a pattern it finds invalid. */

/** A pattern this parser finds invalid; RE2 itself gives the authoritative message. */
export class Re2SyntaxError extends Error {}

/** Throws the syntax error of an unexpected piece of the pattern. */
export function unexpected(what: string): never {
  throw new Re2SyntaxError(`unexpected ${what}`);
}
