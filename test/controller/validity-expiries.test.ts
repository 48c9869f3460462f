/**
 * ValidityOverlay.expiries (the certificate-expiry gauge's rows, kept per fleet model and for the
 * last list of fleets) gives exactly what the reader's `served` over every fleet gives, in the
 * same order, over random sequences of fleet changes, repeated scrapes and walks left unfinished
 * (docs/operations.md §8 "Scrape cost (session 18)").
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ValidityOverlay } from '../../src/controller/validity-overlay';
import { CertificateValidityReader } from '../../src/controller/certificate-validity';
import type { FilterChainModel, FleetModel, SecretModel } from '../../src/model/fleet';
import { rng } from '../support/rng';

const HOUR = 3600_000;
const T0 = Date.parse('2030-01-01T00:00:00Z');

/** The gauge's rows as computed before session 18: the reader's `served` over every fleet. */
function oracle(fleets: FleetModel[]): { listener: string; notAfter: number }[] {
  return [...new CertificateValidityReader().served(fleets)].map(([listener, certs]) => ({
    listener,
    notAfter: Math.min(...certs.map((c) => c.validity.notAfter)),
  }));
}

/** Random fleets whose chains and secrets change; names repeat across and within fleets. */
function world(random: () => number) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const names = Array.from({ length: 12 }, (_, i) => `ListenerSet/ns/ls${i}/https`);
  const secretNames = Array.from({ length: 8 }, (_, i) => `ns/s${i}`);
  const secret = (name: string): SecretModel => {
    const start = T0 + Math.floor(random() * 6 - 2) * HOUR;
    return {
      name,
      certificateChain: '',
      privateKey: '',
      validity: { notBefore: start, notAfter: start + Math.floor(1 + random() * 4000) * 1000 },
    } as SecretModel;
  };
  const chain = (): FilterChainModel =>
    ({
      name: pick(names),
      serverNames: [],
      mode: random() < 0.8 ? 'Terminate' : 'Passthrough',
      protocol: 'HTTPS',
      // Some name a Secret the fleet lacks: served nothing.
      secretNames: Array.from({ length: Math.floor(random() * 3) }, () => pick([...secretNames, 'ns/none'])),
    }) as FilterChainModel;
  const fleet = (name: string): FleetModel =>
    ({
      fleet: name,
      ports: Array.from({ length: 1 + Math.floor(random() * 2) }, (_, p) => ({
        name: `p${p}`,
        port: 443 + p,
        filterChains: Array.from({ length: Math.floor(random() * 8) }, chain),
      })),
      clusters: [],
      secrets: secretNames.filter(() => random() < 0.7).map(secret),
    }) as unknown as FleetModel;
  /** The fleet's next model: one chain or Secret list changed, the rest shared. */
  const next = (m: FleetModel): FleetModel => {
    if (random() < 0.5) return { ...m, secrets: secretNames.filter(() => random() < 0.7).map(secret) };
    const ports = m.ports.map((p) =>
      random() < 0.5 ? p : { ...p, filterChains: [...p.filterChains.filter(() => random() < 0.8), chain()] },
    );
    return { ...m, ports };
  };
  return { fleet, next, pick };
}

describe('ValidityOverlay.expiries', () => {
  for (let seed = 1; seed <= 40; seed++) {
    test(`equals the reader's served over every fleet, in order (seed ${seed})`, () => {
      const random = rng(seed);
      const w = world(random);
      const overlay = new ValidityOverlay(
        () => new Date(T0),
        () => {},
      );
      let fleets = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i) => w.fleet(`ns/g${i}`));
      for (let step = 0; step < 30; step++) {
        const r = random();
        if (r < 0.5) {
          const i = Math.floor(random() * fleets.length);
          fleets = fleets.map((f, j) => (j === i ? w.next(f) : f));
        } else if (r < 0.6) fleets = [...fleets, w.fleet(`ns/g${fleets.length}`)];
        else if (r < 0.7 && fleets.length > 1) fleets = fleets.slice(1);
        else if (r < 0.8) {
          // A scrape that stops part way (a client gone): the next one must still be whole.
          const it = overlay.expiries(fleets)[Symbol.iterator]();
          for (let k = Math.floor(random() * 4); k > 0; k--) it.next();
          it.return?.();
        }
        const want = oracle(fleets);
        assert.deepEqual([...overlay.expiries(fleets)], want, `step ${step}`);
        assert.deepEqual([...overlay.expiries(fleets)], want, `step ${step}, again`);
        assert.deepEqual([...overlay.expiries(fleets.values())], want, `step ${step}, from an iterator`);
      }
    });
  }
});
