import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { World, SIZES } from '../../bench/world';
import { objectFileName, writeWorldFiles } from '../../bench/world-files';
import { FileProvider } from '../../src/providers/files/provider';
import { ObjectStore } from '../../src/store/store';
import { silentLogger } from '../../src/observability/logger';
import { keyOf } from '../../src/store/objects';

describe('bench world written as files', () => {
  test('objectFileName puts namespaced objects in their namespace folder and the rest in _cluster', () => {
    const world = new World({ size: SIZES.tiny });
    assert.equal(objectFileName(world.listenerSet(3)), 'tenant-1/listenerset-ls-3.yaml');
    assert.equal(objectFileName(world.secret(0), 'json'), 'tenant-0/secret-cert-0.json');
    assert.equal(objectFileName(world.gatewayClass()), '_cluster/gatewayclass-convoy-bench.yaml');
  });

  for (const format of ['yaml', 'json'] as const) {
    test(`the file provider loads the ${format} files into exactly the world's objects`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'convoy-world-files-'));
      try {
        const world = new World({ size: SIZES.tiny });
        const written = writeWorldFiles(world, dir, { format });
        const objects = world.objects();
        assert.equal(written, objects.length);
        // Atomic writes leave no temporary files behind.
        const tenant0 = await readdir(join(dir, 'tenant-0'));
        assert.ok(tenant0.length > 0 && tenant0.every((f) => !f.startsWith('.')), tenant0.join());

        const store = new ObjectStore();
        const provider = new FileProvider({ dir, store, logger: silentLogger(), pollIntervalMs: 0 });
        await provider.start();
        try {
          assert.deepEqual(provider.problems(), []);
          for (const o of objects) {
            const got = store.get(o.kind, o.metadata.namespace ?? '', o.metadata.name);
            assert.ok(got, `missing ${keyOf(o)}`);
            const { metadata: gotMeta, ...gotRest } = got;
            const { metadata: wantMeta, ...wantRest } = o;
            assert.deepEqual(gotRest, wantRest, keyOf(o));
            assert.deepEqual(gotMeta.labels, wantMeta.labels, keyOf(o));
          }
        } finally {
          await provider.stop();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
