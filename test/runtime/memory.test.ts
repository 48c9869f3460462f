import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MALLOC_ENV, hasMallocEnv } from '../../src/runtime/memory';

const repo = path.resolve(__dirname, '..', '..', '..');

describe('native-memory settings', () => {
  test('the image sets every MALLOC_ENV variable', () => {
    const dockerfile = fs.readFileSync(path.join(repo, 'Dockerfile'), 'utf8');
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    for (const [k, v] of Object.entries(MALLOC_ENV))
      assert.match(runtimeStage, new RegExp(`^ENV ${k}=${v}$`, 'm'));
  });

  test('scripts/demo.sh starts Convoy with every MALLOC_ENV variable', () => {
    const demo = fs.readFileSync(path.join(repo, 'scripts', 'demo.sh'), 'utf8');
    const serveLine = demo.split('\n').find((line) => line.includes('main.js serve'));
    assert.ok(serveLine, 'demo.sh has a line starting convoy serve');
    for (const [k, v] of Object.entries(MALLOC_ENV)) assert.match(serveLine, new RegExp(`\\b${k}=${v}\\b`));
  });

  test('hasMallocEnv', () => {
    assert.equal(hasMallocEnv({ ...MALLOC_ENV }), true);
    assert.equal(hasMallocEnv({}), false);
    assert.equal(hasMallocEnv({ MALLOC_MMAP_THRESHOLD_: '1' }), false);
  });
});
