import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { WriteWindow } from '../../src/kubernetes/write-window';

describe('WriteWindow (status writes in flight from the echoes’ watch lag)', () => {
  test('starts at the maximum unless told otherwise, within min and max', () => {
    assert.equal(new WriteWindow({ max: 32 }).limit, 32);
    assert.equal(new WriteWindow({ max: 32, initial: 8 }).limit, 8);
    assert.equal(new WriteWindow({ max: 32, initial: 100 }).limit, 32);
    assert.equal(new WriteWindow({ max: 32, min: 4, initial: 1 }).limit, 4);
  });

  test('a late echo halves the window once per generation, down to min', () => {
    const w = new WriteWindow({ max: 32, initial: 32, targetLagMs: 100 });
    const g = w.generation;
    w.observe(500, g);
    assert.equal(w.limit, 16);
    // Writes started before the decrease were sent at the old size: they do not count again.
    w.observe(900, g);
    w.observe(900, g);
    assert.equal(w.limit, 16);
    w.observe(500, w.generation);
    assert.equal(w.limit, 8);
    for (let i = 0; i < 10; i++) w.observe(1000, w.generation);
    assert.equal(w.limit, 1);
    const floor = new WriteWindow({ max: 32, min: 3, initial: 32 });
    for (let i = 0; i < 10; i++) floor.observe(1000, floor.generation);
    assert.equal(floor.limit, 3);
  });

  test('a window of on-time echoes grows it by one, up to max', () => {
    const w = new WriteWindow({ max: 6, initial: 4, targetLagMs: 100 });
    for (let i = 0; i < 3; i++) w.observe(20, w.generation);
    assert.equal(w.limit, 4);
    w.observe(100, w.generation); // at the target is on time
    assert.equal(w.limit, 5);
    for (let i = 0; i < 5; i++) w.observe(0, w.generation);
    assert.equal(w.limit, 6);
    for (let i = 0; i < 50; i++) w.observe(0, w.generation);
    assert.equal(w.limit, 6);
  });

  test('a lag that is not a number changes nothing; a negative one (echo first) is on time', () => {
    const w = new WriteWindow({ max: 8, initial: 2 });
    w.observe(Number.NaN, w.generation);
    w.observe(Number.POSITIVE_INFINITY, w.generation);
    assert.equal(w.limit, 2);
    w.observe(-5, w.generation);
    w.observe(-5, w.generation);
    assert.equal(w.limit, 3);
  });

  test('property: the window always stays within [min, max] whatever the lags', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 50; round++) {
      const max = 1 + Math.floor(rand() * 64);
      const min = 1 + Math.floor(rand() * max);
      const w = new WriteWindow({ max, min, initial: Math.floor(rand() * 80) });
      for (let i = 0; i < 500; i++) {
        const generation = rand() < 0.2 ? Math.max(0, w.generation - 1) : w.generation;
        w.observe(rand() * 400 - 50, generation);
        assert.ok(w.limit >= min && w.limit <= max, `limit ${w.limit} outside [${min}, ${max}]`);
      }
    }
  });
});
