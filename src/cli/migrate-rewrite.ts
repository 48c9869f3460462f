/**
 * The rewrite behind `convoy migrate` (docs/operations.md §24): legacy XListenerSets
 * (gateway.networking.x-k8s.io/v1alpha1) become ListenerSets (gateway.networking.k8s.io/v1), and
 * the references to them (route parentRefs, ReferenceGrant `from`) follow. Pure: manifests in,
 * manifests and findings out.
 */

const LEGACY_GROUP = 'gateway.networking.x-k8s.io';
const LEGACY_KIND = 'XListenerSet';
const V1_GROUP = 'gateway.networking.k8s.io';
const V1_KIND = 'ListenerSet';

/** Metadata the API server owns: stripped from rewritten objects so `kubectl apply` takes them. */
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'managedFields',
  'selfLink',
];
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** One thing `convoy migrate` did or could not do, about one object. */
export interface MigrationNote {
  /** `Kind namespace/name` of the object as written in the input. */
  object: string;
  /** `moved`: rewritten; `blocked`: left as it is, with why and what to do. */
  kind: 'moved' | 'blocked';
  message: string;
}

export interface MigrationOptions {
  /**
   * Give a listener without a port the port the XListenerSet's status reports (the one Convoy
   * assigned from its dynamic range), instead of leaving the set unmoved.
   */
  assignedPorts?: boolean;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Returns `Kind namespace/name` of a manifest (namespace `default` when unset). */
function describe(o: Obj): string {
  const m = isObj(o.metadata) ? o.metadata : {};
  return `${String(o.kind)} ${typeof m.namespace === 'string' ? m.namespace : 'default'}/${String(m.name)}`;
}

/** Returns the group of an apiVersion (`""` for the core group). */
function groupOf(apiVersion: unknown): string {
  if (typeof apiVersion !== 'string') return '';
  const i = apiVersion.lastIndexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

function isXListenerSet(o: Obj): boolean {
  return o.kind === LEGACY_KIND && groupOf(o.apiVersion) === LEGACY_GROUP;
}

/** Returns a copy of metadata without what the API server owns (and kubectl's last-applied copy). */
function cleanMetadata(metadata: unknown): Obj {
  const m: Obj = isObj(metadata) ? { ...metadata } : {};
  for (const k of SERVER_METADATA) delete m[k];
  if (isObj(m.annotations)) {
    const annotations = { ...m.annotations };
    delete annotations[LAST_APPLIED];
    if (Object.keys(annotations).length === 0) delete m.annotations;
    else m.annotations = annotations;
  }
  return m;
}

/** Returns the port an XListenerSet's status reports for listener `name`. */
function statusPort(o: Obj, name: unknown): number | undefined {
  const listeners = isObj(o.status) ? o.status.listeners : undefined;
  if (!Array.isArray(listeners)) return undefined;
  const entry = listeners.find((l) => isObj(l) && l.name === name) as Obj | undefined;
  return typeof entry?.port === 'number' && entry.port > 0 ? entry.port : undefined;
}

/**
 * Rewrites one XListenerSet as a ListenerSet, or returns why it cannot move: a listener without a
 * port (v1 requires one) blocks it unless `assignedPorts` and its status reports the assigned port.
 */
function migrateListenerSet(
  o: Obj,
  opts: MigrationOptions,
): { object: Obj; note: MigrationNote } | { note: MigrationNote } {
  const spec = isObj(o.spec) ? o.spec : {};
  const listeners = Array.isArray(spec.listeners) ? spec.listeners : [];
  const unset: string[] = [];
  const assigned: string[] = [];
  const moved = listeners.map((l: unknown) => {
    if (!isObj(l)) return l;
    if (typeof l.port === 'number' && l.port > 0) return l;
    const known = statusPort(o, l.name);
    if (known !== undefined && opts.assignedPorts) {
      assigned.push(`${String(l.name)}=${known}`);
      return { ...l, port: known };
    }
    unset.push(
      known !== undefined
        ? `listener ${String(l.name)} has no port; Convoy assigned it ${known} (set port: ${known}, or run with --assigned-ports)`
        : `listener ${String(l.name)} has no port and no assigned port is known (set one; ListenerSet v1 requires it)`,
    );
    return l;
  });
  if (unset.length > 0) return { note: { object: describe(o), kind: 'blocked', message: unset.join('; ') } };
  const object: Obj = {
    apiVersion: `${V1_GROUP}/v1`,
    kind: V1_KIND,
    metadata: cleanMetadata(o.metadata),
    spec: { ...spec, listeners: moved },
  };
  const message =
    `now ${V1_KIND} (${V1_GROUP}/v1)` +
    (assigned.length ? `; assigned ports kept: ${assigned.join(', ')}` : '');
  return { object, note: { object: describe(o), kind: 'moved', message } };
}

/** Returns whether a reference (parentRef, ReferenceGrant `from`) names the legacy kind. */
function namesLegacy(ref: unknown): ref is Obj {
  return isObj(ref) && ref.kind === LEGACY_KIND && ref.group === LEGACY_GROUP;
}

/**
 * Rewrites a route's parentRefs to legacy sets that moved (or that are not in the input) to name
 * the ListenerSet; undefined when nothing changes.
 */
function migrateParentRefs(
  o: Obj,
  blocked: ReadonlySet<string>,
): { object: Obj; note: MigrationNote } | undefined {
  const spec = isObj(o.spec) ? o.spec : undefined;
  if (!spec || !Array.isArray(spec.parentRefs)) return undefined;
  const routeNs =
    isObj(o.metadata) && typeof o.metadata.namespace === 'string' ? o.metadata.namespace : 'default';
  let count = 0;
  const parentRefs = spec.parentRefs.map((ref: unknown) => {
    if (!namesLegacy(ref)) return ref;
    const ns = typeof ref.namespace === 'string' ? ref.namespace : routeNs;
    if (blocked.has(`${ns}/${String(ref.name)}`)) return ref;
    count++;
    return { ...ref, group: V1_GROUP, kind: V1_KIND };
  });
  if (count === 0) return undefined;
  const { status: _status, ...rest } = o;
  void _status;
  const object = { ...rest, metadata: cleanMetadata(o.metadata), spec: { ...spec, parentRefs } };
  return {
    object,
    note: { object: describe(o), kind: 'moved', message: `${count} parentRef(s) now name ${V1_KIND}` },
  };
}

/**
 * Adds to a ReferenceGrant, next to each `from` entry naming the legacy kind, the same entry for
 * ListenerSet (the legacy one stays for sets not moved yet); undefined when nothing changes.
 */
function migrateGrant(o: Obj): { object: Obj; note: MigrationNote } | undefined {
  const spec = isObj(o.spec) ? o.spec : undefined;
  if (!spec || !Array.isArray(spec.from)) return undefined;
  const from: unknown[] = [];
  let added = 0;
  for (const f of spec.from) {
    from.push(f);
    if (!namesLegacy(f)) continue;
    const v1 = { ...f, group: V1_GROUP, kind: V1_KIND };
    const present = spec.from.some(
      (g: unknown) => isObj(g) && g.group === V1_GROUP && g.kind === V1_KIND && g.namespace === f.namespace,
    );
    if (!present) {
      from.push(v1);
      added++;
    }
  }
  if (added === 0) return undefined;
  const object = { ...o, metadata: cleanMetadata(o.metadata), spec: { ...spec, from } };
  return {
    object,
    note: { object: describe(o), kind: 'moved', message: `${added} from entry(ies) added for ${V1_KIND}` },
  };
}

/** Returns the manifests a document holds: itself, or the items of a `List`. */
function manifestsOf(doc: unknown): Obj[] {
  if (!isObj(doc)) return [];
  if (typeof doc.kind === 'string' && doc.kind.endsWith('List') && Array.isArray(doc.items)) {
    return doc.items.filter(isObj);
  }
  return [doc];
}

/** The result of migrating a set of manifests: the manifests to apply, in input order, and notes. */
export interface MigrationResult {
  /** Every input manifest (List items flattened), rewritten where it moved, otherwise as it was. */
  manifests: { object: Obj; changed: boolean }[];
  notes: MigrationNote[];
}

/**
 * Migrates manifests (documents as parsed, `List`s flattened): XListenerSets become ListenerSets
 * unless blocked by a listener without a port, route parentRefs to moved (or unknown) sets follow,
 * ReferenceGrants gain ListenerSet `from` entries. Everything else is returned unchanged.
 */
export function migrateManifests(
  documents: readonly unknown[],
  opts: MigrationOptions = {},
): MigrationResult {
  const all = documents.flatMap(manifestsOf);
  const notes: MigrationNote[] = [];
  const blocked = new Set<string>();
  const sets = new Map<Obj, Obj>();
  for (const o of all) {
    if (!isXListenerSet(o)) continue;
    const r = migrateListenerSet(o, opts);
    notes.push(r.note);
    if ('object' in r) sets.set(o, r.object);
    else {
      const m = isObj(o.metadata) ? o.metadata : {};
      blocked.add(`${typeof m.namespace === 'string' ? m.namespace : 'default'}/${String(m.name)}`);
    }
  }
  const manifests = all.map((o) => {
    const set = sets.get(o);
    if (set) return { object: set, changed: true };
    const r = o.kind === 'ReferenceGrant' ? migrateGrant(o) : migrateParentRefs(o, blocked);
    if (!r) return { object: o, changed: false };
    notes.push(r.note);
    return { object: r.object, changed: true };
  });
  return { manifests, notes };
}
