/**
 * Run parameters shared by the fuzz tests, from the environment:
 *  - CONVOY_FUZZ_RUNS=N   number of random worlds (default: each test's CI budget);
 *  - CONVOY_FUZZ_SEED=S   replay a run (a failure prints its seed and shrink path);
 *  - CONVOY_FUZZ_PATH=P   with the seed, jump straight to the shrunk counterexample;
 *  - CONVOY_FUZZ_REGEX=1  put random and hostile regular expressions in every regex field.
 * Without a seed each run draws a new one, so CI keeps exploring; the seed is printed either way.
 */
import type fc from 'fast-check';
import type { WorldOptions } from '../support/worlds';

export interface FuzzRun {
  parameters: fc.Parameters<unknown>;
  world: WorldOptions;
  /** One line naming the seed and how to replay or extend the run. */
  describe: string;
}

function integerFrom(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${value}`);
  return n;
}

/** fast-check parameters for a test whose CI budget is `defaultRuns` worlds. */
export function fuzzRun(defaultRuns: number): FuzzRun {
  const numRuns = integerFrom(process.env.CONVOY_FUZZ_RUNS) ?? defaultRuns;
  const seed = integerFrom(process.env.CONVOY_FUZZ_SEED) ?? (Math.random() * 2 ** 31) | 0;
  const path = process.env.CONVOY_FUZZ_PATH || undefined;
  const aggressiveRegex = process.env.CONVOY_FUZZ_REGEX === '1';
  return {
    parameters: { numRuns, seed, includeErrorInReport: true, ...(path ? { path } : {}) },
    world: { aggressiveRegex },
    describe:
      `${numRuns} worlds, CONVOY_FUZZ_SEED=${seed}${path ? ` CONVOY_FUZZ_PATH=${path}` : ''}` +
      (aggressiveRegex ? ' CONVOY_FUZZ_REGEX=1' : ''),
  };
}
