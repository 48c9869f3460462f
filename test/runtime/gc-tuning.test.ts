import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  applyExtraV8Flags,
  GC_FLAG,
  HEAP_GROWING_FLAG,
  supportsGcTuning,
  tuneGarbageCollection,
} from '../../src/runtime/gc-tuning';

describe('GC tuning', () => {
  test('the version rule matches what this runtime knows (run on Node 20 and Node 24)', () => {
    const options = execFileSync(process.execPath, ['--v8-options'], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    assert.equal(options.includes(GC_FLAG.slice(2)), supportsGcTuning(), `V8 ${process.versions.v8}`);
    if (supportsGcTuning()) assert.ok(options.includes(HEAP_GROWING_FLAG.slice(2).split('=')[0]));
  });

  test('versions', () => {
    assert.equal(supportsGcTuning('11.3.244.8-node.33'), false);
    assert.equal(supportsGcTuning('12.4.254.21-node.33'), false);
    assert.equal(supportsGcTuning('13.6.233.17-node.37'), true);
  });

  test('applying it is accepted by V8 where supported', () => {
    assert.equal(tuneGarbageCollection().tuned, supportsGcTuning());
  });

  test('on a cold start the growing factor waits until ready, then is applied once', async () => {
    if (!supportsGcTuning()) return;
    let ready = false;
    let applied = 0;
    const tuning = tuneGarbageCollection({}, { isReady: () => ready, onApplied: () => applied++ });
    const { stop } = tuning;
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(applied, 0, 'not before ready');
    assert.equal(tuning.applied(), false);
    ready = true;
    for (let i = 0; i < 40 && applied === 0; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(applied, 1, 'applied once ready');
    assert.equal(tuning.applied(), true);
    await new Promise((r) => setTimeout(r, 150));
    stop();
    assert.equal(applied, 1, 'and only once, stop after it does nothing');
  });

  test('stopping before ready applies the growing factor at once', () => {
    if (!supportsGcTuning()) return;
    let applied = 0;
    const { stop } = tuneGarbageCollection({}, { isReady: () => false, onApplied: () => applied++ });
    stop();
    stop();
    assert.equal(applied, 1);
  });

  test('CONVOY_V8_FLAGS applies its flags and skips words that are not flags', () => {
    const env = { CONVOY_V8_FLAGS: ' --max-lazy  stray --no-max-lazy ' };
    assert.deepEqual(applyExtraV8Flags(env), ['--max-lazy', '--no-max-lazy']);
    assert.deepEqual(applyExtraV8Flags({}), []);
  });
});
