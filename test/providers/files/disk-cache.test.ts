import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { FileProvider } from '../../../src/providers/files/provider';
import { CACHE_FILE_NAME, ScanDiskCache, scanCacheKey } from '../../../src/providers/files/disk-cache';
import { ObjectStore } from '../../../src/store/store';
import { silentLogger } from '../../../src/observability/logger';
import type { KubeObject } from '../../../src/store/objects';

const SVC = (name: string, port = 80) => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: apps
spec:
  ports:
  - port: ${port}
`;

const ROUTE = (name: string, host: string) => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: ${name}
  namespace: apps
spec:
  hostnames: ["${host}"]
  rules:
  - backendRefs:
    - name: svc-0
      port: 80
`;

let dir: string;
let cacheDir: string;

async function put(rel: string, content: string): Promise<void> {
  const p = join(dir, rel);
  await mkdir(dirname(p), { recursive: true });
  const tmp = join(dirname(p), `.${basename(p)}.tmp`);
  await writeFile(tmp, content);
  await rename(tmp, p);
}

/** Starts a provider on `dir` with the cache, stops it (which writes the cache) and reports. */
async function run(convoyVersion = '1.0.0'): Promise<{
  hits: number;
  objects: KubeObject[];
  problems: string[];
}> {
  const store = new ObjectStore();
  const provider = new FileProvider({
    dir,
    store,
    logger: silentLogger(),
    pollIntervalMs: 0,
    settleMs: 0,
    cache: { dir: cacheDir, convoyVersion },
  });
  try {
    await provider.start();
    const objects = ['Service', 'HTTPRoute'].flatMap((k) => store.list(k));
    return {
      hits: provider.diskCacheHitCount,
      objects,
      problems: provider.problems().map((p) => `${p.file}${p.document ?? ''}: ${p.message}`),
    };
  } finally {
    await provider.stop();
  }
}

/** Objects without the metadata a run assigns (the creation time differs between runs). */
function content(objects: KubeObject[]): string[] {
  return objects
    .map((o) => JSON.stringify({ ...o, metadata: { ...o.metadata, creationTimestamp: undefined } }))
    .sort();
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convoy-files-'));
  cacheDir = await mkdtemp(join(tmpdir(), 'convoy-files-cache-'));
  for (let i = 0; i < 5; i++) await put(`apps/svc-${i}.yaml`, SVC(`svc-${i}`));
  await put('apps/routes.yaml', `${ROUTE('r-0', 'a.example.com')}---\n${ROUTE('r-1', 'b.example.com')}`);
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(cacheDir, { recursive: true, force: true });
});

describe('file provider scan cache on disk', () => {
  test('a first run misses and writes the cache; a second run hits every file and stores the same objects', async () => {
    const first = await run();
    assert.equal(first.hits, 0);
    assert.equal(first.objects.length, 7);
    const written = await stat(join(cacheDir, CACHE_FILE_NAME));
    assert.equal(written.mode & 0o777, 0o600, 'the cache holds what the files hold: private');
    assert.equal((await stat(cacheDir)).mode & 0o777, 0o700);
    const second = await run();
    assert.equal(second.hits, 6);
    assert.deepEqual(content(second.objects), content(first.objects));
  });

  test('a file whose content changed misses and its new objects are stored; the others hit', async () => {
    await run();
    await put('apps/svc-3.yaml', SVC('svc-3', 8443));
    const second = await run();
    assert.equal(second.hits, 5);
    const svc3 = second.objects.find((o) => o.metadata.name === 'svc-3');
    assert.deepEqual((svc3?.spec as { ports: { port: number }[] }).ports, [{ port: 8443 }]);
    // The cache was rewritten with the new content: a third run hits all.
    assert.equal((await run()).hits, 6);
  });

  test('a broken file gives the same problem, naming file and document, from the cache', async () => {
    await put('apps/broken.yaml', `${SVC('svc-b')}---\nkind: [unclosed\n`);
    const first = await run();
    assert.ok(
      first.problems.some((p) => p.startsWith('apps/broken.yaml1: ')),
      first.problems.join('\n'),
    );
    const second = await run();
    assert.equal(second.hits, 7);
    assert.deepEqual(second.problems, first.problems);
    assert.deepEqual(content(second.objects), content(first.objects));
  });

  test('a corrupt cache file is ignored as a whole and rewritten', async () => {
    const first = await run();
    const path = join(cacheDir, CACHE_FILE_NAME);
    const bytes = await readFile(path);
    bytes[bytes.length - 10] ^= 0xff;
    await writeFile(path, bytes);
    const second = await run();
    assert.equal(second.hits, 0);
    assert.deepEqual(content(second.objects), content(first.objects));
    assert.equal((await run()).hits, 6);
  });

  test('a truncated or foreign cache file is ignored', async () => {
    const first = await run();
    const path = join(cacheDir, CACHE_FILE_NAME);
    const bytes = await readFile(path);
    await writeFile(path, bytes.subarray(0, bytes.length >> 1));
    assert.equal((await run()).hits, 0);
    await writeFile(path, 'not a cache');
    const third = await run();
    assert.equal(third.hits, 0);
    assert.deepEqual(content(third.objects), content(first.objects));
  });

  test('another Convoy version does not read the cache', async () => {
    await run('1.0.0');
    assert.equal((await run('1.0.1')).hits, 0);
    assert.equal((await run('1.0.1')).hits, 6);
  });

  test('an entry that does not decode to a scan of its file is not used: the file is parsed', async () => {
    const limits = { maxFileBytes: 4 * 1024 * 1024, maxObjectBytes: 1024 * 1024 };
    const key = scanCacheKey('1.0.0', limits);
    // A well-formed cache whose entry for svc-0 claims svc-0's hash but holds svc-1's scan.
    await run();
    const cache = new ScanDiskCache(cacheDir, key);
    assert.equal((await cache.load()).entries, 6);
    const svc0 = cache.lookup('apps/svc-0.yaml')!;
    const svc1 = cache.lookup('apps/svc-1.yaml')!;
    assert.ok(cache.decode('apps/svc-1.yaml', svc1));
    assert.equal(cache.decode('apps/svc-0.yaml', svc1), undefined, 'a scan of another file');
    for (const f of ['apps/routes.yaml', 'apps/svc-2.yaml', 'apps/svc-3.yaml', 'apps/svc-4.yaml']) {
      cache.keep(f, cache.lookup(f)!);
    }
    cache.keep('apps/svc-0.yaml', { hash: svc0.hash, bytes: svc1.bytes });
    cache.keep('apps/svc-1.yaml', svc1);
    await cache.write(['apps/routes.yaml', ...[0, 1, 2, 3, 4].map((i) => `apps/svc-${i}.yaml`)]);
    const second = await run();
    assert.equal(second.hits, 5);
    assert.deepEqual(
      second.objects
        .filter((o) => o.kind === 'Service')
        .map((o) => o.metadata.name)
        .sort(),
      ['svc-0', 'svc-1', 'svc-2', 'svc-3', 'svc-4'],
    );
  });
});
