import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FilterChainModel, PortModel } from '../../src/model/fleet';
import {
  forgetDispatchedPorts,
  retainDispatchedPorts,
  translateDispatchedPort,
  type DispatchedPort,
} from '../../src/envoy/translate/sni-dispatch';
import { DEFAULT_ACCESS_LOG } from '../../src/envoy/translate/access-log';
import { encodeMessage } from '../../src/envoy/protos';
import { rng } from '../support/rng';
import { numberedChains, randomChainModel, sameChainCopy } from '../support/chain-models';

const LISTENER = 'envoy.config.listener.v3.Listener';
const CLUSTER = 'envoy.config.cluster.v3.Cluster';

/** Asserts that two dispatched ports hold the same resources, by identity or else by bytes. */
function assertSameBytes(
  got: DispatchedPort | undefined,
  want: DispatchedPort | undefined,
  at: string,
): void {
  if (!got || !want) return assert.equal(got, want, at);
  assert.equal(got.listeners.length, want.listeners.length, at);
  assert.equal(got.clusters.length, want.clusters.length, at);
  got.listeners.forEach((l, i) => {
    const w = want.listeners[i]!;
    if (l !== w)
      assert.ok(encodeMessage(LISTENER, l).equals(encodeMessage(LISTENER, w)), `${at}: listener ${i}`);
  });
  got.clusters.forEach((c, i) => {
    const w = want.clusters[i]!;
    if (c !== w)
      assert.ok(encodeMessage(CLUSTER, c).equals(encodeMessage(CLUSTER, w)), `${at}: cluster ${i}`);
  });
}

describe('DispatchReuse (the full SNI-dispatch translation as the oracle)', () => {
  test('random edits of a port give the bytes of a full translation', () => {
    const next = rng(1717);
    let serial = 0;
    const ports = new Map<string, FilterChainModel[]>();
    for (const fleet of ['ns/a', 'ns/b']) {
      const chains: FilterChainModel[] = [];
      for (let i = 0; i < 40; i++) chains.push(randomChainModel(next, serial++));
      ports.set(fleet, chains);
    }
    let kept = 0;
    for (let step = 0; step < 1500; step++) {
      const fleet = next() < 0.5 ? 'ns/a' : 'ns/b';
      const chains = ports.get(fleet)!.slice();
      const i = Math.floor(next() * chains.length);
      const r = next();
      if (r < 0.35 && chains.length) chains[i] = sameChainCopy(chains[i]);
      else if (r < 0.5 && chains.length) chains[i] = randomChainModel(next, serial++);
      else if (r < 0.7) chains.splice(i, 0, randomChainModel(next, serial++));
      else if (r < 0.85 && chains.length > 1) chains.splice(i, 1);
      else if (r < 0.87) forgetDispatchedPorts(fleet);
      else if (r < 0.88) retainDispatchedPorts(fleet, new Set());
      else if (r < 0.9) chains.reverse();
      ports.set(fleet, chains);
      const withHttp = next() < 0.2;
      const model: PortModel = {
        name: 'https-443',
        port: 443,
        filterChains: chains,
        ...(withHttp ? { http: { routeConfigName: 'http-443', virtualHosts: [] } } : {}),
      };
      const used = new Set<string>();
      const got = translateDispatchedPort(model, '127.0.0.1', DEFAULT_ACCESS_LOG, null, {
        name: fleet,
        usedKeys: used,
      });
      const want = translateDispatchedPort({ ...model }, '127.0.0.1', DEFAULT_ACCESS_LOG, null);
      assertSameBytes(got, want, `step ${step}`);
      assert.equal(used.size, 1);
      if (got && want && got.listeners[1] && got.listeners[1] === want.listeners[1]) kept++;
    }
    assert.ok(kept > 100, `chain parts were shared with the memo (${kept} times)`);
    forgetDispatchedPorts('ns/a');
    forgetDispatchedPorts('ns/b');
  });

  test('a chain added among 2,000 keeps the other parts and the front Listener object', () => {
    const chains = numberedChains(2000);
    const fleet = { name: 'ns/big', usedKeys: new Set<string>() };
    const translate = (filterChains: FilterChainModel[]): DispatchedPort =>
      translateDispatchedPort(
        { name: 'https-443', port: 443, filterChains },
        '127.0.0.1',
        DEFAULT_ACCESS_LOG,
        null,
        fleet,
      )!;
    const first = translate(chains);
    const added = [
      ...chains.slice(0, 700),
      { ...chains[0], name: 'ListenerSet/ns/new/l', serverNames: ['new.example.com'] },
      ...chains.slice(700),
    ];
    const second = translate(added);
    assert.equal(second.listeners.length, 2002);
    assert.equal(second.listeners[0], first.listeners[0], 'the front Listener is unchanged');
    assert.equal(second.listeners[700], first.listeners[700]);
    assert.equal(second.listeners[702], first.listeners[701]);
    assert.equal(second.clusters[701], first.clusters[700]);
    const removed = translate(added.filter((_, i) => i !== 3));
    assert.equal(removed.listeners.length, 2001);
    assert.equal(removed.listeners[0], first.listeners[0]);
    forgetDispatchedPorts('ns/big');
  });
});
