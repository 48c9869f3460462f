/**
 * Measures status at scale in Kubernetes mode, as a user sees it: the bench world is created in
 * a real kube-apiserver (e2e/cluster), then `convoy serve` starts against it, and the clock runs
 * until every GatewayClass, Gateway, ListenerSet and HTTPRoute of the world carries Convoy's
 * status for its current generation, as read back from the API server.
 *
 * Why: the status writer's pacing decides how long a cold cluster waits for complete status
 * (docs/gateway-api.md §16); this is the number behind bench/README.md "Status at scale".
 *
 * Usage: node dist/bench/status-scale.js [--size small|large] [--runs 3] [--status-qps N]
 *   [--profile-dir DIR] [--out FILE.json]. Needs CONVOY_K8S_BIN_DIR and CONVOY_CRD_DIR like the
 *   e2e tests. --profile-dir keeps, per run, a 30 s CPU profile of the API server taken 10 s after
 *   Convoy is ready (apiserver-runN.pprof, for `go tool pprof -top`) and Convoy's whole-run
 *   V8 CPU profile (convoy-runN/*.cpuprofile, for bench/tools/profile-top.js).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { LocalCluster } from '../e2e/cluster/cluster';
import type { ConvoyProcess } from '../e2e/harness';
import { startConvoyOnCluster } from './e2e/kube-convoy';
import { createWorld } from './e2e/kube-world';
import { calibrationMs, gitShortRev, median, round } from './common';
import { SIZES, World } from './world';
import type { ApiServerFigures } from './e2e/apiserver-figures';
import {
  apiserverCounters,
  apiserverCpuProfile,
  apiserverFigures,
  apiserverMetrics,
  childCpuSeconds,
  cpuDelta,
} from './e2e/apiserver-figures';
import { countCurrent, STATUS_KINDS, statusWrites } from './e2e/status-complete';

/**
 * How often Convoy's /metrics is read for its write counter. Rendering the page costs Convoy tens of
 * milliseconds of CPU at large (thousands of series), so at 4 reads a second (session 11) the bench
 * itself took CPU from the API server it measures; every 2 s adds at most 2 s to a figure.
 */
const POLL_MS = 2000;

interface RunResult {
  objects: number;
  statuses: number;
  createMs: number;
  readyMs: number;
  completeMs: number;
  writes: Record<string, number>;
  /** CPU seconds each process spent from Convoy's start to complete status. */
  cpuSeconds: Record<string, number>;
  /** Of those, the CPU seconds spent from Convoy's start to its /readyz (LISTs, first build). */
  cpuSecondsToReady: Record<string, number>;
  /** The API server's own view of the status writes in that window (its /metrics, differenced). */
  apiserver: ApiServerFigures;
}

/** One run on a fresh cluster: create the world, start Convoy, wait for complete status. */
async function runOnce(
  world: World,
  statusQps: number | undefined,
  profile: { dir: string; run: number } | undefined,
): Promise<RunResult> {
  const cluster = await LocalCluster.start({});
  let convoy: ConvoyProcess | undefined;
  try {
    const objects = world.objects();
    const expected = objects.filter((o) => (STATUS_KINDS as readonly string[]).includes(o.kind)).length;
    const t0 = performance.now();
    await createWorld(cluster.admin, objects);
    const createMs = performance.now() - t0;
    const countersBefore = apiserverCounters(await apiserverMetrics(cluster));
    const cpuBefore = childCpuSeconds();
    const started = performance.now();
    convoy = await startConvoyOnCluster(
      cluster,
      'convoy-status-scale',
      statusQps ? ['--status-qps', String(statusQps)] : [],
      profile
        ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.join(profile.dir, `convoy-run${profile.run}`)}` }
        : undefined,
    );
    const readyMs = performance.now() - started;
    const cpuSecondsToReady = cpuDelta(cpuBefore, childCpuSeconds());
    const apiserverProfile = profile
      ? new Promise((r) => setTimeout(r, 10_000)).then(() =>
          apiserverCpuProfile(cluster, 30, path.join(profile.dir, `apiserver-run${profile.run}.pprof`)),
        )
      : undefined;
    // Convoy's own counter of writes is cheap to poll; the API server is LISTed (15,000 objects at
    // large, which would cost it more than the writes do if done every second) only once Convoy
    // has written or found current as many statuses as the world has.
    for (;;) {
      const w = statusWrites((await convoy.get('/metrics')).body);
      if ((w.written ?? 0) + (w.unchanged ?? 0) >= expected) {
        const n = await countCurrent(cluster.admin);
        if (n >= expected) break;
      }
      if (performance.now() - started > 3_600_000) throw new Error('status incomplete after an hour');
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const completeMs = performance.now() - started;
    const cpuSeconds = cpuDelta(cpuBefore, childCpuSeconds());
    const apiserver = apiserverFigures(countersBefore, apiserverCounters(await apiserverMetrics(cluster)));
    const writes = statusWrites((await convoy.get('/metrics')).body);
    await apiserverProfile;
    return {
      objects: objects.length,
      statuses: expected,
      createMs,
      readyMs,
      completeMs,
      writes,
      cpuSeconds,
      cpuSecondsToReady,
      apiserver,
    };
  } finally {
    await convoy?.dispose();
    await cluster.teardown();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: 'small' },
      runs: { type: 'string', default: '3' },
      'status-qps': { type: 'string' },
      'profile-dir': { type: 'string' },
      out: { type: 'string' },
    },
  });
  const size = SIZES[values.size];
  if (!size) throw new Error(`unknown size ${values.size}`);
  const runs = Math.max(1, Number(values.runs));
  const statusQps = values['status-qps'] ? Number(values['status-qps']) : undefined;
  const world = new World({ size });
  const calibrationBefore = calibrationMs();
  const results: RunResult[] = [];
  for (let i = 0; i < runs; i++) {
    const profileDir = values['profile-dir'];
    const r = await runOnce(
      world,
      statusQps,
      profileDir ? { dir: path.resolve(profileDir), run: i + 1 } : undefined,
    );
    results.push(r);
    process.stdout.write(
      `run ${i + 1}/${runs}: ${r.statuses} statuses of ${r.objects} objects complete ${round(r.completeMs / 1000, 1)} s after start (ready ${round(r.readyMs / 1000, 1)} s; world created in ${round(r.createMs / 1000, 1)} s); writes ${JSON.stringify(r.writes)}; CPU s ${JSON.stringify(r.cpuSeconds)} (to ready ${JSON.stringify(r.cpuSecondsToReady)}); API server ${JSON.stringify(r.apiserver)}\n`,
    );
  }
  const calibrationAfter = calibrationMs();
  const summary = {
    bench: 'status-scale',
    size: size.name,
    rev: gitShortRev(path.resolve(__dirname, '..', '..')),
    node: process.version,
    statusQps: statusQps ?? null,
    calibrationMs: [calibrationBefore, calibrationAfter],
    medianCompleteMs: Math.round(median(results.map((r) => r.completeMs))),
    medianReadyMs: Math.round(median(results.map((r) => r.readyMs))),
    runs: results.map((r) => ({
      ...r,
      createMs: Math.round(r.createMs),
      readyMs: Math.round(r.readyMs),
      completeMs: Math.round(r.completeMs),
    })),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  if (values.out) fs.writeFileSync(values.out, `${JSON.stringify(summary, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
