/**
 * The bench with `--build-thread worker` (docs/architecture.md §14): the Controller runs in a worker
 * thread behind a BuildWorkerHost, as `convoy serve --build-thread worker` runs it, and the ADS
 * server reads the MirrorCache. (a) becomes the cold build in the build thread: the store copied
 * to it, built, translated, encoded and its snapshot delivered to this thread; the event-loop delay
 * of this thread is recorded meanwhile, and what receiving the snapshot costs it.
 */
import { StatusView } from '../src/status/view';
import * as path from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { BuildWorkerHost } from '../src/controller/build-worker-host';
import { silentLogger } from '../src/observability/logger';
import { TypeUrl } from '../src/envoy/resources';
import type { MirrorCache } from '../src/xds/mirror-cache';
import type { Results, Server } from './run';
import { BIND_ADDRESS } from './run';
import { CONTROLLER_NAME, FLEET } from './world';
import { fmtBytes, fmtMs, maxRss, nowMs, round } from './common';

/** Event-loop delay of a histogram in ms: p99 and max. */
export function eventLoopDelayMs(h: IntervalHistogram): { p99: number; max: number } {
  if (h.count === 0) return { p99: 0, max: 0 };
  return { p99: round(h.percentile(99) / 1e6, 1), max: round(h.max / 1e6, 1) };
}

/** Starts the build thread on the filled store; returns once its first snapshot is in the MirrorCache. */
export async function measureColdBuildInThread(server: Server, results: Results): Promise<void> {
  const mirror = server.cache as MirrorCache;
  const applyMs: number[] = [];
  const apply = mirror.apply.bind(mirror);
  // What receiving the snapshot costs this thread (the rest of the build is in the other thread).
  mirror.apply = (delta) => {
    const t = nowMs();
    apply(delta);
    applyMs.push(nowMs() - t);
  };
  const eld = monitorEventLoopDelay({ resolution: 10 });
  eld.enable();
  const rssBefore = process.memoryUsage().rss;
  const t0 = nowMs();
  const statuses = new StatusView();
  const host = new BuildWorkerHost({
    entry: path.join(__dirname, '..', 'src', 'cli', 'build-thread.js'),
    init: {
      controller: { controllerName: CONTROLLER_NAME, debounceMs: 0, maxDelayMs: 0 },
      translate: { bindAddress: BIND_ADDRESS },
      fleetModels: false,
    },
    store: server.store,
    cache: mirror,
    statusSinks: [statuses],
    logger: silentLogger(),
    metrics: server.metrics,
  });
  server.controller = host;
  host.start();
  while (!host.isReady()) await new Promise((r) => setTimeout(r, 5));
  const t1 = nowMs();
  await host.settle();
  eld.disable();
  const peak = maxRss();
  const snap = mirror.snapshot(FLEET);
  if (!snap) throw new Error(`the build thread produced no fleet ${FLEET}`);
  const stats = mirror.stats();
  const delay = eventLoopDelayMs(eld);
  results.details.a = {
    buildThread: 'worker',
    ms: {
      total: round(t1 - t0),
      receiveSnapshot: round(
        applyMs.reduce((a, b) => a + b, 0),
        2,
      ),
    },
    servingThreadEventLoopDelayMs: delay,
    rssBeforeBytes: rssBefore,
    peakRssBytes: peak,
    snapshot: {
      secrets: snap.types[TypeUrl.Secret].entries.size,
      routeConfigurations: snap.types[TypeUrl.Route].entries.size,
      clusters: snap.types[TypeUrl.Cluster].entries.size,
      endpoints: snap.types[TypeUrl.Endpoint].entries.size,
    },
    encodedBytes: stats.bytes,
    statuses: statuses.list().length,
  };
  const large = server.world.size.name === 'large';
  results.add({
    id: 'a',
    measurement: 'cold build in the build thread (store copy → snapshot here)',
    result: `${fmtMs(t1 - t0)} (receiving the snapshot ${fmtMs(applyMs.reduce((a, b) => a + b, 0))} here)`,
    target: large ? '≤ 2 s' : '',
    pass: large ? t1 - t0 <= 2000 : undefined,
    value: round(t1 - t0),
    unit: 'ms',
  });
  results.add({
    id: 'a',
    measurement: 'serving thread event-loop delay during the cold build',
    result: `p99 ${fmtMs(delay.p99)}, max ${fmtMs(delay.max)}`,
    target: large ? 'p99 ≤ 20 ms' : '',
    pass: large ? delay.p99 <= 20 : undefined,
    value: delay.p99,
    unit: 'ms',
  });
  results.add({
    id: 'a',
    measurement: 'cold build peak RSS (whole process, both threads)',
    result: `${fmtBytes(peak)} (before build ${fmtBytes(rssBefore)}; ${fmtBytes(stats.bytes)} encoded)`,
    target: '',
    value: Math.round(peak),
    unit: 'bytes',
  });
}

/**
 * Runs a full rebuild (Controller.requestFullBuild: every object looked at again, nothing changes)
 * and returns its time to settled and this thread's event-loop delay meanwhile, and while idle
 * for a second before.
 */
export async function fullRebuild(
  server: Server,
): Promise<{ ms: number; p99: number; max: number; idle: { p99: number; max: number } }> {
  const controller = server.controller!;
  // The floor on this machine: the same histogram over one idle second just before (a loaded
  // machine delays even an idle thread's timers; the build's own delay is what exceeds this).
  const idle = monitorEventLoopDelay({ resolution: 10 });
  idle.enable();
  await new Promise((r) => setTimeout(r, 1000));
  idle.disable();
  const eld = monitorEventLoopDelay({ resolution: 10 });
  eld.enable();
  await new Promise((r) => setTimeout(r, 50)); // the histogram records from its second tick on
  const t0 = nowMs();
  controller.requestFullBuild();
  await new Promise((r) => setImmediate(r));
  await controller.settle();
  const ms = nowMs() - t0;
  await new Promise((r) => setTimeout(r, 20));
  eld.disable();
  return { ms: round(ms), ...eventLoopDelayMs(eld), idle: eventLoopDelayMs(idle) };
}
