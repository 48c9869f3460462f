import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PortClaims } from '../../src/gateway/conflicts';
import type { ConflictInput } from '../../src/gateway/conflicts';
import { rng } from '../support/rng';

const PROTOCOLS = ['HTTP', 'HTTPS', 'TLS', 'TCP', 'UDP', 'example.com/unknown'];
const HOSTS = [undefined, 'a.example.com', 'b.example.com', '*.example.com', 'A.example.com'];
const MODES: (ConflictInput['tlsMode'] | undefined)[] = [undefined, 'Terminate', 'Passthrough'];

function claim(r: () => number, protocols: readonly string[]): ConflictInput {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  return { port: 443, protocol: pick(protocols), hostname: pick(HOSTS), tlsMode: pick(MODES) };
}

describe('PortClaims.over', () => {
  test('layered claims answer conflict() as the same claims added to one PortClaims (300 seeds)', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      // Mostly one family, as a port of HTTPS listeners is, sometimes all protocols.
      const protocols = r() < 0.5 ? ['HTTPS', 'TLS'] : PROTOCOLS;
      const flat = PortClaims.empty();
      let layered = PortClaims.empty();
      const kept: PortClaims[] = [];
      const keptFlat: ConflictInput[][] = [];
      const all: ConflictInput[] = [];
      for (let step = 0; step < 60; step++) {
        // A new layer now and then (past the merge depth too); the layer below must stay as it was.
        if (r() < 0.5) {
          kept.push(layered);
          keptFlat.push([...all]);
          layered = PortClaims.over(layered);
        }
        const c = claim(r, protocols);
        flat.add(c);
        layered.add(c);
        all.push(c);
        for (let q = 0; q < 5; q++) {
          const query = claim(r, PROTOCOLS);
          assert.equal(layered.conflict(query), flat.conflict(query), `seed ${seed} step ${step}`);
        }
      }
      // Every layer kept answers as the claims it held when it was layered over.
      kept.forEach((claims, i) => {
        const want = PortClaims.empty();
        for (const c of keptFlat[i]) want.add(c);
        const query = claim(r, PROTOCOLS);
        assert.equal(claims.conflict(query), want.conflict(query), `seed ${seed} kept ${i}`);
      });
    }
  });
});
