/**
 * Command line of bench/e2e.ts, parsed into settings. Pure; unit-tested.
 *
 *   node dist/bench/e2e.js --mode files|kubernetes --size small|large [--runs N] [--out FILE]
 *     [--clients M] [--procs P] [--repeats K] [--variant delta|sotw|mixed] [--kinds a,b]
 *     [--settle-ms MS] [--replicas R] [--listener-layout chains|sni-dispatch|auto] [--build-thread main|worker]
 *     [--status-phase flood|settled|both] [--no-write] [--smoke]
 */
import { parseArgs } from 'node:util';
import type { Variant } from '../sim-envoy';
import { SIZES } from '../world';
import type { WorldSize } from '../world';
import { CHANGE_KINDS } from './changes';
import type { ChangeKind } from './changes';
import type { Mode } from './run-once';
import type { ListenerLayout } from '../../src/envoy/translate/layout-choice';

export interface E2eArgs {
  mode: Mode;
  size: WorldSize;
  runs: number;
  clients: number;
  procs: number;
  repeats: number;
  variant: Variant | 'mixed';
  kinds: ChangeKind[];
  settleMs?: number;
  /**
   * Convoy replicas serving the same world (file mode only); the simulated Envoys and their
   * processes are spread evenly over them, the real Envoy connects to the first.
   */
  replicas: number;
  /** `convoy serve --listener-layout` and the real Envoy's bootstrap (docs/xds.md §16); chains when absent. */
  listenerLayout?: ListenerLayout;
  /** `convoy serve --build-thread` (docs/architecture.md §14); Convoy's default (main) when absent. */
  buildThread?: 'main' | 'worker';
  /**
   * Kubernetes mode: when the changes are made (bench/README.md "Kubernetes mode (session 17)"):
   * `flood` right after the cold start, while Convoy still writes the world's first status (the
   * default); `settled` once every object carries its status; `both` a round of each.
   */
  statusPhase: StatusPhase;
  /** Results file; undefined with --no-write or --smoke. */
  out?: string;
  calibrate: boolean;
  smoke: boolean;
}

export type StatusPhase = 'flood' | 'settled' | 'both';

/** Simulated Envoys per size (issue 15: 100 small, 1,000 large) and their child processes. */
const CLIENTS: Record<string, { clients: number; procs: number }> = {
  tiny: { clients: 10, procs: 1 },
  small: { clients: 100, procs: 2 },
  large: { clients: 1000, procs: 4 },
  xlarge: { clients: 2000, procs: 4 },
};

function positive(value: string | undefined, flag: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`--${flag} must be a whole number ≥ ${min}, got ${value}`);
  return n;
}

/**
 * Parses `argv` (without node and the script). `defaultOut(mode, size, replicas)` names the
 * results file when --out is not given. --smoke is the CI path: the small world once in file mode, 20
 * simulated Envoys, one change of each kind, no calibration and no results file.
 */
export function parseE2eArgs(
  argv: string[],
  defaultOut: (mode: Mode, size: string, replicas: number) => string,
): E2eArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      mode: { type: 'string' },
      size: { type: 'string' },
      runs: { type: 'string' },
      out: { type: 'string' },
      clients: { type: 'string' },
      procs: { type: 'string' },
      repeats: { type: 'string' },
      variant: { type: 'string' },
      kinds: { type: 'string' },
      'settle-ms': { type: 'string' },
      replicas: { type: 'string' },
      'listener-layout': { type: 'string' },
      'build-thread': { type: 'string' },
      'status-phase': { type: 'string' },
      'no-write': { type: 'boolean' },
      smoke: { type: 'boolean' },
      // `npm run bench -- --e2e …` forwards its own switch.
      e2e: { type: 'boolean' },
    },
    strict: true,
  });
  const smoke = values.smoke === true;
  const mode = (values.mode ?? 'files') as Mode;
  if (mode !== 'files' && mode !== 'kubernetes')
    throw new Error(`--mode must be files or kubernetes, got ${mode}`);
  if (smoke && mode !== 'files') throw new Error('--smoke runs file mode only');
  const sizeName = values.size ?? 'small';
  const size = SIZES[sizeName];
  if (!size) throw new Error(`unknown --size ${sizeName} (${Object.keys(SIZES).join(', ')})`);
  const defaults = smoke ? { clients: 20, procs: 1 } : (CLIENTS[sizeName] ?? CLIENTS.small!);
  const variant = (values.variant ?? 'delta') as Variant | 'mixed';
  if (!['delta', 'sotw', 'mixed'].includes(variant))
    throw new Error(`--variant must be delta, sotw or mixed`);
  const kinds = (values.kinds ?? CHANGE_KINDS.join(','))
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean) as ChangeKind[];
  for (const k of kinds)
    if (!CHANGE_KINDS.includes(k)) throw new Error(`unknown change kind ${k} (${CHANGE_KINDS.join(', ')})`);
  const layout = values['listener-layout'];
  if (layout !== undefined && !['chains', 'sni-dispatch', 'auto'].includes(layout))
    throw new Error(`--listener-layout must be chains, sni-dispatch or auto, got ${layout}`);
  const buildThread = values['build-thread'];
  if (buildThread !== undefined && buildThread !== 'main' && buildThread !== 'worker')
    throw new Error(`--build-thread must be main or worker, got ${buildThread}`);
  const statusPhase = (values['status-phase'] ?? 'flood') as StatusPhase;
  if (!['flood', 'settled', 'both'].includes(statusPhase))
    throw new Error(`--status-phase must be flood, settled or both, got ${statusPhase}`);
  if (statusPhase !== 'flood' && mode !== 'kubernetes')
    throw new Error('--status-phase settled or both runs Kubernetes mode only');
  const write = !smoke && values['no-write'] !== true;
  const replicas = positive(values.replicas, 'replicas', 1);
  if (replicas > 1 && mode !== 'files')
    throw new Error('--replicas above 1 runs file mode only (Kubernetes mode would need leader election)');
  const clients = positive(values.clients, 'clients', defaults.clients);
  const procs = positive(values.procs, 'procs', defaults.procs);
  if (clients < replicas || procs < replicas)
    throw new Error(
      `--clients and --procs must be at least --replicas (${replicas}): each replica gets its own`,
    );
  return {
    mode,
    size,
    runs: smoke ? 1 : positive(values.runs, 'runs', 3),
    clients,
    procs,
    repeats: smoke ? 1 : positive(values.repeats, 'repeats', 5),
    variant,
    kinds,
    ...(values['settle-ms'] !== undefined
      ? { settleMs: positive(values['settle-ms'], 'settle-ms', 0, 0) }
      : {}),
    replicas,
    ...(layout !== undefined && layout !== 'chains' ? { listenerLayout: layout as ListenerLayout } : {}),
    ...(buildThread !== undefined ? { buildThread } : {}),
    statusPhase,
    ...(write ? { out: values.out ?? defaultOut(mode, sizeName, replicas) } : {}),
    calibrate: !smoke,
    smoke,
  };
}
