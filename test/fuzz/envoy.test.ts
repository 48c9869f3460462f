import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { worldArb } from '../support/worlds';
import { envoyValidate, requireEnvoy, staticBootstrap } from '../envoy/helpers';
import { admit, buildFleets } from './pipeline';
import { fuzzRun } from './config';

/**
 * Property: Envoy accepts every fleet Convoy builds from a world the API server would accept.
 *
 * Each random world (test/support/worlds.ts) goes through the real pipeline: file-mode validation
 * keeps what a cluster would accept, the controller's build turns the store into fleet models, the
 * translators into Envoy resources. Every fleet with something to serve becomes a static bootstrap
 * (route configurations inline, clusters static with their assignments, SDS secrets static) and
 * `envoy --mode validate` must accept it. A rejection is a bug: whatever one object contains, it
 * must never make Envoy refuse a resource (docs/architecture.md §10).
 *
 * CI runs 25 worlds (about 30 Envoy runs, well under a minute on a busy machine); CONVOY_FUZZ_RUNS
 * runs more. A failure names the seed and shrink path and prints the smallest failing world as
 * YAML, Secrets written with `${NAME}` fixture tokens as test/gateway/golden inputs are.
 */

const RUN = fuzzRun(25);

/** The last lines of Envoy's output, where it says what it rejected. */
function tail(output: string): string {
  return output.trim().split('\n').slice(-8).join('\n');
}

test('Envoy accepts every fleet built from a random world', (t) => {
  requireEnvoy();
  t.diagnostic(RUN.describe);
  const seen = {
    worlds: 0,
    fleetsValidated: 0,
    listeners: 0,
    chains: 0,
    routes: 0,
    clusters: 0,
    secrets: 0,
    refused: 0,
  };
  fc.assert(
    fc.property(worldArb(RUN.world), (objects) => {
      const { admitted, refused } = admit(objects);
      seen.worlds++;
      seen.refused += refused.length;
      for (const f of buildFleets(admitted)) {
        const res = f.resources;
        if (res.listeners.length === 0 && res.clusters.length === 0) continue;
        const run = envoyValidate(staticBootstrap(res), 'fuzz');
        if (run.status !== 0) {
          throw new Error(`envoy --mode validate rejected fleet ${f.fleet}:\n${tail(run.output)}`);
        }
        seen.fleetsValidated++;
        seen.listeners += res.listeners.length;
        seen.chains += res.listeners.reduce((n, l) => n + (l.filter_chains?.length ?? 0), 0);
        seen.routes += res.routes.length;
        seen.clusters += res.clusters.length;
        seen.secrets += res.secrets.length;
      }
    }),
    RUN.parameters,
  );
  t.diagnostic(JSON.stringify(seen));
  // The generator must keep producing worlds worth validating, or this test would pass vacuously.
  assert.ok(
    seen.fleetsValidated >= seen.worlds / 2,
    `only ${seen.fleetsValidated} fleets in ${seen.worlds} worlds`,
  );
  assert.ok(seen.routes > 0 && seen.clusters > 0 && seen.secrets > 0, JSON.stringify(seen));
  assert.ok(seen.refused <= seen.worlds, `validation refused ${seen.refused} generated objects`);
});
