/**
 * Turns the figures of several end-to-end runs into rows: each measurement's per-run values, their
 * median and spread, and the target of issue 15 it is read against (targets hold at the large
 * size, met by the median of at least three runs). Pure; unit-tested.
 */
import { CHANGE_LABELS } from './changes';
import type { ChangeKind } from './changes';
import type { Mode, ReplicaFigures, RunFigures } from './run-once';
import { meets, spread } from './stats';
import type { Spread, Target } from './stats';

export interface SummaryRow {
  id: string;
  measurement: string;
  unit: string;
  perRun: number[];
  spread: Spread;
  target?: Target;
  pass?: boolean;
}

/** Issue 15's targets for `mode` (they apply at the large size). */
export function targets(mode: Mode): Record<string, Target> {
  return {
    ready:
      mode === 'files'
        ? { max: 3000, unit: 'ms', text: '≤ 3 s' }
        : { max: 5000, unit: 'ms', text: '≤ 5 s after the LIST' },
    snapshot: { max: 50, unit: 'ms', text: '≤ 50 ms' },
    served: { max: 250, unit: 'ms', text: '≤ 250 ms' },
    rss: { max: 600, unit: 'MiB', text: '≤ 600 MiB' },
    eventLoop: { max: 20, unit: 'ms', text: '≤ 20 ms p99' },
  };
}

function median(values: number[]): number {
  return spread(values).median;
}

type Phase = 'flood' | 'settled';

/** Per run, the median over that run's changes of `kind` (made in `phase`) of `pick`. */
function perRunMedian(
  runs: RunFigures[],
  kind: ChangeKind,
  pick: (c: RunFigures['changes'][number]) => number | null,
  phase: Phase = 'flood',
) {
  return runs.map((r) =>
    median(
      r.changes.filter((c) => c.kind === kind && (c.phase ?? 'flood') === phase).map((c) => pick(c) ?? NaN),
    ),
  );
}

/** Builds the summary rows; `withTargets` false (sizes below large) leaves pass/fail out. */
export function summarize(
  runs: RunFigures[],
  mode: Mode,
  kinds: readonly ChangeKind[],
  withTargets: boolean,
): SummaryRow[] {
  const t = targets(mode);
  const rows: SummaryRow[] = [];
  const add = (id: string, measurement: string, unit: string, perRun: number[], target?: Target) => {
    const sp = spread(perRun);
    rows.push({
      id,
      measurement,
      unit,
      perRun,
      spread: sp,
      ...(target ? { target } : {}),
      ...(target && withTargets ? { pass: meets(sp.median, target) } : {}),
    });
  };
  const cold = runs.map((r) => r.cold);
  add(
    'cold.loaded',
    'cold start: process start → objects loaded (files read / initial LIST done)',
    'ms',
    cold.map((c) => c.loadedMs ?? NaN),
  );
  add(
    'cold.ready',
    'cold start: process start → /readyz',
    'ms',
    cold.map((c) => c.readyMs),
    mode === 'files' ? t.ready : undefined,
  );
  add(
    'cold.readyAfterLoad',
    'cold start: objects loaded → /readyz',
    'ms',
    cold.map((c) => c.readyAfterLoadMs ?? NaN),
    mode === 'kubernetes' ? t.ready : undefined,
  );
  add(
    'cold.sims',
    'cold start: process start → every simulated Envoy configured',
    'ms',
    cold.map((c) => c.simsConfiguredMs),
  );
  add(
    'cold.envoy',
    'cold start: process start → real Envoy serves (TLS handshake, last SNI)',
    'ms',
    cold.map((c) => c.envoyServingMs),
  );
  add(
    'cold.eventLoop',
    'cold start: event-loop delay max',
    'ms',
    cold.map((c) => c.eventLoopMaxMs ?? NaN),
  );
  add(
    'cold.eventLoopP99',
    'cold start: event-loop delay p99',
    'ms',
    cold.map((c) => c.eventLoopP99Ms ?? NaN),
  );
  // Kubernetes mode may make its changes during the first status writes, after them, or both
  // (bench/README.md "Kubernetes mode (session 17)"); rows of changes after them are `settled.`.
  const phases: Phase[] = (['flood', 'settled'] as const).filter((p) =>
    runs.some((r) => r.changes.some((c) => (c.phase ?? 'flood') === p)),
  );
  for (const phase of phases.length ? phases : ['flood' as const]) {
    const idPrefix = phase === 'settled' ? 'settled.' : '';
    const prefix = phase === 'settled' ? 'after status settled: ' : '';
    for (const kind of kinds) {
      const label = prefix + CHANGE_LABELS[kind];
      if (mode === 'kubernetes')
        add(
          `${idPrefix}${kind}.kubectl`,
          `${label}: kubectl apply's own time`,
          'ms',
          perRunMedian(runs, kind, (c) => c.kubectlMs, phase),
        );
      add(
        `${idPrefix}${kind}.snapshot`,
        `${label} → new snapshot (first simulated Envoy receives it)`,
        'ms',
        perRunMedian(runs, kind, (c) => c.snapshotMs, phase),
        t.snapshot,
      );
      add(
        `${idPrefix}${kind}.build`,
        `${label}: Convoy's build time (convoy_build_duration_seconds)`,
        'ms',
        perRunMedian(runs, kind, (c) => c.buildMs, phase),
      );
      add(
        `${idPrefix}${kind}.acked`,
        `${label} → every simulated Envoy ACKed`,
        'ms',
        perRunMedian(runs, kind, (c) => c.ackedMs, phase),
      );
      add(
        `${idPrefix}${kind}.served`,
        `${label} → real Envoy serves it`,
        'ms',
        perRunMedian(runs, kind, (c) => c.servedMs, phase),
        t.served,
      );
      add(
        `${idPrefix}${kind}.servedAfterApply`,
        `${label}: write returned (rename done / kubectl exited) → real Envoy serves it`,
        'ms',
        perRunMedian(runs, kind, (c) => c.servedMs - c.appliedMs, phase),
      );
      add(
        `${idPrefix}${kind}.eventLoop`,
        `${label}: event-loop delay max`,
        'ms',
        perRunMedian(runs, kind, (c) => c.eventLoopMaxMs, phase),
      );
      add(
        `${idPrefix}${kind}.eventLoopP99`,
        `${label}: event-loop delay p99`,
        'ms',
        perRunMedian(runs, kind, (c) => c.eventLoopP99Ms ?? null, phase),
        t.eventLoop,
      );
      for (const proc of ['convoy', 'clients', 'envoy', 'apiserver', 'etcd'] as const) {
        const perRun = perRunMedian(runs, kind, (c) => c.cpu?.[proc] ?? null, phase);
        if (perRun.some(Number.isFinite))
          add(
            `${idPrefix}${kind}.cpu.${proc}`,
            `${label}: CPU seconds of ${proc} while it went out`,
            's',
            perRun,
          );
      }
    }
  }
  if (runs.some((r) => r.statusComplete))
    add(
      'status.complete',
      'Kubernetes mode: process start → every object carries its status',
      'ms',
      runs.map((r) => r.statusComplete?.ms ?? NaN),
    );
  add(
    'rss.steady',
    'convoy RSS, steady (3 s after the last change)',
    'MiB',
    runs.map((r) => r.rssMiB.steady),
    t.rss,
  );
  add(
    'rss.afterCold',
    'convoy RSS 2 s after the cold start',
    'MiB',
    runs.map((r) => r.rssMiB.afterCold),
  );
  add(
    'rss.peak',
    'convoy RSS, peak (VmHWM)',
    'MiB',
    runs.map((r) => r.rssMiB.peak),
  );
  add(
    'eventLoop.steady',
    'event-loop delay max, idle 3 s',
    'ms',
    runs.map((r) => r.steadyEventLoopMaxMs ?? NaN),
  );
  add(
    'eventLoop.steadyP99',
    'event-loop delay p99, idle 3 s',
    'ms',
    runs.map((r) => r.steadyEventLoopP99Ms ?? NaN),
    t.eventLoop,
  );
  return rows;
}

/**
 * Per change kind, how its builds went over every run: convoy_builds_total results summed (result
 * "ok" is a full build; "route", "endpoints", … are fast paths) and how many changes counted a
 * convoy_full_builds_total fallback, with the reasons; "n/a" when Convoy has no such counter.
 */
export function fallbacks(
  runs: RunFigures[],
  kinds: readonly ChangeKind[],
): Record<
  string,
  {
    changes: number;
    builds: Record<string, number>;
    fellBack: number | 'n/a';
    reasons: Record<string, number>;
  }
> {
  const out: ReturnType<typeof fallbacks> = {};
  for (const kind of kinds) {
    const changes = runs.flatMap((r) => r.changes.filter((c) => c.kind === kind));
    const builds: Record<string, number> = {};
    const reasons: Record<string, number> = {};
    let fellBack = 0;
    let counted = false;
    for (const c of changes) {
      for (const [k, v] of Object.entries(c.builds)) builds[k] = (builds[k] ?? 0) + v;
      if (c.fullBuilds === null) continue;
      counted = true;
      if (Object.keys(c.fullBuilds).length) fellBack++;
      for (const [k, v] of Object.entries(c.fullBuilds)) reasons[k] = (reasons[k] ?? 0) + v;
    }
    out[kind] = { changes: changes.length, builds, fellBack: counted ? fellBack : 'n/a', reasons };
  }
  return out;
}

/**
 * Rows per Convoy replica for a run with R > 1 replicas: every row of summarize() for each
 * replica (ids prefixed `rN.`; rows without figures, such as the real Envoy's on replicas it is
 * not connected to, left out), then the CPU seconds of each replica and of its client processes,
 * which share the machine's cores with it.
 */
export function summarizeReplicas(
  runs: RunFigures[],
  mode: Mode,
  kinds: readonly ChangeKind[],
  withTargets: boolean,
): SummaryRow[] {
  const count = Math.max(0, ...runs.map((r) => r.replicas?.length ?? 0));
  const rows: SummaryRow[] = [];
  for (let i = 0; i < count; i++) {
    const of = runs.flatMap((r) => (r.replicas?.[i] ? [{ ...r, ...r.replicas[i] }] : []));
    const prefix = (row: SummaryRow): SummaryRow => ({
      ...row,
      id: `r${i + 1}.${row.id}`,
      measurement: `replica ${i + 1}: ${row.measurement}`,
    });
    rows.push(
      ...summarize(of, mode, kinds, withTargets)
        .filter((row) => row.spread.n > 0)
        .map(prefix),
    );
    const cpu = (id: string, measurement: string, pick: (r: ReplicaFigures) => number | undefined) => {
      const perRun = of.map((r) => pick(r) ?? NaN);
      rows.push(prefix({ id, measurement, unit: 's', perRun, spread: spread(perRun) }));
    };
    cpu('cpu.convoyCold', 'convoy CPU seconds, cold start', (r) => r.cpuSeconds?.convoy.cold);
    cpu('cpu.convoyChanges', 'convoy CPU seconds, all changes', (r) => r.cpuSeconds?.convoy.changes);
    cpu(
      'cpu.clientsCold',
      'simulated Envoys’ processes, CPU seconds, cold start',
      (r) => r.cpuSeconds?.clients.cold,
    );
    cpu(
      'cpu.clientsChanges',
      'simulated Envoys’ processes, CPU seconds, all changes',
      (r) => r.cpuSeconds?.clients.changes,
    );
  }
  return rows;
}
