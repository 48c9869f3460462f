/**
 * Applies one rescan's outcome to the store: decides which object each key gets, keeping last
 * good versions, and puts and deletes only the difference from the previous rescan.
 *
 * Rules (bad input never reaches Envoy, and never deletes what serves): a file that stops
 * parsing, or an object that stops validating, keeps its last good version in the store. Only a
 * file that is deleted, or an object removed from a file that is otherwise clean, deletes
 * objects. When two files define the same object, the first by path wins and the other is a
 * problem naming both.
 *
 * A change costs what it touches (docs/architecture.md §10.1): only the files whose scan changed
 * are decided again, as long as no key they name (before or after) is named by another file;
 * otherwise, as on the first apply, every file is.
 */
import type { KubeObject } from '../../store/objects';
import { displayName, keyOf, objectNamespace } from '../../store/objects';
import type { ObjectStore } from '../../store/store';
import type { MetadataAssigner } from './apiserver';
import type { FileProblem } from './problems';
import { docSuffix } from './problems';
import type { FileScan } from './scan';
import { compareStrings } from '../../util/compare';

interface Accepted {
  object: KubeObject;
  file: string;
  document?: number;
}

/** One file's part in a decision: its scan, or none when it was not looked at (`unseen`). */
interface FileInput {
  file: string;
  scan?: FileScan;
}

/** What deciding a set of files gives: the winners of their keys, their keys and problems. */
interface Decision {
  desired: Map<string, Accepted>;
  fileKeys: Map<string, Set<string>>;
  problems: Map<string, FileProblem[]>;
  /** Broken files whose documents were left out (they had served before). */
  skipped: Set<string>;
}

export class StoreApplier {
  /** Objects this provider has put into the store, by store key. */
  private applied = new Map<string, Accepted>();
  /** Keys each file contributed at the last apply (kept last-good versions included). */
  private fileKeys = new Map<string, Set<string>>();
  /** The scan each file was last decided from. */
  private lastScans = new Map<string, FileScan>();
  /** Problems each file had at the last apply, in the order the full pass reports them. */
  private fileProblems = new Map<string, FileProblem[]>();
  /**
   * Files naming each key: contributing, defining or refusing it. One file is kept as its name
   * alone, a Set only for a key named by several (nearly every key has one file: a Set each cost
   * ~150 bytes for 22,000 keys at 5,000 ListenerSets; bench/README.md, "Steady RSS, session 18").
   */
  private namedBy = new Map<string, string | Set<string>>();
  /** Keys each file names (the reverse of namedBy). */
  private fileNames = new Map<string, Set<string>>();
  /** Broken files whose documents the decision of their current scan left out. */
  private skipped = new Set<string>();
  private appliedOnce = false;
  /** Applies that decided only the changed files (for tests and the bench). */
  changedOnlyApplies = 0;

  /**
   * `incremental: false` decides every file on every apply: the reference the incremental path
   * is tested against (test/providers/files/apply.test.ts).
   */
  constructor(
    private readonly store: ObjectStore,
    private readonly metadata: MetadataAssigner,
    private readonly options: { incremental?: boolean } = {},
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
    const present = new Set<string>();
    const changed: FileInput[] = [];
    for (const scan of scans) {
      present.add(scan.file);
      if (this.lastScans.get(scan.file) !== scan) changed.push({ file: scan.file, scan });
    }
    /** Files that contributed before and have no scan now: gone, or not looked at. */
    const absent: FileInput[] = [];
    for (const file of this.fileKeys.keys()) if (!present.has(file)) absent.push({ file });

    const inputs = [...changed, ...absent];
    if (!this.appliedOnce || this.options.incremental === false || !this.isolated(inputs)) {
      this.decideAndCommit(
        [...scans.map((scan) => ({ file: scan.file, scan })), ...absent],
        unseen,
        new Set(this.fileKeys.keys()),
      );
    } else if (inputs.length > 0) {
      this.changedOnlyApplies++;
      this.decideAndCommit(inputs, unseen, new Set(inputs.map((i) => i.file)));
    }
    this.appliedOnce = true;
    const problems: FileProblem[] = [];
    for (const { file } of scans) {
      const own = this.fileProblems.get(file);
      if (own) problems.push(...own);
    }
    return problems;
  }

  /**
   * Applies a change known to touch only `files` (every other file's scan is the one it was last
   * decided from, and `unseen` answers as it did then): the same outcome as apply() over every
   * scan, at the cost of the named files. `scanOf` gives a file's current scan (none: deleted);
   * `allScans` lists every scan in path order, for when the full pass is needed (first apply,
   * the reference mode, or keys shared with other files).
   */
  applyFiles(
    files: Iterable<string>,
    scanOf: (file: string) => FileScan | undefined,
    unseen: (file: string) => boolean,
    allScans: () => FileScan[],
  ): FileProblem[] {
    if (!this.appliedOnce || this.options.incremental === false) return this.apply(allScans(), unseen);
    const changed: FileInput[] = [];
    const absent: FileInput[] = [];
    for (const file of new Set(files)) {
      const scan = scanOf(file);
      if (scan) {
        if (this.lastScans.get(file) !== scan) changed.push({ file, scan });
      } else if (this.fileKeys.has(file)) absent.push({ file });
    }
    // The first file by path wins a duplicate: changed files are decided in path order.
    changed.sort((a, b) => compareStrings(a.file, b.file));
    const inputs = [...changed, ...absent];
    if (!this.isolated(inputs)) return this.apply(allScans(), unseen);
    if (inputs.length > 0) {
      this.changedOnlyApplies++;
      this.decideAndCommit(inputs, unseen, new Set(inputs.map((i) => i.file)));
    }
    const problems: FileProblem[] = [];
    for (const file of [...this.fileProblems.keys()].sort(compareStrings))
      problems.push(...this.fileProblems.get(file)!);
    return problems;
  }

  /**
   * Whether the files of `inputs` can be decided alone: no key they name, now or at the last
   * apply, is named by a file outside them, so no other file's winner, duplicate problem or
   * kept version can depend on them.
   */
  private isolated(inputs: FileInput[]): boolean {
    const files = new Set(inputs.map((i) => i.file));
    const outsider = (key: string) => {
      const named = this.namedBy.get(key);
      if (typeof named === 'string') return !files.has(named);
      for (const file of named ?? []) if (!files.has(file)) return true;
      return false;
    };
    for (const { file, scan } of inputs) {
      for (const key of this.fileNames.get(file) ?? []) if (outsider(key)) return false;
      for (const key of namesOf(scan)) if (outsider(key)) return false;
    }
    return true;
  }

  /**
   * Decides the keys of `inputs` (in path order), commits the difference for them to the store
   * and records the files' new keys, names and problems. `previous` are the files whose earlier
   * contributions this decision replaces.
   */
  private decideAndCommit(
    inputs: FileInput[],
    unseen: (file: string) => boolean,
    previous: Set<string>,
  ): void {
    const decision = this.decide(inputs, unseen);
    const affected = new Set<string>(decision.desired.keys());
    for (const file of previous) for (const key of this.fileKeys.get(file) ?? []) affected.add(key);
    this.commit(decision.desired, affected);

    for (const file of previous) {
      this.fileKeys.delete(file);
      this.fileProblems.delete(file);
      this.lastScans.delete(file);
      this.skipped.delete(file);
      this.unname(file);
    }
    for (const { file, scan } of inputs) {
      const keys = decision.fileKeys.get(file);
      if (keys) this.fileKeys.set(file, keys);
      const problems = decision.problems.get(file);
      if (problems?.length) this.fileProblems.set(file, problems);
      if (scan) this.lastScans.set(file, scan);
      if (decision.skipped.has(file)) this.skipped.add(file);
      this.name(file, namesWith(keys, namesOf(scan)));
    }
  }

  /** The full pass's rules over `inputs` alone (see the module comment). */
  private decide(inputs: FileInput[], unseen: (file: string) => boolean): Decision {
    const desired = new Map<string, Accepted>();
    const fileKeys = new Map<string, Set<string>>();
    const problems = new Map<string, FileProblem[]>();
    /** Files with any problem: their previous objects that did not come back are kept. */
    const troubled = new Set<string>();
    /** Keys whose new version was refused: their previous version is kept. */
    const refusedKeys = new Map<string, string>();
    const skipped = new Set<string>();

    for (const { file, scan } of inputs) {
      if (scan) continue;
      if (!unseen(file)) continue;
      fileKeys.set(file, new Set());
      troubled.add(file);
    }
    for (const { file, scan } of inputs) {
      if (!scan) continue;
      const keys = new Set<string>();
      fileKeys.set(file, keys);
      const own: FileProblem[] = [...scan.problems];
      problems.set(file, own);
      if (scan.problems.length > 0 || scan.broken) troubled.add(file);
      // A file that stops parsing changes nothing that was serving. Decided once per scan, so
      // deciding the same scan again (a full pass) gives the same answer.
      const servedBefore =
        this.lastScans.get(file) === scan ? this.skipped.has(file) : this.fileKeys.has(file);
      if (scan.broken && servedBefore) {
        skipped.add(file);
        continue;
      }
      for (const { document, admission: a } of scan.entries) {
        if (a.kind === 'ignored') continue;
        if (a.kind === 'refused') {
          own.push({ file, document, kind: a.objectKind, name: a.name, message: a.message });
          troubled.add(file);
          if (a.key && !refusedKeys.has(a.key)) refusedKeys.set(a.key, file);
          continue;
        }
        const key = keyOf(a.object);
        const existing = desired.get(key);
        if (existing) {
          own.push({
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
      fileKeys.get(file)?.add(key);
    };
    for (const file of troubled) for (const key of this.fileKeys.get(file) ?? []) keep(key, file);
    for (const [key, file] of refusedKeys) keep(key, file);
    return { desired, fileKeys, problems, skipped };
  }

  /**
   * Fills server-owned metadata on new objects and writes the difference for the `affected`
   * keys to the store. An object whose content did not change keeps the instance already in
   * the store, so the store sees no update.
   */
  private commit(desired: Map<string, Accepted>, affected: Set<string>): void {
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
    for (const key of affected) {
      const prev = this.applied.get(key);
      if (prev && !desired.has(key)) {
        this.store.delete(prev.object.kind, objectNamespace(prev.object), prev.object.metadata.name);
        this.applied.delete(key);
      }
    }
    for (const [key, acc] of desired) this.applied.set(key, acc);
  }

  private name(file: string, keys: Set<string>): void {
    if (keys.size === 0) return;
    this.fileNames.set(file, keys);
    for (const key of keys) {
      const files = this.namedBy.get(key);
      if (files === undefined) this.namedBy.set(key, file);
      else if (typeof files !== 'string') files.add(file);
      else if (files !== file) this.namedBy.set(key, new Set([files, file]));
    }
  }

  private unname(file: string): void {
    const keys = this.fileNames.get(file);
    if (!keys) return;
    this.fileNames.delete(file);
    for (const key of keys) {
      const files = this.namedBy.get(key);
      if (typeof files === 'string') {
        if (files === file) this.namedBy.delete(key);
        continue;
      }
      files?.delete(file);
      if (files?.size === 1) this.namedBy.set(key, files.values().next().value!);
      else if (files?.size === 0) this.namedBy.delete(key);
    }
  }
}

/**
 * Returns the keys a file names: `keys` (those it contributes) and `names` (those its scan defines
 * or refuses). That is `keys` itself, shared with fileKeys, when it holds every name already (the
 * usual case: a file whose objects were all accepted), else a new Set of both in that order.
 */
function namesWith(keys: Set<string> | undefined, names: readonly string[]): Set<string> {
  if (keys && names.every((name) => keys.has(name))) return keys;
  return new Set([...(keys ?? []), ...names]);
}

/** The keys a scan defines or refuses. */
function namesOf(scan: FileScan | undefined): string[] {
  const keys: string[] = [];
  for (const { admission: a } of scan?.entries ?? []) {
    if (a.kind === 'ok') keys.push(keyOf(a.object));
    else if (a.kind === 'refused' && a.key) keys.push(a.key);
  }
  return keys;
}
