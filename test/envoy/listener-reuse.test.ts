import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Listener } from '../../src/generated/envoy/config/listener/v3/Listener';
import type { FilterChainModel, PortModel } from '../../src/model/fleet';
import {
  assignServerNames,
  forgetListenerTranslations,
  translateListener,
} from '../../src/envoy/translate/listeners';
import { encodeMessage } from '../../src/envoy/protos';
import { rng } from '../support/rng';
import { numberedChains, randomChainModel, sameChainCopy } from '../support/chain-models';

const LISTENER = 'envoy.config.listener.v3.Listener';

function bytesOf(l: Listener | undefined): string {
  return l ? encodeMessage(LISTENER, l).toString('base64') : 'none';
}

describe('ListenerReuse (the full translation as the oracle)', () => {
  test('random edits of a port give the bytes of a full translation, the last object when equal', () => {
    const next = rng(2024);
    let serial = 0;
    const ports = new Map<string, FilterChainModel[]>();
    for (const fleet of ['ns/a', 'ns/b']) {
      const chains: FilterChainModel[] = [];
      for (let i = 0; i < 40; i++) chains.push(randomChainModel(next, serial++));
      ports.set(fleet, chains);
    }
    const last = new Map<string, Listener | undefined>();
    const conflictFree = (chains: FilterChainModel[]): boolean =>
      assignServerNames(chains).every((names, i) => names === chains[i].serverNames);
    const lastFree = new Map<string, boolean>();
    let reused = 0;
    let patchedAdds = 0;
    for (let step = 0; step < 1500; step++) {
      const fleet = next() < 0.5 ? 'ns/a' : 'ns/b';
      const chains = ports.get(fleet)!.slice();
      const i = Math.floor(next() * chains.length);
      const r = next();
      let sameContent = false;
      if (r < 0.35 && chains.length) {
        chains[i] = sameChainCopy(chains[i]);
        sameContent = true;
      } else if (r < 0.5 && chains.length) chains[i] = randomChainModel(next, serial++);
      else if (r < 0.7) {
        chains.splice(i, 0, randomChainModel(next, serial++));
        patchedAdds++;
      } else if (r < 0.85 && chains.length) chains.splice(i, 1);
      else if (r < 0.88) {
        forgetListenerTranslations(fleet);
        lastFree.set(fleet, false);
      } else if (r < 0.9) chains.reverse();
      ports.set(fleet, chains);
      const withHttp = next() < 0.2;
      const model: PortModel = {
        name: 'https-443',
        port: 443,
        filterChains: chains,
        ...(withHttp ? { http: { routeConfigName: 'http-443', virtualHosts: [] } } : {}),
      };
      const got = translateListener(model, { bindAddress: '127.0.0.1', fleet });
      const want = translateListener({ ...model }, { bindAddress: '127.0.0.1' });
      assert.equal(bytesOf(got), bytesOf(want), `bytes at step ${step}`);
      const before = last.get(fleet);
      if (sameContent && lastFree.get(fleet) && before && bytesOf(before) === bytesOf(got)) {
        assert.equal(got, before, `same bytes: the last Listener object, step ${step}`);
        reused++;
      }
      last.set(fleet, got);
      lastFree.set(fleet, conflictFree(chains));
    }
    assert.ok(reused > 100, `the last Listener was reused (${reused} times)`);
    assert.ok(patchedAdds > 100);
  });

  test('a chain added among 2,000 translates that chain only, and keeps the other chain objects', () => {
    const chains = numberedChains(2000);
    const opts = { bindAddress: '127.0.0.1', fleet: 'ns/big' };
    const first = translateListener({ name: 'https-443', port: 443, filterChains: chains }, opts)!;
    const added = [
      ...chains.slice(0, 700),
      { ...chains[0], name: 'ListenerSet/ns/new/l', serverNames: ['new.example.com'] },
      ...chains.slice(700),
    ];
    const second = translateListener({ name: 'https-443', port: 443, filterChains: added }, opts)!;
    assert.equal(second.filter_chains!.length, 2001);
    assert.equal(second.filter_chains![699], first.filter_chains![699]);
    assert.equal(second.filter_chains![701], first.filter_chains![700]);
    const edited = added.map((fc, i) => (i === 5 ? sameChainCopy(fc) : fc));
    const third = translateListener({ name: 'https-443', port: 443, filterChains: edited }, opts);
    assert.equal(third, second, 'same content: the very same Listener');
    forgetListenerTranslations('ns/big');
  });
});
