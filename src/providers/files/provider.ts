/**
 * The file provider: Convoy's embedded default source of objects. It reads Kubernetes-shaped YAML
 * and JSON from a directory tree, fills in what an API server would (namespace, uid,
 * creationTimestamp, generation, Secret stringData), validates every object like a v1.6.1
 * cluster would, and applies the difference to the store after each rescan.
 *
 * Reliability rules (docs/architecture.md §10): bad input never crashes and never reaches Envoy.
 * A file that stops parsing, or an object that stops validating, keeps its last good version in
 * the store; the problem is logged and reported by problems(). Only a file that is deleted, or an
 * object removed from a file that is otherwise clean, deletes objects.
 *
 * Layout rules: *.yaml, *.yml and *.json anywhere below dir, in path order. Entries whose name
 * starts with "." are skipped, so editor swap files and the `..data`/`..2024_…` directories of a
 * mounted ConfigMap or Secret volume are not read twice (their visible symlinks are). Symlinks are
 * followed, with a guard against loops.
 */
import { createHash } from 'node:crypto';
import type { FSWatcher } from 'node:fs';
import { watch as fsWatch } from 'node:fs';
import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Logger } from '../../observability/logger';
import type { ConvoyMetrics } from '../../observability/metrics';
import type { KubeObject } from '../../store/objects';
import { CLUSTER_SCOPED_KINDS, WATCHED_KINDS, keyOf, objectNamespace } from '../../store/objects';
import type { ObjectStore } from '../../store/store';
import { apiGroupOf, groupOfApiVersion, validateObject } from '../../validation';
import { compareStrings } from '../../util/compare';

export interface FileProblem {
  /** Path relative to the provider's directory. */
  file: string;
  /** 0-based index of the YAML document in the file (absent for whole-file problems and JSON). */
  document?: number;
  kind?: string;
  name?: string;
  message: string;
}

export interface FileProviderOptions {
  dir: string;
  store: ObjectStore;
  logger: Logger;
  metrics?: ConvoyMetrics;
  /** Quiet time after the last filesystem event before rescanning. Default 100 ms. */
  debounceMs?: number;
  /**
   * Safety-net full rescan interval, for filesystems where events get lost (network mounts,
   * inotify limits). Unchanged files are not re-parsed. 0 disables. Default 10 s.
   */
  pollIntervalMs?: number;
}

export const SOURCE_NAME = 'files';
const EXTENSIONS = ['.yaml', '.yml', '.json'];
const WATCHED: ReadonlySet<string> = new Set(WATCHED_KINDS);
/** Rescan at the latest this long after the first event of a burst, however busy the directory. */
const MAX_DEBOUNCE_MS = 2000;

/** One object-shaped value found in a file, before normalisation. */
interface RawEntry {
  document?: number;
  /** Position inside a `kind: List`, for messages. */
  item?: number;
  value: unknown;
}

interface ParsedFile {
  entries: RawEntry[];
  /** Syntax errors; any of them makes the file "broken". */
  errors: { document?: number; message: string }[];
}

interface Accepted {
  object: KubeObject;
  file: string;
  document?: number;
}

export class FileProvider {
  private readonly dir: string;
  private readonly store: ObjectStore;
  private readonly logger: Logger;
  private readonly metrics?: ConvoyMetrics;
  private readonly debounceMs: number;
  private readonly pollIntervalMs: number;

  /** Objects this provider has put into the store, by store key. */
  private applied = new Map<string, Accepted>();
  /** Keys each file contributed at the last rescan (kept last-good versions included). */
  private fileKeys = new Map<string, Set<string>>();
  /** Parse results by file, reused while the content does not change. */
  private parseCache = new Map<string, { content: string; parsed: ParsedFile }>();
  /** Key → creationTimestamp Convoy assigned on first sight; stable for the process lifetime. */
  private readonly firstSeen = new Map<string, string>();
  /** Key → generation bookkeeping (content fingerprint without metadata/status). */
  private readonly generations = new Map<string, { generation: number; fingerprint: string }>();
  private currentProblems: FileProblem[] = [];
  private problemIds = new Set<string>();

  private readonly watchers = new Map<string, FSWatcher>();
  private debounceTimer?: NodeJS.Timeout;
  private burstStart = 0;
  private pollTimer?: NodeJS.Timeout;
  private running = false;
  /** Serialises rescans: a rescan requested while one runs starts right after it. */
  private scanChain: Promise<void> = Promise.resolve();
  private scanQueued?: Promise<void>;

  constructor(opts: FileProviderOptions) {
    this.dir = opts.dir;
    this.store = opts.store;
    this.logger = opts.logger.child({ provider: SOURCE_NAME });
    this.metrics = opts.metrics;
    this.debounceMs = opts.debounceMs ?? 100;
    this.pollIntervalMs = opts.pollIntervalMs ?? 10_000;
  }

  async start(): Promise<void> {
    this.store.registerSource(SOURCE_NAME);
    const st = await stat(this.dir).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`file provider: cannot read directory ${this.dir}: ${err.code ?? err.message}`);
    });
    if (!st.isDirectory()) throw new Error(`file provider: ${this.dir} is not a directory`);
    this.running = true;
    await this.reload();
    this.store.markSynced(SOURCE_NAME);
    if (this.pollIntervalMs > 0) {
      this.pollTimer = setInterval(() => void this.reload(), this.pollIntervalMs);
      this.pollTimer.unref();
    }
    this.logger.info(
      { dir: this.dir, objects: this.applied.size, problems: this.currentProblems.length },
      'file provider started',
    );
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.debounceTimer = undefined;
    this.pollTimer = undefined;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    await this.scanChain;
  }

  problems(): FileProblem[] {
    return this.currentProblems.map((p) => ({ ...p }));
  }

  /** Rescans now. Concurrent calls share one follow-up rescan. */
  reload(): Promise<void> {
    if (this.scanQueued) return this.scanQueued;
    const next = this.scanChain.then(() => {
      this.scanQueued = undefined;
      return this.rescan();
    });
    this.scanQueued = next;
    this.scanChain = next.catch(() => undefined);
    return next;
  }

  // -------------------------------------------------------------------------------------------
  // Watching

  private onFsEvent(): void {
    if (!this.running) return;
    const now = Date.now();
    if (!this.debounceTimer) this.burstStart = now;
    else clearTimeout(this.debounceTimer);
    const wait = Math.max(0, Math.min(this.debounceMs, this.burstStart + MAX_DEBOUNCE_MS - now));
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      if (this.running) void this.reload();
    }, wait);
  }

  /**
   * One non-recursive watcher per directory (portable; fs.watch recursive is not available on
   * every platform and Node 20 version). Directory events cover creates, edits, deletes and the
   * rename-into-place writes of editors and ConfigMap volume updates.
   */
  private syncWatchers(dirs: Set<string>): void {
    if (!this.running) return;
    for (const [d, w] of this.watchers) {
      if (!dirs.has(d)) {
        w.close();
        this.watchers.delete(d);
      }
    }
    let added = false;
    for (const d of dirs) {
      if (this.watchers.has(d)) continue;
      added = true;
      try {
        const w = fsWatch(d, { persistent: false }, () => this.onFsEvent());
        w.on('error', (err) => {
          this.logger.debug({ dir: d, err: err.message }, 'directory watch ended');
          w.close();
          this.watchers.delete(d);
          this.onFsEvent();
        });
        this.watchers.set(d, w);
      } catch (err) {
        this.logger.warn(
          { dir: d, err: (err as Error).message },
          'cannot watch directory; changes are picked up by the periodic rescan',
        );
      }
    }
    // Something may have been created in a new directory between listing it and watching it.
    if (added) this.onFsEvent();
  }

  // -------------------------------------------------------------------------------------------
  // Scanning

  private async listFiles(): Promise<{ files: string[]; dirs: Set<string> }> {
    const files: string[] = [];
    const dirs = new Set<string>();
    const visited = new Set<string>();
    const walk = async (d: string, mustExist: boolean): Promise<void> => {
      let real: string;
      try {
        real = await realpath(d);
      } catch (err) {
        if (mustExist) throw err;
        return;
      }
      if (visited.has(real)) return;
      visited.add(real);
      dirs.add(d);
      let entries;
      try {
        entries = await readdir(d, { withFileTypes: true });
      } catch (err) {
        if (mustExist) throw err;
        this.logger.warn({ dir: d, err: (err as Error).message }, 'cannot read directory');
        return;
      }
      for (const e of entries) {
        if (e.name.startsWith('.')) continue;
        const p = join(d, e.name);
        let isDir = e.isDirectory();
        let isFile = e.isFile();
        if (e.isSymbolicLink()) {
          const st = await stat(p).catch(() => undefined);
          if (!st) continue;
          isDir = st.isDirectory();
          isFile = st.isFile();
        }
        if (isDir) await walk(p, false);
        else if (isFile && EXTENSIONS.some((x) => e.name.toLowerCase().endsWith(x))) files.push(p);
      }
    };
    await walk(this.dir, true);
    const rel = (p: string) => relative(this.dir, p).split(sep).join('/');
    files.sort((a, b) => compareStrings(rel(a), rel(b)));
    return { files, dirs };
  }

  private async rescan(): Promise<void> {
    let listing: { files: string[]; dirs: Set<string> };
    try {
      listing = await this.listFiles();
    } catch (err) {
      // The directory itself vanished or became unreadable: keep serving what we have.
      this.setProblems([{ file: '.', message: `cannot read directory: ${(err as Error).message}` }]);
      this.syncWatchers(new Set());
      return;
    }
    this.syncWatchers(listing.dirs);

    const problems: FileProblem[] = [];
    const desired = new Map<string, Accepted>();
    const newFileKeys = new Map<string, Set<string>>();
    /** Files with any problem: their previous objects that did not come back are kept. */
    const troubled = new Set<string>();
    /** Keys whose new version was refused: their previous version is kept. */
    const refusedKeys = new Map<string, string>();
    const seenFiles = new Set<string>();

    for (const path of listing.files) {
      const file = relative(this.dir, path).split(sep).join('/');
      seenFiles.add(file);
      const keys = new Set<string>();
      newFileKeys.set(file, keys);
      let content: string;
      try {
        content = await readFile(path, 'utf8');
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          // Deleted between listing and reading: the next event rescans; treat as gone.
          seenFiles.delete(file);
          newFileKeys.delete(file);
          continue;
        }
        problems.push({ file, message: `cannot read file: ${(err as Error).message}` });
        troubled.add(file);
        continue;
      }
      let cached = this.parseCache.get(file);
      if (!cached || cached.content !== content) {
        cached = { content, parsed: parseFile(file, content) };
        this.parseCache.set(file, cached);
      }
      const parsed = cached.parsed;
      for (const e of parsed.errors) problems.push({ file, document: e.document, message: e.message });
      if (parsed.errors.length > 0) {
        troubled.add(file);
        // A file that stops parsing changes nothing that was serving. Only a file never seen
        // parsing before contributes the documents that did parse.
        if (this.fileKeys.has(file)) continue;
      }
      for (const entry of parsed.entries) {
        const r = this.acceptEntry(file, entry);
        if (r.kind === 'ignored') continue;
        if (r.kind === 'problem') {
          problems.push(r.problem);
          troubled.add(file);
          if (r.key && !refusedKeys.has(r.key)) refusedKeys.set(r.key, file);
          continue;
        }
        const key = keyOf(r.object);
        const existing = desired.get(key);
        if (existing) {
          problems.push({
            file,
            document: entry.document,
            kind: r.object.kind,
            name: r.object.metadata.name,
            message:
              `duplicate ${r.object.kind} ${displayKey(r.object)}: already defined in ` +
              `${existing.file}${docSuffix(existing.document)}, which wins; ` +
              `this copy in ${file}${docSuffix(entry.document)} is ignored`,
          });
          troubled.add(file);
          continue;
        }
        desired.set(key, { object: r.object, file, document: entry.document });
        keys.add(key);
      }
    }
    for (const file of this.parseCache.keys()) if (!seenFiles.has(file)) this.parseCache.delete(file);

    // Keep last good versions: objects of troubled files that did not come back valid, and
    // objects whose new version was refused.
    const keep = (key: string, file: string) => {
      const prev = this.applied.get(key);
      if (!prev || desired.has(key)) return;
      desired.set(key, prev);
      newFileKeys.get(file)?.add(key);
    };
    for (const file of troubled) for (const key of this.fileKeys.get(file) ?? []) keep(key, file);
    for (const [key, file] of refusedKeys) keep(key, file);

    // Bookkeeping for accepted objects (timestamps, generations) and apply the difference.
    for (const [key, acc] of desired) {
      if (this.applied.get(key) === acc) continue;
      this.fillMetadata(key, acc.object);
    }
    for (const [key, acc] of desired) {
      const prev = this.applied.get(key);
      if (prev === acc || (prev && JSON.stringify(prev.object) === JSON.stringify(acc.object))) {
        if (prev) desired.set(key, { ...acc, object: prev.object });
        continue;
      }
      this.store.put(acc.object);
    }
    for (const [key, prev] of this.applied) {
      if (!desired.has(key)) {
        this.store.delete(prev.object.kind, objectNamespace(prev.object), prev.object.metadata.name);
      }
    }
    this.applied = desired;
    this.fileKeys = newFileKeys;
    this.setProblems(problems);
  }

  /** Normalises and validates one raw entry. */
  private acceptEntry(
    file: string,
    entry: RawEntry,
  ):
    | { kind: 'ignored' }
    | { kind: 'problem'; problem: FileProblem; key?: string }
    | { kind: 'ok'; object: KubeObject } {
    const where = entry.item !== undefined ? `items[${entry.item}]: ` : '';
    const v = entry.value;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      return {
        kind: 'problem',
        problem: { file, document: entry.document, message: `${where}document is not an object` },
      };
    }
    const raw = v as Record<string, unknown>;
    const kind = typeof raw.kind === 'string' ? raw.kind : undefined;
    const meta = raw.metadata;
    const name =
      meta && typeof meta === 'object' && typeof (meta as Record<string, unknown>).name === 'string'
        ? ((meta as Record<string, unknown>).name as string)
        : undefined;
    const apiVersion = typeof raw.apiVersion === 'string' ? raw.apiVersion : undefined;
    if (
      (kind !== undefined && !WATCHED.has(kind)) ||
      (kind !== undefined && apiVersion !== undefined && groupOfApiVersion(apiVersion) !== apiGroupOf(kind))
    ) {
      // Another kind, or the same kind name in another API group (an Istio Gateway).
      this.logger.debug(
        { file, document: entry.document, apiVersion, kind, name },
        'ignoring kind Convoy does not read',
      );
      return { kind: 'ignored' };
    }
    const obj = normalize(structuredClone(raw));
    const errors = validateObject(obj);
    if (errors.length > 0) {
      const key = kind && name ? keyOf(obj) : undefined;
      return {
        kind: 'problem',
        key,
        problem: { file, document: entry.document, kind, name, message: where + errors.join('; ') },
      };
    }
    return { kind: 'ok', object: obj };
  }

  /** What an API server would fill in: uid, creationTimestamp, generation. */
  private fillMetadata(key: string, obj: KubeObject): void {
    const m = obj.metadata;
    if (m.creationTimestamp === undefined) {
      let ts = this.firstSeen.get(key);
      if (!ts) {
        ts = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
        this.firstSeen.set(key, ts);
      }
      m.creationTimestamp = ts;
    }
    if (m.uid === undefined) m.uid = uidFor(key);
    const fp = generationFingerprint(obj);
    const prev = this.generations.get(key);
    let generation: number;
    if (typeof m.generation === 'number') generation = m.generation;
    else if (!prev) generation = 1;
    else if (prev.fingerprint !== fp) generation = prev.generation + 1;
    else generation = prev.generation;
    this.generations.set(key, { generation, fingerprint: fp });
    m.generation = generation;
  }

  private setProblems(problems: FileProblem[]): void {
    const ids = new Set<string>();
    for (const p of problems) {
      const id = JSON.stringify(p);
      ids.add(id);
      if (!this.problemIds.has(id)) {
        this.logger.warn(
          { file: p.file, document: p.document, kind: p.kind, name: p.name },
          `${p.file}${docSuffix(p.document)}: ${p.message}`,
        );
      }
    }
    for (const id of this.problemIds) {
      if (!ids.has(id)) {
        const p = JSON.parse(id) as FileProblem;
        this.logger.info({ file: p.file, document: p.document }, 'problem resolved');
      }
    }
    this.problemIds = ids;
    this.currentProblems = problems;
    this.metrics?.invalidObjects.set(problems.length);
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers (exported for tests)

function docSuffix(document: number | undefined): string {
  return document === undefined ? '' : ` (document ${document}, 0-based)`;
}

function displayKey(o: KubeObject): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
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

/** In-place: namespace default, Secret stringData, no status. Tolerates any shape. */
export function normalize(raw: Record<string, unknown>): KubeObject {
  const obj = raw as KubeObject;
  const meta = raw.metadata;
  if (meta && typeof meta === 'object' && !Array.isArray(meta) && typeof raw.kind === 'string') {
    const m = meta as Record<string, unknown>;
    if (CLUSTER_SCOPED_KINDS.has(raw.kind)) delete m.namespace;
    else if (m.namespace === undefined || m.namespace === null || m.namespace === '') m.namespace = 'default';
  }
  delete raw.status;
  if (raw.kind === 'Secret' && raw.stringData !== undefined) {
    const sd = raw.stringData;
    if (sd && typeof sd === 'object' && !Array.isArray(sd)) {
      const data: Record<string, unknown> =
        raw.data && typeof raw.data === 'object' && !Array.isArray(raw.data)
          ? { ...(raw.data as Record<string, unknown>) }
          : {};
      for (const [k, val] of Object.entries(sd as Record<string, unknown>)) {
        // Non-strings are left for validation to refuse (the data map then holds them as is).
        data[k] = typeof val === 'string' ? Buffer.from(val, 'utf8').toString('base64') : val;
      }
      raw.data = data;
      delete raw.stringData;
    }
  }
  return obj;
}

/** Everything but metadata and status: what makes Kubernetes bump metadata.generation. */
function generationFingerprint(o: KubeObject): string {
  const rest: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) if (k !== 'metadata' && k !== 'status') rest[k] = o[k];
  return JSON.stringify(rest);
}

/** A UUID-shaped identifier derived from the store key: stable across rescans and restarts. */
export function uidFor(key: string): string {
  const h = createHash('sha256').update(`convoy-files/${key}`).digest('hex');
  const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
