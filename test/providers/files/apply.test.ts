import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StoreApplier } from '../../../src/providers/files/apply';
import { MetadataAssigner } from '../../../src/providers/files/apiserver';
import type { FileScan } from '../../../src/providers/files/scan';
import type { KubeObject } from '../../../src/store/objects';
import { ObjectStore } from '../../../src/store/store';

/** A file's content as plain data: each document is an object (name, value) or a refusal. */
interface FileSpec {
  broken: boolean;
  problem: boolean;
  docs: ({ ok: true; name: string; value: number } | { ok: false; name: string })[];
}

/** A small deterministic random source (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
const FILES = ['f0.yaml', 'f1.yaml', 'f2.yaml', 'f3.yaml', 'f4.yaml', 'f5.yaml'];

function randomSpec(rand: () => number): FileSpec {
  const docs: FileSpec['docs'] = [];
  const n = Math.floor(rand() * 3);
  for (let i = 0; i < n; i++) {
    const name = NAMES[Math.floor(rand() * NAMES.length)];
    docs.push(rand() < 0.85 ? { ok: true, name, value: Math.floor(rand() * 3) } : { ok: false, name });
  }
  return { broken: rand() < 0.1, problem: rand() < 0.1, docs };
}

/** Builds the FileScan of a spec (new objects every time: appliers fill metadata in place). */
function scanOf(file: string, spec: FileSpec): FileScan {
  return {
    file,
    broken: spec.broken,
    problems: spec.problem ? [{ file, message: 'whole-file problem' }] : [],
    entries: spec.docs.map((d, document) => ({
      document,
      admission: d.ok
        ? {
            kind: 'ok' as const,
            object: {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: d.name, namespace: 'ns' },
              data: { v: String(d.value) },
            } as KubeObject,
          }
        : {
            kind: 'refused' as const,
            message: 'refused',
            objectKind: 'ConfigMap',
            name: d.name,
            key: `ConfigMap/ns/${d.name}`,
          },
    })),
  };
}

/** One applier with its store, and the scan object it holds per file while the file is unchanged. */
class Side {
  readonly store = new ObjectStore();
  readonly applier: StoreApplier;
  private readonly scans = new Map<string, { spec: FileSpec; scan: FileScan }>();
  constructor(incremental: boolean) {
    this.applier = new StoreApplier(this.store, new MetadataAssigner(), { incremental });
  }
  apply(files: Map<string, FileSpec>, unseen: Set<string>) {
    return this.applier.apply(this.scansOf(files), (file) => unseen.has(file));
  }
  /** As the file provider after a watch report naming `touched`: applyFiles over those alone. */
  applyNamed(files: Map<string, FileSpec>, unseen: Set<string>, touched: string[]) {
    const scans = this.scansOf(files);
    const byFile = new Map(scans.map((scan) => [scan.file, scan]));
    return this.applier.applyFiles(
      touched,
      (file) => byFile.get(file),
      (file) => unseen.has(file),
      () => scans,
    );
  }
  private scansOf(files: Map<string, FileSpec>): FileScan[] {
    const scans: FileScan[] = [];
    for (const file of FILES) {
      const spec = files.get(file);
      if (!spec) {
        this.scans.delete(file);
        continue;
      }
      let held = this.scans.get(file);
      if (held?.spec !== spec) this.scans.set(file, (held = { spec, scan: scanOf(file, spec) }));
      scans.push(held.scan);
    }
    return scans;
  }
  contents(): unknown[] {
    return this.store
      .list('ConfigMap')
      .map((o) => [o.metadata.name, (o as unknown as { data: unknown }).data])
      .sort((x, y) => String(x[0]).localeCompare(String(y[0])));
  }
}

test('the incremental applier gives the same store and problems as deciding every file each time', () => {
  let changedOnly = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const rand = random(seed);
    const incremental = new Side(true);
    const full = new Side(false);
    const files = new Map<string, FileSpec>();
    for (let step = 0; step < 25; step++) {
      // Change one or two files: new content, deleted, or (back) present.
      const changes = 1 + Math.floor(rand() * 2);
      for (let c = 0; c < changes; c++) {
        const file = FILES[Math.floor(rand() * FILES.length)];
        if (files.has(file) && rand() < 0.15) files.delete(file);
        else files.set(file, randomSpec(rand));
      }
      const unseen = new Set<string>(rand() < 0.1 ? [FILES[Math.floor(rand() * FILES.length)]] : []);
      const got = incremental.apply(files, unseen);
      const want = full.apply(files, unseen);
      const where = `seed ${seed} step ${step}`;
      assert.deepEqual(got, want, `problems, ${where}`);
      assert.deepEqual(incremental.contents(), full.contents(), `store, ${where}`);
      assert.equal(incremental.applier.size, full.applier.size, `size, ${where}`);
    }
    changedOnly += incremental.applier.changedOnlyApplies;
    assert.equal(full.applier.changedOnlyApplies, 0);
  }
  // The comparison means something only if the changed-only path ran often.
  assert.ok(changedOnly > 1000, `changed-only applies: ${changedOnly}`);
});

test('applying only the files a change named gives what deciding every file gives', () => {
  let changedOnly = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const rand = random(seed);
    const named = new Side(true);
    const full = new Side(false);
    const files = new Map<string, FileSpec>();
    let unseen = new Set<string>();
    for (let step = 0; step < 25; step++) {
      const touched: string[] = [];
      const changes = 1 + Math.floor(rand() * 3);
      for (let c = 0; c < changes; c++) {
        const file = FILES[Math.floor(rand() * FILES.length)];
        touched.push(file);
        const roll = rand();
        if (files.has(file) && roll < 0.15) files.delete(file);
        else if (roll < 0.9) files.set(file, randomSpec(rand));
        // else: named by an event, content unchanged (its scan is the same object).
      }
      // Only a full rescan changes which files could not be looked at; the provider then applies
      // every file, as here.
      const fullRescan = rand() < 0.1;
      if (fullRescan) unseen = new Set(rand() < 0.5 ? [FILES[Math.floor(rand() * FILES.length)]] : []);
      const got = fullRescan ? named.apply(files, unseen) : named.applyNamed(files, unseen, touched);
      const want = full.apply(files, unseen);
      const where = `seed ${seed} step ${step}`;
      assert.deepEqual(got, want, `problems, ${where}`);
      assert.deepEqual(named.contents(), full.contents(), `store, ${where}`);
      assert.equal(named.applier.size, full.applier.size, `size, ${where}`);
    }
    changedOnly += named.applier.changedOnlyApplies;
  }
  assert.ok(changedOnly > 1000, `changed-only applies: ${changedOnly}`);
});
