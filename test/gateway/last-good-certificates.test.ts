/**
 * A listener that has served keeps its last good certificate while its Secret is invalid; one that
 * never served one is not programmed (docs/gateway-api.md §8). Builds over a store with a BuildMemo,
 * as the Controller runs them.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { BuildMemo } from '../../src/gateway/build-memo';
import { LastGoodCertificates } from '../../src/gateway/last-good-certificates';
import type { ObjectStatus } from '../../src/status/types';
import type { KubeObject } from '../../src/store/objects';
import type { ObjectStore } from '../../src/store/store';
import {
  OPTS,
  condSummary,
  gateway,
  gatewayClass,
  httpsListener,
  listenerSet,
  storeOf,
  tlsSecret,
} from '../support/objects';
import { INTERMEDIATE_CERT, LEAF_CERT, LEAF_KEY, SELF_KEY } from '../support/certs';

const GOOD = () => tlsSecret('cert', { cert: LEAF_CERT + INTERMEDIATE_CERT, key: LEAF_KEY });
const ROTATED = () => tlsSecret('cert', { hostnames: ['www.example.com'] });
const WRONG_KEY = () => tlsSecret('cert', { cert: LEAF_CERT + INTERMEDIATE_CERT, key: SELF_KEY });
const WRONG_ORDER = () => tlsSecret('cert', { cert: INTERMEDIATE_CERT + LEAF_CERT, key: LEAF_KEY });

function world(secret: KubeObject, extra: KubeObject[] = []): ObjectStore {
  return storeOf(
    gatewayClass(),
    gateway('edge', [httpsListener('https', 8443, 'www.example.com', 'cert')], {
      allowedListeners: { namespaces: { from: 'Same' } },
    }),
    secret,
    ...extra,
  );
}

function listener(statuses: ObjectStatus[], kind: string, owner: string, name: string): string[] {
  const s = statuses.find((x) => x.kind === kind && x.metadata.name === owner)!;
  const listeners = s.status.listeners as { name: string; conditions: never[] }[];
  return condSummary(listeners.find((l) => l.name === name)!.conditions);
}

function served(store: ObjectStore, memo?: BuildMemo): string[] {
  const fleet = buildGateways(store, OPTS, memo).fleets[0];
  return fleet.secrets.map((s) => `${s.name} ${s.certificateChain === GOOD_CHAIN ? 'first' : 'other'}`);
}
const GOOD_CHAIN = LEAF_CERT + INTERMEDIATE_CERT;

describe('last good certificates', () => {
  for (const [what, bad] of [
    ['a key that does not match', WRONG_KEY],
    ['a chain in the wrong order', WRONG_ORDER],
  ] as const) {
    test(`a served Secret rotated to ${what} keeps the last good certificate, reported`, () => {
      const memo = new BuildMemo();
      assert.deepEqual(served(world(GOOD()), memo), ['default/cert first']);
      const result = buildGateways(world(bad()), OPTS, memo);
      const [fleet] = result.fleets;
      assert.deepEqual(
        fleet.secrets.map((s) => [s.name, s.certificateChain === GOOD_CHAIN, s.privateKey === LEAF_KEY]),
        [['default/cert', true, true]],
      );
      assert.equal(fleet.ports.length, 1);
      const conditions = listener(result.statuses, 'Gateway', 'edge', 'https');
      assert.ok(conditions.includes('Programmed=True/Programmed'), conditions.join());
      assert.ok(conditions.includes('ResolvedRefs=False/InvalidCertificateRef'), conditions.join());
      assert.ok(conditions.includes('convoy.dev/ServingLastGoodCertificate=True/LastGoodCertificate'));
      // Without the memory (a first build), the same store programs nothing.
      const fresh = buildGateways(world(bad()), OPTS);
      assert.equal(fresh.fleets[0].ports.length, 0);
      assert.ok(listener(fresh.statuses, 'Gateway', 'edge', 'https').includes('Programmed=False/Invalid'));
    });
  }

  test('a valid rotation becomes the new last good version', () => {
    const memo = new BuildMemo();
    served(world(GOOD()), memo);
    assert.deepEqual(served(world(ROTATED()), memo), ['default/cert other']);
    const rotated = buildGateways(world(ROTATED()), OPTS).fleets[0].secrets[0].certificateChain;
    const kept = buildGateways(world(WRONG_KEY()), OPTS, memo).fleets[0].secrets[0].certificateChain;
    assert.equal(kept, rotated);
  });

  test('a new listener naming an invalid Secret is not programmed, even if another one serves it', () => {
    const memo = new BuildMemo();
    const set = listenerSet('tenant', { name: 'edge' }, [
      httpsListener('late', 9443, 'www.example.com', 'cert'),
    ]);
    served(world(GOOD()), memo);
    const result = buildGateways(world(WRONG_KEY(), [set]), OPTS, memo);
    assert.ok(listener(result.statuses, 'Gateway', 'edge', 'https').includes('Programmed=True/Programmed'));
    const late = listener(result.statuses, 'ListenerSet', 'tenant', 'late');
    assert.ok(late.includes('Programmed=False/Invalid'), late.join());
    assert.ok(!late.some((c) => c.startsWith('convoy.dev/ServingLastGoodCertificate')));
    assert.deepEqual(
      result.fleets[0].ports.map((p) => p.port),
      [8443],
    );
  });

  test('a deleted Secret is forgotten: re-created invalid, it is not served', () => {
    const memo = new BuildMemo();
    served(world(GOOD()), memo);
    const gone = storeOf(
      gatewayClass(),
      gateway('edge', [httpsListener('https', 8443, 'www.example.com', 'cert')]),
    );
    assert.deepEqual(served(gone, memo), []);
    assert.deepEqual(memo.lastGoodCertificates.size(), { listeners: 0, secrets: 0 });
    assert.deepEqual(served(world(WRONG_KEY()), memo), []);
  });

  test('a deleted listener is forgotten by the next full build', () => {
    const memo = new BuildMemo();
    served(world(GOOD()), memo);
    assert.deepEqual(memo.lastGoodCertificates.size(), { listeners: 1, secrets: 1 });
    buildGateways(storeOf(gatewayClass(), gateway('edge', []), GOOD()), OPTS, memo);
    assert.deepEqual(memo.lastGoodCertificates.size(), { listeners: 0, secrets: 0 });
  });

  test('a clone remembers the same and is independent', () => {
    const memory = new LastGoodCertificates();
    const secret = { name: 'default/cert', certificateChain: 'c', privateKey: 'k' };
    memory.record('Gateway/default/edge/https', true, [secret], []);
    const copy = memory.clone();
    memory.record('Gateway/default/edge/https', true, [], []);
    assert.equal(memory.recall('Gateway/default/edge/https', 'default/cert'), undefined);
    assert.equal(copy.recall('Gateway/default/edge/https', 'default/cert'), secret);
    // Not ready: only Secrets that are still there but invalid are kept.
    copy.record('Gateway/default/edge/https', false, [], ['default/cert']);
    assert.equal(copy.recall('Gateway/default/edge/https', 'default/cert'), secret);
    copy.record('Gateway/default/edge/https', false, [], []);
    assert.equal(copy.recall('Gateway/default/edge/https', 'default/cert'), undefined);
  });
});
