/**
 * A fast reader for the plain subset of YAML that Kubernetes manifests are almost always written
 * in: block maps and sequences indented with spaces, one-line plain and quoted scalars, `{}` and
 * `[]`, comments and `---` between documents. It returns exactly what the full parser (parse.ts,
 * the yaml package under the YAML 1.1 schema) would return for such a text, or `undefined` the
 * moment it meets anything else, and the full parser then reads the file: anchors, tags, flow
 * collections, block and multi-line scalars, escapes, duplicate keys, scalars whose YAML 1.1
 * type is not obvious (`yes`, `0755`, `1.5`, dates other than the RFC 3339 form) and every
 * syntax error. So the fast path never decides an error message and never resolves a scalar
 * differently; it only skips the cost of the full parser's syntax tree (docs/architecture.md
 * §10.1). Property tests compare both on generated manifests.
 */

/** What the reader gave up on: the caller uses the full parser. */
class NotPlain extends Error {}
const NOT_PLAIN = new NotPlain();

/** Nesting deeper than this is left to the full parser (its limits and messages apply). */
const MAX_DEPTH = 64;

/** Plain words the YAML 1.1 schema reads as booleans or null, in any case: left to the full parser. */
const SPECIAL_WORDS = new Set(['y', 'n', 'yes', 'no', 'on', 'off', 'true', 'false', 'null']);
/** The longest of SPECIAL_WORDS: a longer word is none of them, without lower-casing it. */
const SPECIAL_WORD_MAX_LENGTH = 5;

/** Whether `word` is one of SPECIAL_WORDS in any case; the length test first, as nearly no word is. */
function isSpecialWord(word: string): boolean {
  return word.length <= SPECIAL_WORD_MAX_LENGTH && SPECIAL_WORDS.has(word.toLowerCase());
}

/** A plain key or string: starts with a letter, `_` or `/`, then no character YAML treats specially. */
const PLAIN_KEY = /^[A-Za-z_/][A-Za-z0-9_./-]*$/;
const PLAIN_START = /^[A-Za-z_/]/;
/** Decimal integers that are safe JavaScript numbers, without the 1.1 schema's octal or `_` forms. */
const DECIMAL_INT = /^-?[1-9][0-9]{0,14}$/;
/** Dotted digit groups with two or more dots (addresses, versions): strings under the 1.1 schema. */
const DOTTED_DIGITS = /^[0-9]+(?:\.[0-9]+){2,}$/;
/** The RFC 3339 UTC form Kubernetes writes timestamps in. */
const UTC_TIMESTAMP = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z$/;

interface Line {
  indent: number;
  /** The line without its indentation. */
  text: string;
}

/**
 * The documents of `content` (one value per document, in order, empty documents included as
 * null), or undefined when the text is not in the plain subset.
 */
export function parsePlainYaml(content: string): unknown[] | undefined {
  try {
    return parseStream(content);
  } catch (err) {
    if (err === NOT_PLAIN) return undefined;
    throw err;
  }
}

function parseStream(content: string): unknown[] {
  if (content.includes('\t') || content.includes('\r') || content.charCodeAt(0) === 0xfeff) throw NOT_PLAIN;
  const documents: Line[][] = [];
  let current: Line[] = [];
  let started = false;
  for (const raw of content.split('\n')) {
    let indent = 0;
    while (raw.charCodeAt(indent) === 32) indent++;
    const text = raw.slice(indent).trimEnd();
    if (text === '' || text.startsWith('#')) continue;
    if (indent === 0 && (text.startsWith('---') || text.startsWith('...') || text.startsWith('%'))) {
      if (text !== '---') throw NOT_PLAIN;
      // The full parser opens a document at the first `---` and at every one after content.
      if (started) documents.push(current);
      current = [];
      started = true;
      continue;
    }
    started = true;
    current.push({ indent, text });
  }
  if (started) documents.push(current);
  return documents.map((lines) => {
    // Documents without content are numbered differently by the full parser: leave them to it.
    if (lines.length === 0) throw NOT_PLAIN;
    const reader = new BlockReader(lines);
    const value = reader.block(0, 0);
    if (!reader.done()) throw NOT_PLAIN;
    return value;
  });
}

class BlockReader {
  private i = 0;

  constructor(private readonly lines: Line[]) {}

  done(): boolean {
    return this.i >= this.lines.length;
  }

  /** The block collection starting at the current line, which must be indented at least `min`. */
  block(min: number, depth: number): unknown {
    if (depth > MAX_DEPTH) throw NOT_PLAIN;
    const line = this.lines[this.i];
    if (!line || line.indent < min) throw NOT_PLAIN;
    return isSeqItem(line.text) ? this.seq(line.indent, depth) : this.map(line.indent, depth);
  }

  private map(indent: number, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (let line = this.lines[this.i]; line && line.indent === indent; line = this.lines[this.i]) {
      if (isSeqItem(line.text)) throw NOT_PLAIN;
      const { key, rest } = splitKey(line.text);
      // A repeated key is one `out` already has (every key set here is its own property).
      if (key === '__proto__' || Object.hasOwn(out, key)) throw NOT_PLAIN;
      this.i++;
      out[key] = this.valueAfterKey(indent, rest, depth);
    }
    this.endOfCollection(indent);
    return out;
  }

  private seq(indent: number, depth: number): unknown[] {
    const out: unknown[] = [];
    for (let line = this.lines[this.i]; line && line.indent === indent; line = this.lines[this.i]) {
      if (!isSeqItem(line.text)) throw NOT_PLAIN;
      let offset = 1;
      while (line.text.charCodeAt(offset) === 32) offset++;
      const rest = line.text.slice(offset);
      if (rest === '' || rest.startsWith('#')) {
        this.i++;
        out.push(this.nested(indent, depth));
      } else if (isSeqItem(rest)) {
        throw NOT_PLAIN;
      } else if (looksLikeKey(rest)) {
        // A map that starts on the item's line: its keys line up with the first one.
        this.lines[this.i] = { indent: indent + offset, text: rest };
        out.push(this.map(indent + offset, depth + 1));
      } else {
        this.i++;
        out.push(inlineValue(rest));
        this.noNestedLines(indent);
      }
    }
    this.endOfCollection(indent);
    return out;
  }

  /** The value of a key whose line continues with `rest`. */
  private valueAfterKey(indent: number, rest: string, depth: number): unknown {
    if (rest === '' || rest.startsWith('#')) {
      const next = this.lines[this.i];
      // A sequence may sit at its key's own indentation.
      if (next && next.indent === indent && isSeqItem(next.text)) return this.seq(indent, depth + 1);
      return this.nested(indent, depth);
    }
    const value = inlineValue(rest);
    this.noNestedLines(indent);
    return value;
  }

  /** The block nested below a line indented `indent`, or null when none follows. */
  private nested(indent: number, depth: number): unknown {
    const next = this.lines[this.i];
    if (!next || next.indent <= indent) return null;
    return this.block(indent + 1, depth + 1);
  }

  /** A scalar's line must not be followed by more-indented lines (a multi-line scalar). */
  private noNestedLines(indent: number): void {
    const next = this.lines[this.i];
    if (next && next.indent > indent) throw NOT_PLAIN;
  }

  /** A collection ends where the indentation drops; a deeper line there is not plain YAML. */
  private endOfCollection(indent: number): void {
    const next = this.lines[this.i];
    if (next && next.indent > indent) throw NOT_PLAIN;
  }
}

function isSeqItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

/** Whether a sequence item's text starts a map (`key:` or `key: value`). */
function looksLikeKey(text: string): boolean {
  const colon = text.indexOf(':');
  if (colon < 0) return false;
  return (
    colon === text.length - 1 ||
    text.charCodeAt(colon + 1) === 32 ||
    text.startsWith('"') ||
    text.startsWith("'")
  );
}

/** Splits `key: rest` (rest without leading spaces); anything but a plain or simple quoted key gives up. */
function splitKey(text: string): { key: string; rest: string } {
  let key: string;
  let after: number;
  const q = text.charCodeAt(0);
  if (q === 34 /* " */ || q === 39 /* ' */) {
    const close = text.indexOf(text[0], 1);
    if (close < 0) throw NOT_PLAIN;
    key = text.slice(1, close);
    if (key.includes('\\') || key.includes("'") || key.includes('"')) throw NOT_PLAIN;
    after = close + 1;
  } else {
    const colon = text.indexOf(':');
    if (colon <= 0) throw NOT_PLAIN;
    key = text.slice(0, colon);
    if (!PLAIN_KEY.test(key) || isSpecialWord(key)) throw NOT_PLAIN;
    after = colon;
  }
  if (text.charCodeAt(after) !== 58 /* : */) throw NOT_PLAIN;
  const rest = text.slice(after + 1);
  if (rest !== '' && rest.charCodeAt(0) !== 32) throw NOT_PLAIN;
  return { key, rest: rest.trimStart() };
}

/** A value written on its key's or item's line. */
function inlineValue(text: string): unknown {
  const c = text.charCodeAt(0);
  if (c === 34 /* " */) {
    const close = text.indexOf('"', 1);
    if (close < 0 || text.slice(1, close).includes('\\')) throw NOT_PLAIN;
    onlyComment(text.slice(close + 1));
    return text.slice(1, close);
  }
  if (c === 39 /* ' */) {
    let close = text.indexOf("'", 1);
    while (close >= 0 && text.charCodeAt(close + 1) === 39) close = text.indexOf("'", close + 2);
    if (close < 0) throw NOT_PLAIN;
    onlyComment(text.slice(close + 1));
    return text.slice(1, close).replaceAll("''", "'");
  }
  if (text.startsWith('{}') || text.startsWith('[]')) {
    onlyComment(text.slice(2));
    return text.startsWith('{}') ? {} : [];
  }
  return plainScalar(text);
}

/** What may follow a quoted scalar or `{}` on its line: nothing, or a comment. */
function onlyComment(rest: string): void {
  if (rest !== '' && !/^ +#/.test(rest)) throw NOT_PLAIN;
}

/** A plain scalar's value, when its YAML 1.1 type is plain to see; gives up otherwise. */
function plainScalar(text: string): unknown {
  const comment = text.indexOf(' #');
  const s = (comment >= 0 ? text.slice(0, comment) : text).trimEnd();
  if (s.includes(': ') || s.endsWith(':')) throw NOT_PLAIN;
  if (s === '~' || s === 'null' || s === 'Null' || s === 'NULL') return null;
  if (s === 'true' || s === 'True' || s === 'TRUE') return true;
  if (s === 'false' || s === 'False' || s === 'FALSE') return false;
  // Most scalars are words: one that starts as no number can is decided without the number tests.
  if (PLAIN_START.test(s)) {
    if (isSpecialWord(s)) throw NOT_PLAIN;
    return s;
  }
  if (s === '0' || DECIMAL_INT.test(s)) return Number(s);
  if (DOTTED_DIGITS.test(s)) return s;
  if (UTC_TIMESTAMP.test(s)) return utcTimestamp(s);
  throw NOT_PLAIN;
}

/**
 * A `YYYY-MM-DDTHH:MM:SSZ` scalar: the full parser reads a timestamp and parse.ts writes it back
 * in this same form, so the text stands for itself when it is a real instant; one that is not
 * (a 13th month) is left to the full parser.
 */
function utcTimestamp(s: string): string {
  const m = UTC_TIMESTAMP.exec(s)!;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number);
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  if (new Date(ms).toISOString().replace(/\.000Z$/, 'Z') !== s) throw NOT_PLAIN;
  return s;
}
