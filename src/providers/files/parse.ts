/**
 * Parsing of one file's text into the object-shaped values it holds: YAML streams (every
 * document) and JSON, with `kind: List` expanded into its items. Nothing here interprets the
 * values; the API-server imitation (apiserver.ts) does.
 *
 * Parsing is linear in the size of the text. The yaml package's own duplicate-key check compares
 * every new key with every earlier key of its map (16k keys took seconds), so it is turned off
 * (`uniqueKeys: false`) and duplicateKey() checks each map with a Set instead, with the same
 * notion of equality. Aliases are bounded by the package's alias-count guard, so a small file
 * cannot expand into a huge value. Error messages give line and column but never quote the
 * file, which may hold keys.
 */
import type { CST, Document, Node as YamlNode } from 'yaml';
import type * as Yaml from 'yaml';
import { parsePlainYaml } from './fast-yaml';
import { kubernetesYaml11Tags } from './yaml-11-tags';

/** One object-shaped value found in a file, before normalisation. */
export interface RawEntry {
  document?: number;
  /** Position inside a `kind: List`, for messages. */
  item?: number;
  value: unknown;
  /**
   * Set when the value came from JSON or the plain YAML path (no aliases, so it shares nothing
   * with another value): the length of the whole text it came from, a bound on its size.
   */
  unsharedTextLength?: number;
}

export interface ParsedFile {
  entries: RawEntry[];
  /** Syntax errors; any of them makes the file "broken". */
  errors: { document?: number; message: string }[];
}

let yamlPackage: typeof Yaml | undefined;

/**
 * The yaml package, loaded on first use. Nearly every file takes the plain path (fast-yaml.ts),
 * so a parse worker that never meets another file never loads the package: its loading was a
 * fifth of a second of each worker's start, on cores the main thread needs for its own modules
 * then (docs/architecture.md §10.4). Synchronous, as parsing is.
 */
export function yamlParser(): typeof Yaml {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  yamlPackage ??= require('yaml') as typeof Yaml;
  return yamlPackage;
}

/** How many alias expansions one document may make (the yaml package's guard). */
const MAX_ALIAS_COUNT = 100;
/** Errors quoted per document; the rest are counted. */
const MAX_ERRORS_SHOWN = 3;
/**
 * A larger YAML document is not parsed: kube-apiserver refuses request bodies over 3 MiB
 * (MaxRequestBodyBytes), which is what `kubectl apply` of that document would meet. This also
 * bounds the parser's memory, which is many times the size of the text.
 */
export const MAX_DOCUMENT_BYTES = 3 * 1024 * 1024;

type YamlError = { message: string; pos: [number, number] };

/** One step of composeDocuments(): a document, a document too large to compose, or stream errors. */
type Composed =
  | { index: number; doc: Document.Parsed }
  | { index: number; tooLarge: number }
  | { streamErrors: readonly YamlError[] };

/**
 * Parses one file into raw entries. YAML uses the 1.1 schema, as Kubernetes' own YAML decoder
 * does (so `on`/`yes` are booleans there too); timestamps come back as RFC 3339 strings.
 * `fastPath: false` always uses the full parser (tests compare the two).
 */
export function parseFile(
  file: string,
  content: string,
  maxDocumentBytes = MAX_DOCUMENT_BYTES,
  { fastPath = true }: { fastPath?: boolean } = {},
): ParsedFile {
  const entries: RawEntry[] = [];
  const errors: ParsedFile['errors'] = [];
  const pushValue = (value: unknown, document: number | undefined, unsharedTextLength?: number) => {
    const bound = unsharedTextLength === undefined ? {} : { unsharedTextLength };
    if (isList(value)) {
      (value.items as unknown[]).forEach((item, i) =>
        entries.push({ document, item: i, value: item, ...bound }),
      );
    } else {
      entries.push({ document, value, ...bound });
    }
  };
  if (file.toLowerCase().endsWith('.json')) {
    if (content.trim() === '') return { entries, errors };
    try {
      pushValue(JSON.parse(content), undefined, content.length);
    } catch (err) {
      // V8 quotes the text around the error ("…" is not valid JSON): leave the quote out.
      const message = (err as Error).message.replace(/, .*is not valid JSON$/s, ' (not valid JSON)');
      errors.push({ message: `invalid JSON: ${message}` });
    }
    return { entries, errors };
  }
  // Plain manifests (nearly all) skip the full parser; it alone reads anything else and reports
  // every error (fast-yaml.ts).
  const plain = fastPath && content.length <= maxDocumentBytes ? parsePlainYaml(content) : undefined;
  if (plain) {
    plain.forEach((value, index) => {
      if (value !== null && value !== undefined) pushValue(value, index, content.length);
    });
    return { entries, errors };
  }
  const lines = new (yamlParser().LineCounter)();
  const at = (offset: number): string => {
    const { line, col } = lines.linePos(offset);
    return ` at line ${line}, column ${col}`;
  };
  const describe = (list: readonly YamlError[]): string => {
    const shown = list.slice(0, MAX_ERRORS_SHOWN).map((e) => e.message + (e.pos[0] >= 0 ? at(e.pos[0]) : ''));
    const more = list.length - shown.length;
    return `invalid YAML: ${shown.join('; ')}${more > 0 ? ` (and ${more} more)` : ''}`;
  };
  try {
    for (const step of composeDocuments(content, lines, maxDocumentBytes)) {
      if ('streamErrors' in step) {
        if (step.streamErrors.length > 0) errors.push({ message: describe(step.streamErrors) });
        continue;
      }
      const { index } = step;
      if ('tooLarge' in step) {
        errors.push({
          document: index,
          message: `Request entity too large: limit is ${maxDocumentBytes} (the document is ${step.tooLarge} bytes; not parsed)`,
        });
        continue;
      }
      const { doc } = step;
      if (doc.errors.length > 0) {
        errors.push({ document: index, message: describe(doc.errors) });
        continue;
      }
      try {
        const dup = duplicateKey(doc);
        if (dup) {
          const more = dup.count > 1 ? ` (and ${dup.count - 1} more)` : '';
          errors.push({
            document: index,
            message: `invalid YAML: Map keys must be unique: ${JSON.stringify(dup.key)}${at(dup.offset)}${more}`,
          });
          continue;
        }
        const value = yamlDates(doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), new WeakSet());
        if (value !== null && value !== undefined) pushValue(value, index); // else an empty document
      } catch (err) {
        errors.push({ document: index, message: `invalid YAML: ${(err as Error).message}` });
      }
    }
  } catch (err) {
    errors.push({ message: `invalid YAML: ${(err as Error).message}` });
  }
  return { entries, errors };
}

/**
 * Composes the documents of a YAML stream one at a time, so only one document's syntax tree is
 * in memory at once, and skips (reporting its size) any document whose text is longer than
 * `maxDocumentBytes` before composing it. Documents are numbered in stream order, skipped ones
 * included. A stream without documents yields its stream-level errors instead.
 */
function* composeDocuments(
  content: string,
  lines: Yaml.LineCounter,
  maxDocumentBytes: number,
): Generator<Composed> {
  const { Composer, Parser } = yamlParser();
  const parser = new Parser(lines.addNewLine);
  // logLevel 'error': the package's warnings (e.g. about collection keys) are not ours to print.
  const composer = new Composer({
    version: '1.1',
    uniqueKeys: false,
    logLevel: 'error',
    customTags: kubernetesYaml11Tags,
  });
  /** Indices of the documents handed to the composer and not yet yielded by it. */
  const composing: number[] = [];
  let count = 0;
  let pending: CST.Document | undefined;
  function* flush(end: number): Generator<Composed> {
    if (!pending) return;
    const doc = pending;
    pending = undefined;
    const index = count++;
    if (end - doc.offset > maxDocumentBytes) {
      yield { index, tooLarge: end - doc.offset };
      return;
    }
    composing.push(index);
    yield* feed(doc);
  }
  function* feed(token: CST.Token): Generator<Composed> {
    for (const doc of composer.next(token)) yield { index: composing.shift()!, doc };
  }
  for (const token of parser.parse(content)) {
    // A document's length is known once the next token starts.
    yield* flush(token.offset);
    if (token.type === 'document') pending = token;
    else yield* feed(token);
  }
  yield* flush(content.length);
  for (const doc of composer.end(false, content.length)) yield { index: composing.shift()!, doc };
  if (count === 0) yield { streamErrors: composer.streamInfo().errors };
}

/**
 * Finds keys repeated within one map of the document, in linear time: the first repeated key
 * (its text and offset) and how many repeats there are, or undefined. Two keys are the same
 * when both are scalars with the same resolved value (so `true` and `yes` collide under YAML
 * 1.1, `1` and `"1"` do not), which is the yaml package's own rule; collection and alias keys
 * never collide. Iterative, so deep nesting cannot exhaust the stack.
 */
export function duplicateKey(doc: Document): { key: string; offset: number; count: number } | undefined {
  const { isMap, isPair, isScalar, isSeq } = yamlParser();
  let first: { key: string; offset: number } | undefined;
  let count = 0;
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      const keys = new Set<unknown>();
      for (const pair of node.items) {
        const key = pair.key as YamlNode | null;
        if (isScalar(key) && !Number.isNaN(key.value)) {
          if (keys.has(key.value)) {
            count++;
            first ??= { key: String(key.source ?? key.value), offset: key.range?.[0] ?? -1 };
          } else keys.add(key.value);
        }
        stack.push(pair.key, pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
    } else if (isPair(node)) {
      stack.push(node.key, node.value);
    }
  }
  return first && { ...first, count };
}

function isList(v: unknown): v is { kind: string; items: unknown[] } {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return typeof o.kind === 'string' && /List$/.test(o.kind) && Array.isArray(o.items);
}

/**
 * Timestamps parsed by the YAML 1.1 schema back to the strings Kubernetes would hold. Values
 * shared through aliases are visited once.
 */
function yamlDates(v: unknown, seen: WeakSet<object>): unknown {
  if (v instanceof Date) {
    return Number.isNaN(v.getTime()) ? String(v) : v.toISOString().replace(/\.000Z$/, 'Z');
  }
  if (!v || typeof v !== 'object' || seen.has(v)) return v;
  seen.add(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = yamlDates(v[i], seen);
  } else {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = yamlDates(o[k], seen);
  }
  return v;
}
