/**
 * End-to-end benchmark, as users see Convoy (issue 15, bench/README.md "End to end, as users
 * see it"): a real `convoy serve` process in file or Kubernetes mode on the bench world, M
 * simulated Envoys and one real Envoy on mTLS, measured from outside the process.
 *
 *   node dist/bench/e2e.js --mode files|kubernetes --size small|large|xlarge [--runs N] [--out FILE]
 *   node dist/bench/e2e.js --mode files --size xlarge --replicas 2 --clients 2000 --procs 2
 *   node dist/bench/e2e.js --smoke        (CI: small world once, file mode, no results file)
 *
 * Kubernetes mode needs CONVOY_K8S_BIN_DIR and CONVOY_CRD_DIR like the e2e tests. Results go to
 * bench/results/e2e/<mode>-<size>[-r<replicas>]-<rev>-node<major>.json with the machine's calibration figure
 * (bench/tools/calibrate.js) taken before and after the runs.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { calibrationMs, gitShortRev } from './common';
import { repoRoot } from './pki';
import { parseE2eArgs } from './e2e/args';
import { runOnce } from './e2e/run-once';
import type { RunFigures } from './e2e/run-once';
import { fallbacks, summarize, summarizeReplicas } from './e2e/summary';
import { formatSpread } from './e2e/stats';

const USAGE = `usage: node dist/bench/e2e.js [--mode files|kubernetes] [--size small|large|xlarge] [--runs N]
  [--repeats N] [--clients M] [--procs P] [--variant delta|sotw|mixed] [--kinds k1,k2,...]
  [--settle-ms MS] [--replicas R] [--listener-layout chains|sni-dispatch|auto]
  [--build-thread main|worker] [--status-phase flood|settled|both] [--out FILE] [--no-write] [--smoke]
(bench/README.md, "End to end, as users see it")`;

/** Parses the command line; prints the usage and exits on --help, or on bad arguments with why. */
function argsOrExit(root: string, rev: string, nodeMajor: string): ReturnType<typeof parseE2eArgs> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  try {
    return parseE2eArgs(argv, (mode, size, replicas) =>
      path.join(
        root,
        'bench',
        'results',
        'e2e',
        `${mode}-${size}${replicas > 1 ? `-r${replicas}` : ''}-${rev}-node${nodeMajor}.json`,
      ),
    );
  } catch (err) {
    process.stderr.write(`bench/e2e: ${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const root = repoRoot();
  const rev = gitShortRev(root);
  const nodeMajor = process.versions.node.split('.')[0]!;
  const args = argsOrExit(root, rev, nodeMajor);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  log(
    `convoy e2e bench: ${args.mode} mode, size ${args.size.name} (N=${args.size.listenerSets}), ${args.clients} simulated Envoys (${args.variant}) in ${args.procs} processes, ` +
      `${args.runs} run(s), ${args.repeats} change(s) per kind, rev ${rev}, node ${process.version}` +
      (args.replicas > 1 ? `, ${args.replicas} Convoy replicas` : ''),
  );
  const started = Date.now();
  const calibrationBefore = args.calibrate ? calibrationMs() : null;
  const runs: RunFigures[] = [];
  /** The results document for the runs so far; `complete` once the after-calibration is taken. */
  const report = (done: RunFigures[], calibrationAfter: number | null | undefined) => ({
    bench: 'e2e',
    mode: args.mode,
    size: args.size,
    rev,
    date: new Date().toISOString(),
    node: process.version,
    platform: `${os.platform()} ${os.arch()}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`,
    complete: calibrationAfter !== undefined,
    calibrationMs: { before: calibrationBefore, after: calibrationAfter ?? null },
    settings: {
      clients: args.clients,
      procs: args.procs,
      variant: args.variant,
      repeats: args.repeats,
      kinds: args.kinds,
      settleMs: args.settleMs ?? 'convoy default',
      ...(args.replicas > 1 ? { replicas: args.replicas } : {}),
      ...(args.listenerLayout ? { listenerLayout: args.listenerLayout } : {}),
      ...(args.buildThread ? { buildThread: args.buildThread } : {}),
      ...(args.statusPhase !== 'flood' ? { statusPhase: args.statusPhase } : {}),
    },
    snapshotEvidence:
      'the first simulated Envoy receiving the changed resource (an upper bound on the snapshot time); Convoy’s own build time from convoy_build_duration_seconds_sum',
    durationSeconds: Math.round((Date.now() - started) / 1000),
    summary:
      args.replicas > 1
        ? summarizeReplicas(done, args.mode, args.kinds, args.size.name === 'large')
        : summarize(done, args.mode, args.kinds, args.size.name === 'large'),
    fallbacks: fallbacks(done, args.kinds),
    runs: done,
  });
  // Written after every run too, so a session that stops keeps the runs it finished.
  const save = (doc: ReturnType<typeof report>) => {
    if (!args.out) return;
    fs.mkdirSync(path.dirname(args.out), { recursive: true });
    fs.writeFileSync(args.out, `${JSON.stringify(doc, null, 2)}\n`);
    log(`results: ${path.relative(root, args.out)}${doc.complete ? '' : ' (partial)'}`);
  };
  for (let i = 0; i < args.runs; i++) {
    log(`run ${i + 1}/${args.runs}`);
    runs.push(
      await runOnce({
        mode: args.mode,
        size: args.size,
        clients: args.clients,
        procs: args.procs,
        repeats: args.repeats,
        variant: args.variant,
        kinds: args.kinds,
        ...(args.settleMs !== undefined ? { settleMs: args.settleMs } : {}),
        ...(args.replicas > 1 ? { replicas: args.replicas } : {}),
        ...(args.listenerLayout ? { listenerLayout: args.listenerLayout } : {}),
        ...(args.buildThread ? { buildThread: args.buildThread } : {}),
        statusPhase: args.statusPhase,
        log,
      }),
    );
    if (i + 1 < args.runs) save(report(runs, undefined));
  }
  const calibrationAfter = args.calibrate ? calibrationMs() : null;
  const result = report(runs, calibrationAfter);
  for (const r of result.summary) {
    const mark = r.pass === undefined ? '' : r.pass ? '  pass' : '  FAIL';
    const target = r.target ? `  (target ${r.target.text})` : '';
    process.stdout.write(
      `${r.measurement}: ${formatSpread(r.spread, r.unit, r.unit === 's' ? 1 : 0)}${target}${mark}\n`,
    );
  }
  for (const [kind, f] of Object.entries(result.fallbacks))
    process.stdout.write(
      `${kind}: builds ${JSON.stringify(f.builds)} over ${f.changes} changes; full-build fallbacks (convoy_full_builds_total): ${f.fellBack}${Object.keys(f.reasons).length ? ` ${JSON.stringify(f.reasons)}` : ''}\n`,
    );
  save(result);
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
