import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { translateFleet, type TranslateOptions } from '../../src/envoy/translate';
import { DEFAULT_LAYOUT_THRESHOLD, layoutForSize, portLayout } from '../../src/envoy/translate/layout-choice';
import type { FleetModel, PortModel } from '../../src/model/fleet';
import { httpsFleet, httpsFleetWithoutCatchAll, mixedFleet } from './fixtures';
import { encodeAll } from './helpers';
import { l4Fleet } from './fixtures-l4';

/** The `auto` listener layout: SNI dispatch per port from a threshold of TLS chains (docs/xds.md §16). */

const BIND = { bindAddress: '127.0.0.1' };

function encoded(model: FleetModel, options: TranslateOptions): Record<string, Buffer[]> {
  return encodeAll(translateFleet(model, { ...BIND, ...options }));
}

function tlsPort(model: FleetModel): PortModel {
  return model.ports.find((p) => p.filterChains.length > 0)!;
}

/** The same fleet with the TLS port cut to its first `n` chains. */
function withChains(model: FleetModel, n: number): FleetModel {
  return {
    ...model,
    ports: model.ports.map((p) =>
      p.filterChains.length ? { ...p, filterChains: p.filterChains.slice(0, n) } : p,
    ),
  };
}

describe('layout by size (auto)', () => {
  test('layoutForSize: SNI dispatch from the threshold on, chains below', () => {
    assert.equal(layoutForSize(0, 3), 'chains');
    assert.equal(layoutForSize(2, 3), 'chains');
    assert.equal(layoutForSize(3, 3), 'sni-dispatch');
    assert.equal(layoutForSize(5000, 3), 'sni-dispatch');
    assert.equal(layoutForSize(DEFAULT_LAYOUT_THRESHOLD - 1, DEFAULT_LAYOUT_THRESHOLD), 'chains');
    assert.equal(layoutForSize(DEFAULT_LAYOUT_THRESHOLD, DEFAULT_LAYOUT_THRESHOLD), 'sni-dispatch');
  });

  test('layoutForSize is monotone in the chain count and depends on nothing else (property)', () => {
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 2000; i++) {
      const threshold = 1 + next(2000);
      const a = next(4000);
      const b = a + next(4000);
      if (layoutForSize(a, threshold) === 'sni-dispatch')
        assert.equal(layoutForSize(b, threshold), 'sni-dispatch');
      // No memory: asking again, in any order, gives the same answer.
      assert.equal(layoutForSize(b, threshold), layoutForSize(b, threshold));
      assert.equal(layoutForSize(a, threshold), a >= threshold ? 'sni-dispatch' : 'chains');
    }
  });

  test('portLayout: chains and sni-dispatch as named; auto by the TLS chain count; L4 ports keep chains', () => {
    const port = tlsPort(httpsFleetWithoutCatchAll());
    assert.equal(port.filterChains.length, 4);
    assert.equal(portLayout(port, undefined), 'chains');
    assert.equal(portLayout(port, 'chains', 1), 'chains');
    assert.equal(portLayout(port, 'sni-dispatch'), 'sni-dispatch');
    assert.equal(portLayout(port, 'auto'), 'chains', 'the default threshold is far above 4');
    assert.equal(portLayout(port, 'auto', 4), 'sni-dispatch');
    assert.equal(portLayout(port, 'auto', 5), 'chains');
    for (const p of l4Fleet().ports) assert.equal(portLayout(p, 'auto', 1), 'chains');
  });

  test('auto at or above the threshold gives exactly the SNI-dispatch resources; below it exactly the chains ones', () => {
    const model = httpsFleetWithoutCatchAll();
    const chains = encoded(model, {});
    const dispatched = encoded(model, { listenerLayout: 'sni-dispatch' });
    assert.notDeepEqual(chains, dispatched);
    assert.deepEqual(encoded(model, { listenerLayout: 'auto', listenerLayoutThreshold: 4 }), dispatched);
    assert.deepEqual(encoded(model, { listenerLayout: 'auto', listenerLayoutThreshold: 3 }), dispatched);
    assert.deepEqual(encoded(model, { listenerLayout: 'auto', listenerLayoutThreshold: 5 }), chains);
    assert.deepEqual(
      encoded(model, { listenerLayout: 'auto' }),
      chains,
      'small fleets keep chains by default',
    );
  });

  test('every fixture fleet is translated as chains under auto with the default threshold', () => {
    for (const model of [httpsFleet(), mixedFleet(), l4Fleet(), httpsFleetWithoutCatchAll()]) {
      assert.deepEqual(encoded(model, { listenerLayout: 'auto' }), encoded(model, {}));
    }
  });

  test('a port that cannot be dispatched (a hostname-less TLS listener) keeps chains above the threshold too', () => {
    const model = httpsFleet();
    assert.ok(tlsPort(model).filterChains.some((fc) => fc.serverNames.length === 0));
    assert.deepEqual(
      encoded(model, { listenerLayout: 'auto', listenerLayoutThreshold: 1 }),
      encoded(model, {}),
    );
  });

  test('deterministic without memory: the same objects give byte-identical resources whatever came before', () => {
    const auto: TranslateOptions = { listenerLayout: 'auto', listenerLayoutThreshold: 3 };
    const full = httpsFleetWithoutCatchAll();
    const fresh = encoded(withChains(full, 2), auto);
    // Cross the threshold up and come back down: the result is the fresh one, not a remembered layout.
    encoded(withChains(full, 3), auto);
    encoded(full, auto);
    assert.deepEqual(encoded(withChains(full, 2), auto), fresh);
    assert.deepEqual(fresh, encoded(withChains(full, 2), {}), 'below the threshold: chains');
    assert.deepEqual(
      encoded(withChains(full, 3), auto),
      encoded(withChains(full, 3), { listenerLayout: 'sni-dispatch' }),
    );
  });
});
