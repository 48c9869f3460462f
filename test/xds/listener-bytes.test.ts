import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { FilterChainModel, PortModel } from '../../src/model/fleet';
import { translateListener } from '../../src/envoy/translate/listeners';
import { encodeMessage } from '../../src/envoy/protos';
import { encodeListener, listenerVersion, offsetOfFirstFieldAbove } from '../../src/xds/listener-bytes';
import { contentHash } from '../../src/xds/snapshot';
import { rng } from '../support/rng';

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
/** Fewest chains the edits leave (the chain-digest form starts at 8). */
const MIN = 10;

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
        const encoded = encodeListener(l);
        assert.deepEqual(encoded.bytes, encodeMessage(LISTENER, l), `n=${n} http=${http}`);
        assert.equal(encoded.version, listenerVersion(encoded.bytes), `version n=${n} http=${http}`);
      }
    }
  });

  test('a Listener sharing chain objects with an earlier one still encodes exactly', () => {
    const chains = Array.from({ length: 20 }, (_, i) => chain(i));
    const first = translateListener(port(chains), { bindAddress: '127.0.0.1' })!;
    encodeListener(first);
    const grown = translateListener(port([...chains, chain(20)]), { bindAddress: '127.0.0.1' })!;
    assert.equal(grown.filter_chains![0], first.filter_chains![0], 'memoized chains are shared');
    assert.deepEqual(encodeListener(grown).bytes, encodeMessage(LISTENER, grown));
    assert.equal(encodeListener(grown).version, listenerVersion(encodeMessage(LISTENER, grown)));
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

describe('Listener versions from cached chain digests (listenerVersion as the oracle)', () => {
  test('successive edits of a Listener: each version equals the oracle, equal bytes equal versions', () => {
    const next = rng(15);
    let chains = Array.from({ length: 40 }, (_, i) => chain(i));
    const versionOfBytes = new Map<string, string>();
    for (let step = 0; step < 60; step++) {
      const r = next();
      const i = Math.floor(next() * chains.length);
      if (r < 0.3) chains = [...chains.slice(0, i), chain(1000 + step), ...chains.slice(i)];
      else if (r < 0.5 && chains.length > 1) chains = chains.filter((_, j) => j !== i);
      else if (r < 0.8)
        chains = chains.map((c, j) => (j === i ? { ...c, secretNames: [`ns/rotated-${step}`] } : c));
      else chains = chains.map((c, j) => (j === i ? chain(i % 40) : c)); // back to an earlier content
      const l = translateListener(port(chains, step % 2 === 0), { bindAddress: '127.0.0.1' })!;
      const { bytes, version } = encodeListener(l);
      assert.deepEqual(bytes, encodeMessage(LISTENER, l), `bytes at step ${step}`);
      assert.equal(version, listenerVersion(bytes), `version at step ${step}`);
      const key = bytes.toString('base64');
      const seen = versionOfBytes.get(key);
      if (seen) assert.equal(version, seen, `same bytes, same version at step ${step}`);
      for (const [k, v] of versionOfBytes)
        if (k !== key) assert.notEqual(v, version, `distinct at step ${step}`);
      versionOfBytes.set(key, version);
    }
  });

  test('encoding against the previous encoding gives the same bytes and version as without it', () => {
    const next = rng(17);
    let chains = Array.from({ length: 60 }, (_, i) => chain(i));
    let previous: Buffer | undefined;
    for (let step = 0; step < 120; step++) {
      const r = next();
      const i = Math.floor(next() * chains.length);
      const n = 1 + Math.floor(next() * 8); // runs longer than the walk's look-ahead too
      if (r < 0.25)
        chains = [
          ...chains.slice(0, i),
          ...Array.from({ length: n }, (_, k) => chain(2000 + 10 * step + k)),
          ...chains.slice(i),
        ];
      else if (r < 0.45 && chains.length > n + MIN) chains = [...chains.slice(0, i), ...chains.slice(i + n)];
      else if (r < 0.65)
        chains = chains.map((c, j) => (j >= i && j < i + n ? { ...c, secretNames: [`ns/r-${step}`] } : c));
      else if (r < 0.8) {
        const moved = chains.splice(i, n);
        chains = [...moved, ...chains]; // a reordering
      } else if (r < 0.9) chains = [...chains].reverse();
      else previous = undefined; // no previous encoding (a restart, another fleet)
      const l = translateListener(port(chains, step % 3 === 0), { bindAddress: '127.0.0.1' })!;
      const got = encodeListener(l, previous);
      assert.deepEqual(got.bytes, encodeMessage(LISTENER, l), `bytes at step ${step}`);
      assert.equal(got.version, listenerVersion(got.bytes), `version at step ${step}`);
      // Whether a previous encoding was handed in, or a wrong one, never changes the result.
      assert.equal(encodeListener(l).version, got.version, `version without previous at step ${step}`);
      previous = got.bytes;
    }
  });

  test('a previous encoding of another Listener gives the same result', () => {
    const a = translateListener(port(Array.from({ length: 30 }, (_, i) => chain(i))), {
      bindAddress: '127.0.0.1',
    })!;
    const b = translateListener(
      port(
        Array.from({ length: 30 }, (_, i) => chain(i + 5)),
        true,
      ),
      {
        bindAddress: '0.0.0.0',
      },
    )!;
    const other = encodeListener(a).bytes;
    const got = encodeListener(b, other);
    assert.deepEqual(got.bytes, encodeMessage(LISTENER, b));
    assert.equal(got.version, listenerVersion(got.bytes));
    const unrelated = encodeListener(b, Buffer.from('not a listener'));
    assert.deepEqual(unrelated.bytes, got.bytes);
  });

  test('a Listener of few chains is versioned by contentHash of its bytes', () => {
    const l = translateListener(port([chain(1), chain(2)]), { bindAddress: '127.0.0.1' })!;
    const { bytes, version } = encodeListener(l);
    assert.equal(version, contentHash(bytes));
    const big = encodeListener(
      translateListener(port(Array.from({ length: 9 }, (_, i) => chain(i))), { bindAddress: '0.0.0.0' })!,
    );
    assert.notEqual(big.version, contentHash(big.bytes), 'many chains: the chain-digest form');
  });
});
