import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { FilterChainModel, PortModel } from '../../src/model/fleet';
import { translateListener } from '../../src/envoy/translate/listeners';
import { encodeMessage } from '../../src/envoy/protos';
import { encodeListener, offsetOfFirstFieldAbove } from '../../src/xds/listener-bytes';

function chain(i: number): FilterChainModel {
  const host = `svc-${i}.example.com`;
  return {
    name: `ListenerSet/ns/ls-${i}/https`,
    serverNames: [host],
    mode: 'Terminate',
    protocol: 'HTTPS',
    secretNames: [`ns/cert-${i}`],
    routeConfigName: `https-8443/${host}`,
    virtualHosts: [],
  };
}

function port(chains: FilterChainModel[], http = false): PortModel {
  return {
    name: 'https-8443',
    port: 8443,
    filterChains: chains,
    ...(http && { http: { routeConfigName: 'https-8443', virtualHosts: [] } }),
  };
}

const LISTENER = 'envoy.config.listener.v3.Listener';

describe('encodeListener', () => {
  test('byte-identical to encoding the whole Listener, small and large', () => {
    for (const n of [0, 3, 8, 50]) {
      for (const http of [false, true]) {
        const l = translateListener(
          port(
            Array.from({ length: n }, (_, i) => chain(i)),
            http,
          ),
          {
            bindAddress: '127.0.0.1',
          },
        );
        if (!l) continue;
        assert.deepEqual(encodeListener(l), encodeMessage(LISTENER, l), `n=${n} http=${http}`);
      }
    }
  });

  test('a Listener sharing chain objects with an earlier one still encodes exactly', () => {
    const chains = Array.from({ length: 20 }, (_, i) => chain(i));
    const first = translateListener(port(chains), { bindAddress: '127.0.0.1' })!;
    encodeListener(first);
    const grown = translateListener(port([...chains, chain(20)]), { bindAddress: '127.0.0.1' })!;
    assert.equal(grown.filter_chains![0], first.filter_chains![0], 'memoized chains are shared');
    assert.deepEqual(encodeListener(grown), encodeMessage(LISTENER, grown));
  });

  test('offsetOfFirstFieldAbove finds the split point', () => {
    // field 1 "a", field 3 "b", field 5 varint 1
    const buf = Buffer.from([0x0a, 0x01, 0x61, 0x1a, 0x01, 0x62, 0x28, 0x01]);
    assert.equal(offsetOfFirstFieldAbove(buf, 0), 0);
    assert.equal(offsetOfFirstFieldAbove(buf, 1), 3);
    assert.equal(offsetOfFirstFieldAbove(buf, 3), 6);
    assert.equal(offsetOfFirstFieldAbove(buf, 5), 8);
  });
});
