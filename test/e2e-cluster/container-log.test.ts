import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderLog } from '../../e2e/cluster/container-log';
import { logQuery } from '../../e2e/cluster/kubelet-server';

const stored = [
  '2026-01-01T00:00:00.000Z stdout first',
  '2026-01-01T00:00:05.000Z stderr second line',
  '2026-01-01T00:00:10.000Z stdout third',
  '',
].join('\n');

test('renderLog honours sinceTime, sinceSeconds, tailLines, timestamps and limitBytes like kubectl logs', () => {
  assert.equal(renderLog(stored, {}), 'first\nsecond line\nthird\n');
  assert.equal(renderLog(stored, { sinceTime: '2026-01-01T00:00:05Z' }), 'second line\nthird\n');
  assert.equal(renderLog(stored, { sinceSeconds: 6 }, Date.parse('2026-01-01T00:00:12Z')), 'third\n');
  assert.equal(
    renderLog(stored, { tailLines: 2, timestamps: true }),
    '2026-01-01T00:00:05.000Z second line\n2026-01-01T00:00:10.000Z third\n',
  );
  assert.equal(renderLog(stored, { tailLines: 0 }), '');
  assert.equal(renderLog(stored, { limitBytes: 8 }), 'first\nse');
});

test('logQuery reads the containerLogs query the API server forwards', () => {
  const q = logQuery(
    new URLSearchParams(
      'sinceTime=2026-01-01T00:00:05Z&tailLines=3&timestamps=true&previous=true&limitBytes=x',
    ),
  );
  assert.deepEqual(q, {
    sinceTime: '2026-01-01T00:00:05Z',
    sinceSeconds: undefined,
    tailLines: 3,
    limitBytes: undefined,
    timestamps: true,
    previous: true,
  });
});
