import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FleetModel } from '../../src/model/fleet';
import { translateFleet } from '../../src/envoy/translate';
import { envoyRegexProblem } from '../../src/re2/envoy-regex';
import { re2ProgramSize, type Re2Encoding } from '../../src/re2/program-size';
import { envoyValidate, staticBootstrap } from '../envoy/helpers';
import { randomRegex, seededRandom } from './random-regex';

/**
 * Property: for random regexes, Convoy's verdict agrees with the real Envoy's. Each regex becomes a
 * path match in a fleet, translated as Convoy translates, and `envoy --mode validate` runs on it with
 * the runtime value `re2.max_program_size.error_level` at 0, so that Envoy reports every regex's
 * exact RE2 program size (or its RE2 error) — in its default Latin-1 mode, and for every third
 * regex in the UTF-8 mode Envoy falls back to when `envoy.reloadable_features.re2_use_latin1_mode`
 * is off. Required:
 *  - Envoy rejects (an RE2 error, or a program over 100) ⇒ Convoy's check rejects;
 *  - when Convoy computes a program size, it is Envoy's.
 * How often Convoy rejects what Envoy accepts is reported. One Envoy run per regex (~0.3 s):
 * CONVOY_RE2_CASES sets how many (default 45), CONVOY_RE2_SEED replays a run.
 */

const CASES = Number(process.env.CONVOY_RE2_CASES ?? 45);
const SEED = Number(process.env.CONVOY_RE2_SEED ?? 20261123);
const LIMIT = 100;

function fleetWithPathRegex(regex: string): FleetModel {
  return {
    fleet: 'infra/gw',
    gateway: { namespace: 'infra', name: 'gw' },
    ports: [
      {
        name: 'http-8080',
        port: 8080,
        http: {
          routeConfigName: 'http-8080',
          virtualHosts: [
            {
              name: '*',
              domains: ['*'],
              routes: [
                {
                  name: 'HTTPRoute/default/r/rule/0/match/0',
                  match: { path: { type: 'RegularExpression', value: regex } },
                  action: { kind: 'forward', backends: [{ cluster: 'default/web/80', weight: 1 }] },
                },
              ],
            },
          ],
        },
        filterChains: [],
      },
    ],
    clusters: [
      {
        name: 'default/web/80',
        protocol: 'http1',
        endpoints: [{ address: '10.0.0.1', port: 80, ready: true }],
      },
    ],
    secrets: [],
  };
}

/** Envoy's verdict on a regex: its RE2 program size, or the error Envoy reports. */
function envoyVerdict(regex: string, encoding: Re2Encoding): number | { error: string } {
  const bootstrap = staticBootstrap(translateFleet(fleetWithPathRegex(regex), { bindAddress: '127.0.0.1' }));
  // google.protobuf.Value takes protobufjs's camelCase field names.
  const runtime: Record<string, unknown> = { 're2.max_program_size.error_level': { numberValue: 0 } };
  if (encoding === 'utf8') runtime['envoy.reloadable_features.re2_use_latin1_mode'] = { boolValue: false };
  bootstrap.layered_runtime = { layers: [{ name: 'property-test', static_layer: { fields: runtime } }] };
  const run = envoyValidate(bootstrap, 're2-property');
  const size = /RE2 program size of (\d+) > max program size of 0/.exec(run.output);
  if (size) return Number(size[1]);
  assert.notEqual(
    run.status,
    0,
    `with error level 0 Envoy must reject ${JSON.stringify(regex)}:\n${run.output}`,
  );
  const error = /error initializing configuration '[^']*': (.*)/.exec(run.output);
  return { error: error ? error[1] : run.output.slice(-300) };
}

function estimate(regex: string, encoding: Re2Encoding): number | string {
  try {
    return re2ProgramSize(regex, encoding, 10_000);
  } catch (e) {
    return (e as Error).constructor.name;
  }
}

describe('Convoy decides on regexes as the real Envoy does', () => {
  test('control: Envoy reports exact program sizes in both modes', () => {
    assert.equal(envoyVerdict('(?i)k', 'latin1'), 5);
    assert.equal(envoyVerdict('(?i)k', 'utf8'), 8);
    assert.match(
      (envoyVerdict('/foo\\Z', 'latin1') as { error: string }).error,
      /invalid escape sequence: \\Z/,
    );
  });

  test(`${CASES} random regexes (seed ${SEED})`, (t) => {
    const rand = seededRandom(SEED);
    const tally = { envoyAccepts: 0, convoyAlsoRejects: 0, sizesCompared: 0, envoyRejects: 0 };
    for (let i = 0; i < CASES; i++) {
      const regex = randomRegex(rand);
      const encoding: Re2Encoding = i % 3 === 2 ? 'utf8' : 'latin1';
      const envoy = envoyVerdict(regex, encoding);
      const problem = envoyRegexProblem(regex);
      const context = `regex ${JSON.stringify(regex)} (${encoding}): Envoy ${JSON.stringify(envoy)}, Convoy ${problem ?? 'accepts'}`;
      const envoyAccepts = typeof envoy === 'number' && envoy <= LIMIT;
      if (!envoyAccepts) {
        tally.envoyRejects++;
        assert.notEqual(problem, undefined, `Envoy rejects, Convoy must too: ${context}`);
      } else {
        tally.envoyAccepts++;
        if (problem !== undefined) tally.convoyAlsoRejects++;
      }
      const mine = estimate(regex, encoding);
      if (typeof envoy === 'number' && typeof mine === 'number') {
        tally.sizesCompared++;
        assert.equal(mine, envoy, `program size: ${context}`);
      }
      if (typeof envoy !== 'number') assert.equal(typeof mine, 'string', `Envoy finds an error: ${context}`);
    }
    t.diagnostic(
      `Envoy accepted ${tally.envoyAccepts}, rejected ${tally.envoyRejects}; Convoy rejected ` +
        `${tally.convoyAlsoRejects} of those Envoy accepted; ${tally.sizesCompared} program sizes equal`,
    );
    assert.ok(tally.sizesCompared >= CASES / 3, `enough sizes compared: ${JSON.stringify(tally)}`);
  });
});
