import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from '../../../src/gateway/routes/duration';

test('parseDuration: Gateway API (GEP-2257) durations', () => {
  const cases: [string, number | undefined][] = [
    ['10s', 10_000],
    ['500ms', 500],
    ['0s', 0],
    ['1h', 3_600_000],
    ['1m', 60_000],
    ['1h2m', 3_720_000],
    ['1h2m3s4ms', 3_723_004],
    ['2m500ms', 120_500],
    ['99999ms', 99_999],
    ['', undefined],
    ['10', undefined],
    ['1.5s', undefined],
    ['-1s', undefined],
    ['1d', undefined],
    ['100000s', undefined], // six digits
    ['1h1h1h1h1h', undefined], // five groups
    [' 1s', undefined],
    ['1S', undefined],
  ];
  for (const [input, expected] of cases) assert.equal(parseDuration(input), expected, input);
});
