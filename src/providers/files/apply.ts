/**
 * Applies one rescan's outcome to the store: decides which object each key gets, keeping last
 * good versions, and puts and deletes only the difference from the previous rescan.
 *
 * Rules (bad input never reaches Envoy, and never deletes what serves): a file that stops
 * parsing, or an object that stops validating, keeps its last good version in the store. Only a
 * file that is deleted, or an object removed from a file that is otherwise clean, deletes
 * objects. When two files define the same object, the first by path wins and the other is a
 * problem naming both.
 */
import type { KubeObject } from '../../store/objects';
import { displayName, keyOf, objectNamespace } from '../../store/objects';
import type { ObjectStore } from '../../store/store';
import type { MetadataAssigner } from './apiserver';
import type { FileProblem } from './problems';
import { docSuffix } from './problems';
import type { FileScan } from './scan';

interface Accepted {
  object: KubeObject;
  file: string;
  document?: number;
}

export class StoreApplier {
  /** Objects this provider has put into the store, by store key. */
  private applied = new Map<string, Accepted>();
  /** Keys each file contributed at the last rescan (kept last-good versions included). */
  private fileKeys = new Map<string, Set<string>>();

  constructor(
    private readonly store: ObjectStore,
    private readonly metadata: MetadataAssigner,
  ) {}

  /** Number of objects currently applied. */
  get size(): number {
    return this.applied.size;
  }

  /**
   * Applies the scans of every file present (in path order) and returns the problems found.
   * Files absent from `scans` are gone and their objects deleted, unless `unseen` says the file
   * may exist but was not looked at (e.g. its directory could not be read): what it
   * contributed before then stays.
   */
  apply(scans: FileScan[], unseen: (file: string) => boolean = () => false): FileProblem[] {
    const problems: FileProblem[] = [];
    const desired = new Map<string, Accepted>();
    const newFileKeys = new Map<string, Set<string>>();
    /** Files with any problem: their previous objects that did not come back are kept. */
    const troubled = new Set<string>();
    /** Keys whose new version was refused: their previous version is kept. */
    const refusedKeys = new Map<string, string>();

    const scanned = new Set(scans.map((scan) => scan.file));
    for (const file of this.fileKeys.keys()) {
      if (scanned.has(file) || !unseen(file)) continue;
      newFileKeys.set(file, new Set());
      troubled.add(file);
    }
    for (const scan of scans) {
      const { file } = scan;
      const keys = new Set<string>();
      newFileKeys.set(file, keys);
      problems.push(...scan.problems);
      if (scan.problems.length > 0 || scan.broken) troubled.add(file);
      // A file that stops parsing changes nothing that was serving.
      if (scan.broken && this.fileKeys.has(file)) continue;
      for (const { document, admission: a } of scan.entries) {
        if (a.kind === 'ignored') continue;
        if (a.kind === 'refused') {
          problems.push({ file, document, kind: a.objectKind, name: a.name, message: a.message });
          troubled.add(file);
          if (a.key && !refusedKeys.has(a.key)) refusedKeys.set(a.key, file);
          continue;
        }
        const key = keyOf(a.object);
        const existing = desired.get(key);
        if (existing) {
          problems.push({
            file,
            document,
            kind: a.object.kind,
            name: a.object.metadata.name,
            message:
              `duplicate ${a.object.kind} ${displayName(a.object)}: already defined in ` +
              `${existing.file}${docSuffix(existing.document)}, which wins; ` +
              `this copy in ${file}${docSuffix(document)} is ignored`,
          });
          troubled.add(file);
          continue;
        }
        desired.set(key, { object: a.object, file, document });
        keys.add(key);
      }
    }

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

    this.commit(desired);
    this.fileKeys = newFileKeys;
    return problems;
  }

  /**
   * Fills server-owned metadata on new objects and writes the difference to the store. An
   * object whose content did not change keeps the instance already in the store, so the store
   * sees no update.
   */
  private commit(desired: Map<string, Accepted>): void {
    for (const [key, acc] of desired) {
      if (this.applied.get(key)?.object === acc.object) continue;
      this.metadata.assign(key, acc.object);
    }
    for (const [key, acc] of desired) {
      const prev = this.applied.get(key);
      if (prev?.object === acc.object) continue;
      if (prev && JSON.stringify(prev.object) === JSON.stringify(acc.object)) {
        desired.set(key, { ...acc, object: prev.object });
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
  }
}
