import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as prettier from 'prettier';
import { translateFleet } from '../../src/envoy/translate';
import type { FleetModel } from '../../src/model/fleet';
import { GOLDEN_FLEETS, httpsFleetWithoutCatchAll, mixedFleet } from './fixtures';
import type { TranslateOptions } from '../../src/envoy/translate';
import { KINDS, decodeAll, encodeAll } from './helpers';
import { repoRoot } from '../support/repo';

/**
 * Golden tests: each fixture fleet → translate → encode → decode, compared with
 * test/envoy/golden/<name>.json. Regenerate with UPDATE_GOLDEN=1 (files are written through
 * prettier, so `prettier --check` stays clean); review the diff before committing.
 */

const GOLDEN_DIR = path.join(repoRoot(), 'test', 'envoy', 'golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

async function formatJson(file: string, value: unknown): Promise<string> {
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(JSON.stringify(value), { ...options, parser: 'json', filepath: file });
}

/** A structurally equal copy built from scratch, with every object's keys in reverse order. */
function rebuiltReversed<T>(value: T): T {
  if (Array.isArray(value)) return value.map(rebuiltReversed) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).reverse())
      out[key] = rebuiltReversed((value as Record<string, unknown>)[key]);
    return out as T;
  }
  return value;
}

/** Fleets translated with the SNI-dispatch listener layout too (docs/xds.md §16). */
const SNI_DISPATCH_GOLDENS: Record<string, () => FleetModel> = {
  'https-sni-dispatch': httpsFleetWithoutCatchAll,
  'mixed-sni-dispatch': mixedFleet,
};
const SNI_DISPATCH: TranslateOptions = { listenerLayout: 'sni-dispatch' };

const ALL_GOLDENS: [string, () => FleetModel, TranslateOptions][] = [
  ...Object.entries(GOLDEN_FLEETS).map(([n, b]): [string, () => FleetModel, TranslateOptions] => [n, b, {}]),
  ...Object.entries(SNI_DISPATCH_GOLDENS).map(([n, b]): [string, () => FleetModel, TranslateOptions] => [
    n,
    b,
    SNI_DISPATCH,
  ]),
];

describe('golden translations', () => {
  for (const [name, build, options] of ALL_GOLDENS) {
    test(name, async () => {
      const file = path.join(GOLDEN_DIR, `${name}.json`);
      const actual = decodeAll(translateFleet(build(), options));
      if (UPDATE) {
        fs.mkdirSync(GOLDEN_DIR, { recursive: true });
        fs.writeFileSync(file, await formatJson(file, actual));
      }
      assert.ok(fs.existsSync(file), `golden file ${file} is missing; run with UPDATE_GOLDEN=1`);
      const expected = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
      assert.deepStrictEqual(JSON.parse(JSON.stringify(actual)), expected);
    });
  }
});

describe('determinism', () => {
  for (const [name, build, options] of ALL_GOLDENS) {
    test(`${name}: same model gives byte-identical encodings`, () => {
      const model: FleetModel = build();
      const first = encodeAll(translateFleet(model, options));
      const again = encodeAll(translateFleet(model, options));
      const fresh = encodeAll(translateFleet(build(), options));
      const reordered = encodeAll(translateFleet(rebuiltReversed(build()), options));
      assert.ok(first.listeners.length > 0 && first.clusters.length > 0, `${name}: nothing translated`);
      for (const kind of KINDS) {
        for (const other of [again, fresh, reordered]) {
          assert.equal(other[kind].length, first[kind].length);
          other[kind].forEach((buf, i) =>
            assert.ok(buf.equals(first[kind][i]), `${name}: ${kind}[${i}] differs`),
          );
        }
      }
    });
  }
});
