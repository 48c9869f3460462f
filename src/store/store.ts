import { EventEmitter } from 'node:events';
import type { KubeObject } from './objects';
import { keyOf, objectKey, objectNamespace } from './objects';

export type StoreChange =
  | { type: 'put'; key: string; kind: string; object: KubeObject; previous?: KubeObject }
  | { type: 'delete'; key: string; kind: string; previous: KubeObject };

/**
 * Caches the objects both providers fill and announces their changes.
 *
 * Providers only put and delete plain objects and say when their initial sync is complete;
 * everything downstream reads a consistent view through list/get between builds. A put that changes
 * nothing (same spec, labels, data) is dropped here, so a relist or a status-only update does not
 * trigger a rebuild.
 */
export class ObjectStore {
  private readonly byKind = new Map<string, Map<string, KubeObject>>();
  private readonly events = new EventEmitter();
  private readonly pendingSources = new Set<string>();
  private readonly syncedSources = new Set<string>();
  /** Incremented on every effective change; lets consumers tell whether they are stale. */
  revision = 0;

  constructor() {
    this.events.setMaxListeners(0);
  }

  /**
   * Stores an object and returns whether that is a change; an object with the same content as the
   * stored one replaces it without a change event (see sameContent).
   */
  put(object: KubeObject): boolean {
    const kind = object.kind;
    const key = keyOf(object);
    let bucket = this.byKind.get(kind);
    if (!bucket) {
      bucket = new Map();
      this.byKind.set(kind, bucket);
    }
    const previous = bucket.get(key);
    if (previous && sameContent(previous, object)) {
      // Keep the newest resourceVersion/status without announcing a change.
      bucket.set(key, object);
      return false;
    }
    bucket.set(key, object);
    this.revision++;
    this.events.emit('change', { type: 'put', key, kind, object, previous } satisfies StoreChange);
    return true;
  }

  /** Removes an object and returns whether it was there. */
  delete(kind: string, namespace: string, name: string): boolean {
    const key = objectKey(kind, namespace, name);
    const bucket = this.byKind.get(kind);
    const previous = bucket?.get(key);
    if (!bucket || !previous) return false;
    bucket.delete(key);
    this.revision++;
    this.events.emit('change', { type: 'delete', key, kind, previous } satisfies StoreChange);
    return true;
  }

  /** Replaces every object of a kind at once (a relist); emits changes only for differences. */
  replaceKind(kind: string, objects: KubeObject[]): void {
    const incoming = new Map(objects.map((o) => [keyOf(o), o]));
    for (const existing of [...(this.byKind.get(kind)?.values() ?? [])]) {
      if (!incoming.has(keyOf(existing))) {
        this.delete(kind, objectNamespace(existing), existing.metadata.name);
      }
    }
    for (const o of objects) this.put(o);
  }

  /** Returns the object of a kind, namespace and name, if stored. */
  get(kind: string, namespace: string, name: string): KubeObject | undefined {
    return this.byKind.get(kind)?.get(objectKey(kind, namespace, name));
  }

  /** Returns the objects of a kind, in insertion order (a new array). */
  list(kind: string): KubeObject[] {
    const bucket = this.byKind.get(kind);
    return bucket ? [...bucket.values()] : [];
  }

  /** Returns the kinds that have ever held an object. */
  kinds(): string[] {
    return [...this.byKind.keys()];
  }

  /** Returns the number of stored objects. */
  size(): number {
    let n = 0;
    for (const b of this.byKind.values()) n += b.size;
    return n;
  }

  /** Calls `listener` on every change; returns the function that unsubscribes it. */
  onChange(listener: (change: StoreChange) => void): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  /**
   * Registers a provider before its initial sync.
   *
   * A provider announces itself this way so that readiness can wait for it.
   */
  registerSource(source: string): void {
    if (!this.syncedSources.has(source)) this.pendingSources.add(source);
  }

  /** Records that a provider finished its initial sync and tells the onSynced listeners. */
  markSynced(source: string): void {
    this.pendingSources.delete(source);
    this.syncedSources.add(source);
    this.events.emit('synced', source);
  }

  /** Returns whether at least one provider has synced and none is still pending. */
  isSynced(): boolean {
    return this.pendingSources.size === 0 && this.syncedSources.size > 0;
  }

  /** Calls `listener` with each provider's name when it syncs; returns the function that unsubscribes it. */
  onSynced(listener: (source: string) => void): () => void {
    this.events.on('synced', listener);
    return () => this.events.off('synced', listener);
  }
}

/**
 * Returns whether two versions of an object are the same for Convoy.
 *
 * They are when everything but bookkeeping matches (see contentFingerprint).
 */
export function sameContent(a: KubeObject, b: KubeObject): boolean {
  return contentFingerprint(a) === contentFingerprint(b);
}

const IGNORED_TOP_LEVEL = new Set(['status', 'metadata']);

/**
 * Returns a string that is equal for two versions of an object exactly when Convoy sees no change.
 *
 * It covers every top-level field but status and metadata, and of metadata only name, namespace,
 * generation, labels, creation and deletion timestamps and uid (not resourceVersion or annotations).
 */
export function contentFingerprint(o: KubeObject): string {
  const m = o.metadata;
  const meta = {
    name: m.name,
    namespace: m.namespace,
    generation: m.generation,
    labels: m.labels,
    creationTimestamp: m.creationTimestamp,
    deletionTimestamp: m.deletionTimestamp,
    uid: m.uid,
  };
  const rest: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) if (!IGNORED_TOP_LEVEL.has(k)) rest[k] = o[k];
  return JSON.stringify([meta, rest]);
}
