import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LAUNCH_NODE_OPTIONS, MALLOC_ENV, hasMallocEnv, launchEnv } from '../../src/runtime/memory';

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

  test('the image and the manifests start Convoy with every LAUNCH_NODE_OPTIONS option', () => {
    const dockerfile = fs.readFileSync(path.join(repo, 'Dockerfile'), 'utf8');
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const imageOptions = /^ENV NODE_OPTIONS=(.*)$/m.exec(runtimeStage)?.[1]?.split(/\s+/) ?? [];
    for (const o of LAUNCH_NODE_OPTIONS)
      assert.ok(imageOptions.includes(o), `the image's NODE_OPTIONS has ${o}`);
    // A manifest's NODE_OPTIONS replaces the image's: each must carry the options again.
    for (const manifest of ['deploy/10-convoy.yaml', 'deploy/managed/10-convoy.yaml']) {
      const text = fs.readFileSync(path.join(repo, manifest), 'utf8');
      const value = /- name: NODE_OPTIONS\n\s+value: (.*)$/m.exec(text)?.[1]?.split(/\s+/) ?? [];
      for (const o of LAUNCH_NODE_OPTIONS)
        assert.ok(value.includes(o), `${manifest}'s NODE_OPTIONS has ${o}`);
    }
    const demo = fs.readFileSync(path.join(repo, 'scripts', 'demo.sh'), 'utf8');
    const serveLine = demo.split('\n').find((line) => line.includes('main.js serve')) ?? '';
    for (const o of LAUNCH_NODE_OPTIONS) assert.ok(serveLine.includes(o), `demo.sh starts Convoy with ${o}`);
  });

  test("launchEnv adds the launch options after the caller's, and a caller's own setting wins", () => {
    assert.deepEqual(launchEnv({}), { ...MALLOC_ENV, NODE_OPTIONS: LAUNCH_NODE_OPTIONS.join(' ') });
    assert.equal(
      launchEnv({ NODE_OPTIONS: '--cpu-prof  --max-old-space-size=384' }).NODE_OPTIONS,
      ['--cpu-prof', '--max-old-space-size=384', ...LAUNCH_NODE_OPTIONS].join(' '),
    );
    assert.equal(
      launchEnv({ NODE_OPTIONS: '--max-semi-space-size=64' }).NODE_OPTIONS,
      '--max-semi-space-size=64',
    );
    assert.equal(
      launchEnv({ NODE_OPTIONS: '--max_semi_space_size=8' }).NODE_OPTIONS,
      '--max_semi_space_size=8',
    );
  });

  test('hasMallocEnv', () => {
    assert.equal(hasMallocEnv({ ...MALLOC_ENV }), true);
    assert.equal(hasMallocEnv({}), false);
    assert.equal(hasMallocEnv({ MALLOC_MMAP_THRESHOLD_: '1' }), false);
  });
});
