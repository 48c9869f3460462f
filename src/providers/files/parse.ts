/**
 * Parsing of one file's text into the object-shaped values it holds: YAML streams (every
 * document) and JSON, with `kind: List` expanded into its items. Nothing here interprets the
 * values; the API-server imitation (apiserver.ts) does.
 */
import { parseAllDocuments } from 'yaml';

/** One object-shaped value found in a file, before normalisation. */
export interface RawEntry {
  document?: number;
  /** Position inside a `kind: List`, for messages. */
  item?: number;
  value: unknown;
}

export interface ParsedFile {
  entries: RawEntry[];
  /** Syntax errors; any of them makes the file "broken". */
  errors: { document?: number; message: string }[];
}

/**
 * Parses one file into raw entries. YAML uses the 1.1 schema, as Kubernetes' own YAML decoder
 * does (so `on`/`yes` are booleans there too); timestamps come back as RFC 3339 strings.
 */
export function parseFile(file: string, content: string): ParsedFile {
  const entries: RawEntry[] = [];
  const errors: ParsedFile['errors'] = [];
  const pushValue = (value: unknown, document: number | undefined) => {
    if (isList(value)) {
      (value.items as unknown[]).forEach((item, i) => entries.push({ document, item: i, value: item }));
    } else {
      entries.push({ document, value });
    }
  };
  if (file.toLowerCase().endsWith('.json')) {
    if (content.trim() === '') return { entries, errors };
    try {
      pushValue(JSON.parse(content), undefined);
    } catch (err) {
      errors.push({ message: `invalid JSON: ${(err as Error).message}` });
    }
    return { entries, errors };
  }
  let docs;
  try {
    docs = parseAllDocuments(content, { version: '1.1', uniqueKeys: true, prettyErrors: true });
  } catch (err) {
    errors.push({ message: `invalid YAML: ${(err as Error).message}` });
    return { entries, errors };
  }
  if ('empty' in docs && docs.empty) {
    // No documents at all (empty file, comments only), possibly with stream-level errors.
    for (const e of docs.errors) errors.push({ message: `invalid YAML: ${e.message}` });
    return { entries, errors };
  }
  docs.forEach((doc, index) => {
    if (doc.errors.length > 0) {
      errors.push({
        document: index,
        message: `invalid YAML: ${doc.errors.map((e) => e.message).join('; ')}`,
      });
      return;
    }
    let value: unknown;
    try {
      value = yamlDates(doc.toJS({ maxAliasCount: 100 }));
    } catch (err) {
      errors.push({ document: index, message: `invalid YAML: ${(err as Error).message}` });
      return;
    }
    if (value === null || value === undefined) return; // empty document ("---" at the end)
    pushValue(value, index);
  });
  return { entries, errors };
}

function isList(v: unknown): v is { kind: string; items: unknown[] } {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return typeof o.kind === 'string' && /List$/.test(o.kind) && Array.isArray(o.items);
}

/** Timestamps parsed by the YAML 1.1 schema back to the strings Kubernetes would hold. */
function yamlDates(v: unknown): unknown {
  if (v instanceof Date) {
    return Number.isNaN(v.getTime()) ? String(v) : v.toISOString().replace(/\.000Z$/, 'Z');
  }
  if (Array.isArray(v)) return v.map(yamlDates);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = yamlDates(o[k]);
  }
  return v;
}
