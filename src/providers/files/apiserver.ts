/**
 * What kube-apiserver would do with an object read from a file, imitated for file mode: skip
 * kinds Convoy does not read, default the namespace, merge Secret stringData into data, drop
 * status, validate like a v1.6.1 cluster (src/validation), and fill the metadata the server
 * owns (uid, creationTimestamp, generation). The first part is pure and may run in a worker
 * thread; MetadataAssigner keeps per-object bookkeeping and runs where the store is.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../store/objects';
import { CLUSTER_SCOPED_KINDS, WATCHED_KINDS, keyOf, objectKey } from '../../store/objects';
import { apiGroupOf, groupOfApiVersion, validateObject } from '../../validation';
import type { RawEntry } from './parse';

const WATCHED: ReadonlySet<string> = new Set(WATCHED_KINDS);

/** Kubernetes' size limit for one object (a Secret's data, etcd's request limit): 1 MiB. */
export const MAX_OBJECT_BYTES = 1024 * 1024;

/** The outcome of admitting one raw entry, as the API server would decide it. */
export type Admission =
  | { kind: 'ignored'; apiVersion?: string; objectKind?: string; name?: string }
  | { kind: 'refused'; message: string; objectKind?: string; name?: string; key?: string }
  | { kind: 'ok'; object: KubeObject };

/**
 * Normalises and validates one raw entry. Another kind, or the same kind name in another API
 * group (an Istio Gateway), is ignored; an object larger than `maxObjectBytes` is refused with
 * the API server's "Too long" wording before anything else looks at it; an invalid object is
 * refused with the validation messages. Messages are prefixed with the position in a List. The
 * raw value is not changed, unless the entry is marked unshared (then it becomes the object).
 */
export function admitEntry(entry: RawEntry, maxObjectBytes = MAX_OBJECT_BYTES): Admission {
  const where = entry.item !== undefined ? `items[${entry.item}]: ` : '';
  const v = entry.value;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    return { kind: 'refused', message: `${where}document is not an object` };
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
    return { kind: 'ignored', apiVersion, objectKind: kind, name };
  }
  // Text that short cannot hold an object over the limit: its stored size is at most a few times
  // the text's length (quotes, and `null` for an empty value), so the walk is skipped.
  const bounded = entry.unsharedTextLength !== undefined && entry.unsharedTextLength * 8 <= maxObjectBytes;
  const size = bounded ? 0 : storedSize(raw, maxObjectBytes * 64);
  if (size > maxObjectBytes) {
    const measured = size > maxObjectBytes * 64 ? `more than ${maxObjectBytes * 64}` : String(size);
    return {
      kind: 'refused',
      message: `${where}Too long: may not be more than ${maxObjectBytes} bytes (the object is ${measured} bytes)`,
      objectKind: kind,
      name,
      key: kind && name ? rawKey(kind, meta as Record<string, unknown>, name) : undefined,
    };
  }
  // Normalising and defaulting change the object: a value that aliases may share is copied first.
  const obj = normalize(entry.unsharedTextLength !== undefined ? raw : structuredClone(raw));
  const errors = validateObject(obj);
  if (errors.length > 0) {
    return {
      kind: 'refused',
      message: where + errors.join('; '),
      objectKind: kind,
      name,
      key: kind && name ? keyOf(obj) : undefined,
    };
  }
  return { kind: 'ok', object: obj };
}

/**
 * The size of an object as the API server would store it, counted as JSON text except that a
 * Secret's base64 `data` counts as the bytes it decodes to. Stops counting past `cap` (and
 * returns a value above it), so a value that aliases share many times costs at most `cap`.
 */
export function storedSize(raw: Record<string, unknown>, cap: number): number {
  let size = 0;
  const secretData = raw.kind === 'Secret' && isRecord(raw.data) ? raw.data : undefined;
  const stack: unknown[] = [raw];
  while (stack.length > 0 && size <= cap) {
    const v = stack.pop();
    if (typeof v === 'string') size += Buffer.byteLength(v, 'utf8') + 2;
    else if (v === null || typeof v !== 'object') size += String(v).length;
    else if (Array.isArray(v)) {
      size += 1 + v.length;
      for (const item of v) stack.push(item);
    } else if (v === secretData) {
      for (const [k, val] of Object.entries(secretData)) {
        size += Buffer.byteLength(k, 'utf8') + 4;
        if (typeof val === 'string') size += Math.floor((val.length * 3) / 4);
        else stack.push(val);
      }
    } else {
      const entries = Object.entries(v as Record<string, unknown>);
      size += 1 + entries.length;
      for (const [k, val] of entries) {
        size += Buffer.byteLength(k, 'utf8') + 3;
        stack.push(val);
      }
    }
  }
  return size;
}

/** The store key an object will have once normalised, from its raw kind and metadata. */
function rawKey(kind: string, meta: Record<string, unknown>, name: string): string {
  const ns = typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : 'default';
  return objectKey(kind, CLUSTER_SCOPED_KINDS.has(kind) ? '' : ns, name);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
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

/**
 * Fills the metadata an API server owns, remembering what it assigned: creationTimestamp on
 * first sight (stable for the process lifetime), a uid derived from the key (stable across
 * restarts), and a generation that bumps when anything but metadata and status changes.
 * Values the file sets itself are kept.
 */
export class MetadataAssigner {
  /** Key → creationTimestamp assigned on first sight. */
  private readonly firstSeen = new Map<string, string>();
  /** Key → generation bookkeeping (content fingerprint without metadata/status). */
  private readonly generations = new Map<string, { generation: number; fingerprint: string }>();

  /** Fills obj.metadata in place. */
  assign(key: string, obj: KubeObject): void {
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
    const fp = fingerprintedAhead.get(obj) ?? generationFingerprint(obj);
    const prev = this.generations.get(key);
    let generation: number;
    if (typeof m.generation === 'number') generation = m.generation;
    else if (!prev) generation = 1;
    else if (prev.fingerprint !== fp) generation = prev.generation + 1;
    else generation = prev.generation;
    this.generations.set(key, { generation, fingerprint: fp });
    m.generation = generation;
  }
}

/** Generation fingerprints computed where the object was admitted, per object. */
const fingerprintedAhead = new WeakMap<KubeObject, string>();

/**
 * Records `fingerprint` as generationFingerprint(obj), computed in the parse worker that admitted
 * this very object, so assigning its metadata on the main thread does not serialize and hash it
 * again (docs/architecture.md §10.4). Nothing but metadata changes an object after admission, and
 * the fingerprint leaves metadata out, so the recorded value stays equal to a fresh one.
 */
export function rememberGenerationFingerprint(obj: KubeObject, fingerprint: string): void {
  fingerprintedAhead.set(obj, fingerprint);
}

/**
 * A digest of everything but metadata and status: what makes Kubernetes bump
 * metadata.generation. A digest, not the text, because one is kept per object (the text of every
 * object held again measured ~25 MiB at 5,000 ListenerSets).
 */
export function generationFingerprint(o: KubeObject): string {
  const rest: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) if (k !== 'metadata' && k !== 'status') rest[k] = o[k];
  return createHash('sha256').update(JSON.stringify(rest)).digest('base64');
}

/** A UUID-shaped identifier derived from the store key: stable across rescans and restarts. */
export function uidFor(key: string): string {
  const h = createHash('sha256').update(`convoy-files/${key}`).digest('hex');
  const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
