import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { FileProvider } from '../../../src/providers/files/provider';
import { uidFor } from '../../../src/providers/files/apiserver';
import { ObjectStore } from '../../../src/store/store';
import { silentLogger } from '../../../src/observability/logger';
import { ConvoyMetrics } from '../../../src/observability/metrics';
import type { KubeObject } from '../../../src/store/objects';
import type { StoreChange } from '../../../src/store/store';

const GW = (name: string, port = 80, extra = '') => `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: ${name}${extra}
spec:
  gatewayClassName: convoy
  listeners:
  - name: http
    protocol: HTTP
    port: ${port}
`;

const SVC = (name: string, ns = 'default') => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  ports:
  - port: 80
`;

let dir: string;
let store: ObjectStore;
let metrics: ConvoyMetrics;
let provider: FileProvider | undefined;

/**
 * Writes a file atomically (a hidden temporary file renamed into place), as editors and
 * ConfigMap volumes do. The provider watches the directory while tests write: a plain
 * writeFile truncates first, and a rescan that runs in between (a busy CPU stretches the gap
 * past the debounce) would see an empty file and delete its objects.
 */
async function put(rel: string, content: string): Promise<void> {
  const p = join(dir, rel);
  await mkdir(dirname(p), { recursive: true });
  const tmp = join(dirname(p), `.${basename(p)}.tmp`);
  await writeFile(tmp, content);
  await rename(tmp, p);
}

function newProvider(
  opts: { debounceMs?: number; maxFileBytes?: number; maxEntries?: number; settleMs?: number } = {},
): FileProvider {
  provider = new FileProvider({
    dir,
    store,
    logger: silentLogger(),
    metrics,
    debounceMs: opts.debounceMs ?? 30,
    pollIntervalMs: 0,
    maxFileBytes: opts.maxFileBytes,
    maxEntries: opts.maxEntries,
    // Tests write files atomically (put) and read them at once, unless they test settling.
    settleMs: opts.settleMs ?? 0,
  });
  return provider;
}

/** Polls until `cond` holds; the deadline only bounds a test that is already failing. */
async function waitFor(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function gw(name: string, ns = 'default'): KubeObject | undefined {
  return store.get('Gateway', ns, name);
}

function listenerPort(o: KubeObject | undefined): number | undefined {
  return (o?.spec as { listeners: { port: number }[] } | undefined)?.listeners[0].port;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convoy-files-'));
  store = new ObjectStore();
  metrics = new ConvoyMetrics();
});

afterEach(async () => {
  await provider?.stop();
  provider = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('FileProvider initial load', () => {
  test('reads multi-document YAML, JSON objects and Lists, nested directories; ignores the rest', async () => {
    await put('a.yaml', `${GW('one')}---\n${SVC('svc1', 'apps')}---\n`);
    await put(
      'nested/deeper/b.json',
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps', labels: { a: 'b' } } }),
    );
    await put(
      'nested/list.json',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'svc2' },
            spec: { ports: [{ port: 8080 }] },
          },
          { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ignored' }, spec: {} },
        ],
      }),
    );
    await put('c.yml', GW('two', 8080));
    await put('notes.txt', GW('never'));
    await put('.hidden.yaml', GW('hidden'));
    await put('..data/x.yaml', GW('configmap-internal'));
    await put('other.yaml', 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod\n');
    await put('istio.yaml', GW('istio').replace('gateway.networking.k8s.io/v1', 'networking.istio.io/v1'));

    const p = newProvider();
    assert.equal(store.isSynced(), false);
    await p.start();
    assert.equal(store.isSynced(), true);
    assert.deepEqual(p.problems(), []);

    assert.ok(gw('one'));
    assert.equal(listenerPort(gw('two')), 8080);
    assert.ok(store.get('Service', 'apps', 'svc1'));
    assert.ok(store.get('Service', 'default', 'svc2'), 'namespace defaults to "default"');
    const ns = store.get('Namespace', '', 'apps');
    assert.ok(ns);
    assert.equal(ns.metadata.namespace, undefined, 'cluster-scoped objects have no namespace');
    assert.equal(gw('never'), undefined);
    assert.equal(gw('hidden'), undefined);
    assert.equal(gw('configmap-internal'), undefined);
    assert.equal(gw('istio'), undefined, 'a Gateway of another API group is not ours');
    assert.equal(store.list('Pod').length, 0);
    assert.equal(store.size(), 5);
  });

  test('fills namespace, uid, creationTimestamp and generation; keeps values the file sets', async () => {
    await put('a.yaml', GW('one'));
    await put(
      'b.yaml',
      GW('two', 80, '\n  namespace: team\n  generation: 7\n  creationTimestamp: "2020-01-02T03:04:05Z"'),
    );
    const p = newProvider();
    await p.start();
    const one = gw('one')!;
    assert.equal(one.metadata.namespace, 'default');
    assert.equal(one.metadata.generation, 1);
    assert.match(one.metadata.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(one.metadata.uid, uidFor('Gateway/default/one'));
    assert.match(one.metadata.uid!, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(uidFor('Gateway/default/one'), uidFor('Gateway/default/two'));
    const two = gw('two', 'team')!;
    assert.equal(two.metadata.generation, 7);
    assert.equal(two.metadata.creationTimestamp, '2020-01-02T03:04:05Z');
  });

  test('Secret stringData is merged into base64 data, overriding data keys', async () => {
    await put(
      's.yaml',
      `apiVersion: v1
kind: Secret
metadata:
  name: s
type: Opaque
data:
  a: ${Buffer.from('old').toString('base64')}
  b: ${Buffer.from('keep').toString('base64')}
stringData:
  a: new
  c: "3"
`,
    );
    const p = newProvider();
    await p.start();
    assert.deepEqual(p.problems(), []);
    const s = store.get('Secret', 'default', 's')!;
    assert.equal(s.stringData, undefined);
    const decoded = Object.fromEntries(
      Object.entries(s.data!).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    );
    assert.deepEqual(decoded, { a: 'new', b: 'keep', c: '3' });
  });

  test('a broken YAML document is reported with file and document index; the rest loads', async () => {
    await put('a-good.yaml', GW('good'));
    await put(
      'b-broken.yaml',
      `${SVC('first')}---\nkind: Service\nmetadata: {name: [unclosed\n---\n${SVC('third')}`,
    );
    await put('c-json.json', '{"apiVersion": "v1", "kind": ');
    const p = newProvider();
    await p.start();
    assert.ok(gw('good'));
    const probs = p.problems();
    const yamlProblem = probs.find((x) => x.file === 'b-broken.yaml');
    assert.ok(yamlProblem, JSON.stringify(probs));
    assert.equal(yamlProblem.document, 1);
    assert.match(yamlProblem.message, /YAML/);
    const jsonProblem = probs.find((x) => x.file === 'c-json.json');
    assert.ok(jsonProblem);
    assert.match(jsonProblem.message, /JSON/);
    // A file never seen parsing before contributes the documents that did parse.
    assert.ok(store.get('Service', 'default', 'first'));
    assert.equal(await metrics.invalidObjects.get().then((m) => m.values[0].value), probs.length);
  });
});

describe('FileProvider rescans', () => {
  test('creationTimestamp is stable across edits; generation bumps on spec change only', async () => {
    await put('a.yaml', GW('one'));
    const p = newProvider();
    await p.start();
    const first = gw('one')!;
    assert.equal(first.metadata.generation, 1);
    // Wait into the next second so a re-stamped creationTimestamp would show.
    const ts = first.metadata.creationTimestamp;
    await waitFor('clock to tick', () => new Date().toISOString().slice(0, 19) + 'Z' !== ts);

    await put('a.yaml', GW('one', 80, '\n  labels:\n    team: blue'));
    await p.reload();
    const labelled = gw('one')!;
    assert.deepEqual(labelled.metadata.labels, { team: 'blue' });
    assert.equal(labelled.metadata.generation, 1, 'a label change does not bump generation');
    assert.equal(labelled.metadata.creationTimestamp, ts);

    await put('a.yaml', GW('one', 81, '\n  labels:\n    team: blue'));
    await p.reload();
    const edited = gw('one')!;
    assert.equal(listenerPort(edited), 81);
    assert.equal(edited.metadata.generation, 2);
    assert.equal(edited.metadata.creationTimestamp, ts);
    assert.equal(edited.metadata.uid, first.metadata.uid);

    await p.reload();
    assert.equal(gw('one')!.metadata.generation, 2, 'a rescan without changes keeps the generation');
  });

  test('a rescan of an unchanged tree changes nothing and keeps every problem; an edit it finds is applied', async () => {
    await put('a.yaml', GW('one'));
    await put('b-broken.yaml', 'kind: [unclosed\n');
    const p = newProvider();
    await p.start();
    const problems = p.problems();
    assert.equal(problems.length, 1, JSON.stringify(problems));
    const changes: StoreChange[] = [];
    const off = store.onChange((c) => changes.push(c));
    // Unchanged tree: the rescans skip the apply (docs/architecture.md §10.1) and report as before.
    await p.reload();
    await p.reload();
    assert.equal(changes.length, 0, JSON.stringify(changes));
    assert.deepEqual(p.problems(), problems);
    // A rescan right after an edit (before the watcher's debounce) applies it, and only it.
    await put('a.yaml', GW('one', 81));
    await p.reload();
    off();
    assert.equal(listenerPort(gw('one')), 81);
    assert.deepEqual(
      changes.map((c) => `${c.type} ${c.kind}`),
      ['put Gateway'],
    );
    assert.deepEqual(p.problems(), problems);
  });

  test('a file that stops parsing keeps every object it served', async () => {
    await put('a.yaml', `${GW('one')}---\n${SVC('svc')}`);
    await put('b.yaml', GW('other'));
    const p = newProvider();
    await p.start();
    const rev = store.revision;

    await put('a.yaml', `${GW('one', 90)}---\nkind: Service\n  metadata: : bad\n`);
    await put('b.yaml', GW('other', 91));
    await p.reload();
    assert.equal(listenerPort(gw('one')), 80, 'broken file: last good version kept');
    assert.ok(store.get('Service', 'default', 'svc'));
    assert.equal(listenerPort(gw('other')), 91, 'other files keep being applied');
    assert.equal(store.revision, rev + 1);
    const probs = p.problems();
    assert.equal(probs.length, 1);
    assert.equal(probs[0].file, 'a.yaml');
    assert.equal(probs[0].document, 1);

    await put('a.yaml', GW('one', 90));
    await p.reload();
    assert.equal(listenerPort(gw('one')), 90);
    assert.equal(store.get('Service', 'default', 'svc'), undefined, 'clean file: removed object deleted');
    assert.deepEqual(p.problems(), []);
  });

  test('an invalid object is refused while its previous good version keeps serving', async () => {
    await put('a.yaml', `${GW('one')}---\n${GW('two')}`);
    const p = newProvider();
    await p.start();
    await put('a.yaml', `${GW('one', 70000)}---\n${GW('two', 8080)}`);
    await p.reload();
    assert.equal(listenerPort(gw('one')), 80, 'refused edit: previous version stays');
    assert.equal(listenerPort(gw('two')), 8080, 'valid edit in the same file applies');
    const probs = p.problems();
    assert.equal(probs.length, 1);
    assert.deepEqual(
      { file: probs[0].file, document: probs[0].document, kind: probs[0].kind, name: probs[0].name },
      { file: 'a.yaml', document: 0, kind: 'Gateway', name: 'one' },
    );
    assert.match(probs[0].message, /spec\.listeners\[0\]\.port/);
    assert.equal(await metrics.invalidObjects.get().then((m) => m.values[0].value), 1);

    // An object that was never valid is not served at all.
    await put('b.yaml', GW('new', 0));
    await p.reload();
    assert.equal(gw('new'), undefined);
    assert.equal(p.problems().length, 2);

    // Removing its name entirely still does not delete what was serving.
    await put('a.yaml', `${GW('one').replace('name: one', 'labels: {}')}---\n${GW('two', 8080)}`);
    await p.reload();
    assert.equal(listenerPort(gw('one')), 80);

    await put('a.yaml', `${GW('one', 81)}---\n${GW('two', 8080)}`);
    await unlink(join(dir, 'b.yaml'));
    await p.reload();
    assert.equal(listenerPort(gw('one')), 81);
    assert.equal(gw('one')!.metadata.generation, 2);
    assert.deepEqual(p.problems(), []);
    assert.equal(await metrics.invalidObjects.get().then((m) => m.values[0].value), 0);
  });

  test('deleting a file deletes its objects, even a kept last-good one', async () => {
    await put('a.yaml', `${GW('one')}---\n${SVC('svc')}`);
    await put('b.yaml', GW('two'));
    const p = newProvider();
    await p.start();
    await put('b.yaml', GW('two', 0));
    await p.reload();
    assert.ok(gw('two'));
    await unlink(join(dir, 'a.yaml'));
    await unlink(join(dir, 'b.yaml'));
    await p.reload();
    assert.equal(gw('one'), undefined);
    assert.equal(gw('two'), undefined);
    assert.equal(store.get('Service', 'default', 'svc'), undefined);
    assert.equal(store.size(), 0);
    assert.deepEqual(p.problems(), []);
  });

  test('duplicate objects: the first file by path wins, the second is a problem naming both', async () => {
    await put('b/dup.yaml', GW('same', 81));
    await put('a.yaml', GW('same', 80));
    const p = newProvider();
    await p.start();
    assert.equal(listenerPort(gw('same')), 80);
    const probs = p.problems();
    assert.equal(probs.length, 1);
    assert.equal(probs[0].file, 'b/dup.yaml');
    assert.equal(probs[0].name, 'same');
    assert.match(probs[0].message, /a\.yaml/);
    assert.match(probs[0].message, /b\/dup\.yaml/);

    // Moving an object from one file to another keeps it (same key, new content).
    await unlink(join(dir, 'a.yaml'));
    await p.reload();
    assert.equal(listenerPort(gw('same')), 81);
    assert.deepEqual(p.problems(), []);
  });

  test('a file grown over the size limit is reported by name; what it served keeps serving', async () => {
    await put('a.yaml', GW('one'));
    await put('b.yaml', SVC('svc'));
    const p = newProvider({ maxFileBytes: 4096 });
    await p.start();
    await put('a.yaml', `${GW('one', 81)}# ${'x'.repeat(5000)}\n`);
    await p.reload();
    assert.equal(listenerPort(gw('one')), 80);
    assert.deepEqual(p.problems(), [
      {
        file: 'a.yaml',
        message: `Too long: may not be more than 4096 bytes (the file is ${GW('one', 81).length + 5003} bytes; not read)`,
      },
    ]);
    assert.ok(store.get('Service', 'default', 'svc'));
  });

  test('an object over 1 MiB is refused as Kubernetes refuses it; its previous version stays', async () => {
    const secret = (blob: string) =>
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  blob: ${Buffer.from(blob).toString('base64')}\n`;
    await put('s.yaml', `${secret('small')}---\n${SVC('svc')}`);
    const p = newProvider();
    await p.start();
    await put('s.yaml', `${secret('x'.repeat(2 * 1024 * 1024))}---\n${SVC('svc')}  type: ClusterIP\n`);
    await p.reload();
    const s = store.get('Secret', 'default', 's');
    assert.equal(Buffer.from(s?.data?.blob ?? '', 'base64').toString(), 'small');
    assert.equal((store.get('Service', 'default', 'svc')?.spec as { type?: string }).type, 'ClusterIP');
    const probs = p.problems();
    assert.equal(probs.length, 1);
    assert.deepEqual(
      { file: probs[0].file, document: probs[0].document, kind: probs[0].kind, name: probs[0].name },
      { file: 's.yaml', document: 0, kind: 'Secret', name: 's' },
    );
    assert.match(probs[0].message, /^Too long: may not be more than 1048576 bytes/);
  });

  test('files the walk did not reach (entry limit) keep what they served', async () => {
    await put('b.yaml', GW('b'));
    await put('c.yaml', GW('c'));
    const p = newProvider({ maxEntries: 2 });
    await p.start();
    assert.ok(gw('b') && gw('c'));
    await put('a.yaml', GW('a'));
    await p.reload();
    assert.ok(gw('a') && gw('b'));
    assert.ok(gw('c'), 'c.yaml was not listed this time, not deleted');
    assert.deepEqual(
      p.problems().map((x) => x.file),
      ['c.yaml'],
    );
    await unlink(join(dir, 'a.yaml'));
    await unlink(join(dir, 'c.yaml'));
    await p.reload();
    assert.equal(gw('c'), undefined, 'listed again and gone: deleted');
    assert.deepEqual(p.problems(), []);
  });

  test('a vanished directory keeps serving and reports a problem', async () => {
    await put('a.yaml', GW('one'));
    const p = newProvider();
    await p.start();
    await rm(dir, { recursive: true, force: true });
    // The watcher reports the deleted file (and the directory) on its own: that must not delete
    // what the file served either.
    await waitFor('the watcher reports the vanished directory', () => p.problems().length === 1);
    assert.ok(gw('one'), 'still served after the watcher saw the deletions');
    await p.reload();
    assert.ok(gw('one'));
    assert.equal(p.problems().length, 1);
    await mkdir(dir);
  });
});

describe('FileProvider watching', () => {
  test('picks up additions, edits, atomic renames, new subdirectories and deletions', async () => {
    await put('a.yaml', GW('one'));
    const p = newProvider();
    await p.start();

    await put('b.yaml', GW('added'));
    await waitFor('added file', () => gw('added') !== undefined);

    // An in-place write (truncate, then write): a rescan may see the empty file in between;
    // what counts is the state the provider settles on.
    await writeFile(join(dir, 'a.yaml'), GW('one', 8081));
    await waitFor('edited file', () => listenerPort(gw('one')) === 8081);

    // Editors and ConfigMap volumes write a temporary file and rename it into place.
    await writeFile(join(dir, '.a.yaml.tmp'), GW('one', 8082));
    await rename(join(dir, '.a.yaml.tmp'), join(dir, 'a.yaml'));
    await waitFor('renamed-into-place file', () => listenerPort(gw('one')) === 8082);

    await mkdir(join(dir, 'sub'));
    await put('sub/inner/c.yaml', SVC('nested'));
    await waitFor(
      'file in a new subdirectory',
      () => store.get('Service', 'default', 'nested') !== undefined,
    );

    await put('sub/inner/c.yaml', SVC('nested') + '  type: ClusterIP\n');
    await waitFor('edit in a new subdirectory', () => {
      const s = store.get('Service', 'default', 'nested');
      return (s?.spec as { type?: string } | undefined)?.type === 'ClusterIP';
    });

    await unlink(join(dir, 'b.yaml'));
    await waitFor('deleted file', () => gw('added') === undefined);
    await rm(join(dir, 'sub'), { recursive: true });
    await waitFor('deleted directory', () => store.get('Service', 'default', 'nested') === undefined);
    assert.ok(gw('one'));
  });

  test('a ConfigMap volume update (..data symlink swap) is picked up; symlink loops are harmless', async () => {
    // The layout kubelet writes: ..<ts>/ holds the files, ..data -> ..<ts>, name -> ..data/name.
    await put('..2026_01/gw.yaml', GW('cm', 80));
    await symlink('..2026_01', join(dir, '..data'));
    await symlink('..data/gw.yaml', join(dir, 'gw.yaml'));
    await mkdir(join(dir, 'loop'));
    await symlink('..', join(dir, 'loop', 'up'));
    const p = newProvider();
    await p.start();
    assert.equal(listenerPort(gw('cm')), 80);
    assert.equal(store.size(), 1, 'the ..data copy and the loop are not read twice');
    assert.deepEqual(p.problems(), []);

    await put('..2026_02/gw.yaml', GW('cm', 8080));
    await symlink('..2026_02', join(dir, '..data_tmp'));
    await rename(join(dir, '..data_tmp'), join(dir, '..data'));
    await rm(join(dir, '..2026_01'), { recursive: true });
    await waitFor('swapped ConfigMap content', () => listenerPort(gw('cm')) === 8080);
    assert.equal(store.size(), 1);
  });

  test('a half-written file does not disturb what is serving', async () => {
    await put('a.yaml', GW('one'));
    const p = newProvider();
    await p.start();
    // A file cut off mid-document (put in place whole, so no rescan sees it empty first).
    await put('a.yaml', GW('one', 8080).slice(0, 60));
    await waitFor('problem reported', () => p.problems().length > 0);
    assert.equal(listenerPort(gw('one')), 80);
    await put('a.yaml', GW('one', 8080));
    await waitFor('fixed file applied', () => listenerPort(gw('one')) === 8080);
    assert.deepEqual(p.problems(), []);
  });
});

describe('FileProvider settle time', () => {
  test('a file rewritten in two writes is read only once it has settled, never half-written', async () => {
    await put('a.yaml', `${GW('one')}---\n${SVC('svc')}`);
    const p = newProvider({ settleMs: 3000 });
    await p.start();
    const changes: StoreChange[] = [];
    store.onChange((c) => changes.push(c));

    // First write: the Gateway edited, the Service not written yet. Parsed now, it would be a
    // clean file without the Service, which would delete it.
    await writeFile(join(dir, 'a.yaml'), `${GW('one', 8080)}---\n`);
    await p.reload();
    assert.equal(changes.length, 0, 'a file still being written is not read');
    await appendFile(join(dir, 'a.yaml'), SVC('svc'));
    await p.reload();
    assert.equal(changes.length, 0);

    await waitFor('the settled file applied', () => listenerPort(gw('one')) === 8080, 15_000);
    assert.deepEqual(
      changes.map((c) => `${c.type} ${c.key}`),
      ['put Gateway/default/one'],
      'one update, and the Service was never deleted',
    );
    assert.deepEqual(p.problems(), []);
  });

  test('start() waits for files still being written before it reports the store synced', async () => {
    await writeFile(join(dir, 'a.yaml'), GW('one'));
    const p = newProvider({ settleMs: 300 });
    await p.start();
    assert.equal(store.isSynced(), true);
    assert.ok(gw('one'), 'read once settled, before start() returned');
  });
});
