import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resourceStatuses, summarizeType } from '../../src/xds/csds-state';
import type { HeldVersion, TypeStatusInput } from '../../src/xds/csds-state';
import type { StreamRejection } from '../../src/xds/rejections';

/** A type's state from plain tables: what the Envoy holds, rejected, and what the fleet has now. */
function input(o: {
  names: string[];
  held?: Record<string, HeldVersion | 'absent'>;
  rejected?: Record<string, StreamRejection>;
  current?: Record<string, string>;
  unanswered?: string[];
  ackedAt?: number;
}): TypeStatusInput {
  return {
    names: o.names,
    held: (n) => o.held?.[n],
    rejected: (n) => o.rejected?.[n],
    current: (n) => (o.current?.[n] !== undefined ? { version: o.current[n] } : undefined),
    unanswered: (n) => o.unanswered?.includes(n) ?? false,
    ...(o.ackedAt !== undefined ? { ackedAt: o.ackedAt } : {}),
  };
}

describe('CSDS per-resource status', () => {
  test('held and answered: ACKED, SYNCED when it is the current version, STALE when the fleet moved on', () => {
    const bytes = Buffer.from('x');
    const r = resourceStatuses(
      input({
        names: ['b', 'a'],
        held: { a: { version: 'v1', bytes }, b: { version: 'v1' } },
        current: { a: 'v1', b: 'v2' },
        ackedAt: 5,
      }),
    );
    assert.deepEqual(r, [
      { name: 'a', version: 'v1', bytes, client: 'ACKED', config: 'SYNCED', lastUpdated: 5 },
      { name: 'b', version: 'v1', client: 'ACKED', config: 'STALE', lastUpdated: 5 },
    ]);
  });

  test('a rejection wins over what is held: NACKED/ERROR with the rejected version and message, no bytes', () => {
    const r = resourceStatuses(
      input({
        names: ['l'],
        held: { l: { version: 'bad', bytes: Buffer.from('x') } },
        rejected: { l: { version: 'bad', message: 'Address already in use', time: 7 } },
        current: { l: 'bad' },
      }),
    );
    assert.deepEqual(r, [
      {
        name: 'l',
        version: '',
        client: 'NACKED',
        config: 'ERROR',
        lastUpdated: 7,
        error: { version: 'bad', message: 'Address already in use', time: 7 },
      },
    ]);
  });

  test('a NACK after an accepted version keeps that version as the one held', () => {
    const [r] = resourceStatuses(
      input({
        names: ['l'],
        held: { l: { version: 'good' } },
        rejected: { l: { version: 'bad', message: 'm', time: 1 } },
        current: { l: 'bad' },
      }),
    );
    assert.equal(r.version, 'good');
    assert.equal(r.client, 'NACKED');
  });

  test('sent but not answered yet: REQUESTED and STALE', () => {
    const [r] = resourceStatuses(
      input({ names: ['c'], held: { c: { version: 'v1' } }, current: { c: 'v1' }, unanswered: ['c'] }),
    );
    assert.deepEqual(r, { name: 'c', version: '', client: 'REQUESTED', config: 'STALE' });
  });

  test('requested, the fleet has it, nothing sent: REQUESTED and NOT_SENT', () => {
    const [r] = resourceStatuses(input({ names: ['c'], current: { c: 'v1' } }));
    assert.deepEqual(r, { name: 'c', version: '', client: 'REQUESTED', config: 'NOT_SENT' });
  });

  test('the fleet has no such resource: DOES_NOT_EXIST, SYNCED once the Envoy was told', () => {
    const r = resourceStatuses(input({ names: ['told', 'untold'], held: { told: 'absent' } }));
    assert.deepEqual(
      r.map((x) => [x.name, x.client, x.config]),
      [
        ['told', 'DOES_NOT_EXIST', 'SYNCED'],
        ['untold', 'DOES_NOT_EXIST', 'NOT_SENT'],
      ],
    );
  });

  test('names are unique and sorted', () => {
    const r = resourceStatuses(input({ names: ['b', 'a', 'b'], current: { a: '1', b: '2' } }));
    assert.deepEqual(
      r.map((x) => x.name),
      ['a', 'b'],
    );
  });
});

describe('per-type summary', () => {
  test('rejected beats stale beats not sent beats synced; an empty type is synced', () => {
    assert.equal(summarizeType([]), 'synced');
    assert.equal(summarizeType([{ config: 'SYNCED' }, { config: 'NOT_SENT' }]), 'not sent');
    assert.equal(summarizeType([{ config: 'NOT_SENT' }, { config: 'STALE' }]), 'stale');
    assert.equal(summarizeType([{ config: 'STALE' }, { config: 'ERROR' }, { config: 'SYNCED' }]), 'rejected');
  });
});
