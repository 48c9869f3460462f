/**
 * Convoy benchmarks at Knative scale.
 *
 *   npm run bench -- --size small|large [--only a,b,...] [--clients M] [--procs P]
 *
 * Measurements (bench/README.md explains them and the targets):
 *   a  cold build: objects → DAG → encoded xDS resources; time and peak RSS
 *   b  incremental: store change → new snapshot in the cache (the Controller's code path)
 *   c  fan-out of each change to M simulated Envoys (SotW and delta), ACK times and bytes
 *   d  control-plane RSS with M streams
 *   e  event-loop delay during pushes
 *   f  reconnect storm: 200 clients at once, time to all-ACKed and aggregate MB/s
 *   g  one real Envoy (delta): certificate rotation → new certificate presented for its SNI
 *
 * The server (store, Controller, XdsCache, AdsServer) runs in this process; simulated Envoys run in
 * forked child processes (bench/client.ts). With --build-thread worker the Controller runs in a
 * worker thread (bench/build-thread.ts). A table goes to stdout, JSON to bench/results/.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ObjectStore } from '../src/store/store';
import { XdsCache } from '../src/xds/cache';
import { MirrorCache, type SnapshotSource } from '../src/xds/mirror-cache';
import type { BuildWorkerHost } from '../src/controller/build-worker-host';
import type { FleetChange } from '../src/xds/snapshot';
import { TypeUrl } from '../src/envoy/resources';
import { buildGateways } from '../src/gateway/build';
import { BuildMemo } from '../src/gateway/build-memo';
import { translateFleet } from '../src/envoy/translate';
import { envoyRoot } from '../src/envoy/protos';
import { Controller } from '../src/controller/controller';
import { ConvoyMetrics } from '../src/observability/metrics';
import { silentLogger } from '../src/observability/logger';
import type { KubeObject } from '../src/store/objects';
import type { ObjectStatus } from '../src/status/types';
import { CONTROLLER_NAME, FLEET, SIZES, World } from './world';
import type { WorldSize } from './world';
import { fmtBytes, fmtMs, gitShortRev, maxRss, median, nowMs, pinToCpus, round } from './common';
import { repoRoot } from './pki';
import { tuneGarbageCollection } from '../src/runtime/gc-tuning';
import { MALLOC_ENV, hasMallocEnv } from '../src/runtime/memory';
import { spawnSync } from 'node:child_process';
import { fullRebuild, measureColdBuildInThread } from './build-thread';

// ------------------------------------------------------------------------------------------------
// Results

export interface Row {
  id: string;
  measurement: string;
  result: string;
  target: string;
  /** undefined: no target (informational). */
  pass?: boolean;
  /** Machine-readable value in `unit`. */
  value?: number;
  unit?: string;
}

export class Results {
  readonly rows: Row[] = [];
  readonly details: Record<string, unknown> = {};

  add(row: Row): void {
    this.rows.push(row);
    const mark = row.pass === undefined ? '' : row.pass ? 'PASS' : 'FAIL';
    console.error(
      `  [${row.id}] ${row.measurement}: ${row.result}${row.target ? ` (target ${row.target})` : ''} ${mark}`,
    );
  }

  table(): string {
    const header = ['#', 'measurement', 'result', 'target', 'pass/fail'];
    const lines = this.rows.map((r) => [
      r.id,
      r.measurement,
      r.result,
      r.target || '-',
      r.pass === undefined ? '-' : r.pass ? 'pass' : 'FAIL',
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
    const fmt = (cells: string[]) =>
      cells
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd();
    return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
  }
}

// ------------------------------------------------------------------------------------------------
// Arguments

export interface BenchArgs {
  size: WorldSize;
  only: Set<string>;
  clients: number;
  procs: number;
  variants: ('sotw' | 'delta')[];
  stormClients: number;
  repeats: number;
  write: boolean;
  /** Write a heap snapshot (bench/.cache) once the clients of each variant are synced. */
  heapSnapshot: boolean;
  /** Directory for a CPU profile of each fan-out change (store change → all ACKed), if set. */
  profileChanges?: string;
  /** Scheduling priority of the simulated Envoys' processes (0 = same as the server). */
  clientNice: number;
  /** CPUs (taskset list) for the simulated Envoys' processes and for this process, if set. */
  clientCpus?: string;
  serverCpus?: string;
  /** Fan-out (c) these change kinds in this order (a comma list; kinds may repeat), not all four once. */
  changes?: ChangeSpec['kind'][];
  /** Where the Controller runs (docs/architecture.md §14): this thread, or a worker thread. */
  buildThread: 'main' | 'worker';
}

function parseArgs(argv: string[]): BenchArgs {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    if (i >= 0) return argv[i + 1];
    const eq = argv.find((a) => a.startsWith(`--${name}=`));
    return eq?.slice(name.length + 3);
  };
  const sizeName = get('size') ?? 'small';
  const size = SIZES[sizeName];
  if (!size) throw new Error(`unknown --size ${sizeName} (${Object.keys(SIZES).join(', ')})`);
  const large = sizeName === 'large';
  const only = new Set(
    (get('only') ?? 'a,b,c,d,e,f,g')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const variants = (get('variants') ?? 'sotw,delta').split(',').map((v) => v.trim()) as ('sotw' | 'delta')[];
  return {
    size,
    only,
    clients: Number(get('clients') ?? (large ? 1000 : 100)),
    procs: Number(get('procs') ?? (large ? 4 : 2)),
    variants,
    stormClients: Number(get('storm-clients') ?? (large ? 200 : 50)),
    repeats: Number(get('repeats') ?? (large ? 5 : 5)),
    // --smoke (CI): prove the suite runs; nothing is written.
    write: !argv.includes('--no-write') && !argv.includes('--smoke'),
    heapSnapshot: argv.includes('--heap-snapshot'),
    profileChanges: get('profile-changes'),
    clientNice: Number(get('client-nice') ?? 0),
    clientCpus: get('client-cpus'),
    serverCpus: get('server-cpus'),
    buildThread: get('build-thread') === 'worker' ? 'worker' : 'main',
    changes: get('changes')
      ?.split(',')
      .map((c) => c.trim() as ChangeSpec['kind']),
  };
}

// ------------------------------------------------------------------------------------------------
// The server side: one store, cache and Controller, as `convoy serve` wires them

export interface Server {
  world: World;
  store: ObjectStore;
  /** The XdsCache, or with --build-thread worker the MirrorCache the build thread fills. */
  cache: SnapshotSource;
  metrics: ConvoyMetrics;
  controller?: Controller | BuildWorkerHost;
  statuses: ObjectStatus[];
  /** What (a)'s build remembered; the Controller starts from it, as a long-running one would. */
  memo: BuildMemo;
}

export const BIND_ADDRESS = '127.0.0.1';

function buildNow(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Resolves with the first accepted snapshot change of the bench fleet that satisfies `pred`. */
export function nextFleetChange(
  cache: SnapshotSource,
  pred: (c: FleetChange) => boolean = () => true,
  timeoutMs = 120_000,
): Promise<{ change: FleetChange; at: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching snapshot change within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = cache.onChange((change) => {
      if (change.fleet !== FLEET || !pred(change)) return;
      const at = nowMs();
      clearTimeout(timer);
      off();
      resolve({ change, at });
    });
  });
}

function changedNames(c: FleetChange, type: string): readonly string[] {
  return c.changed.get(type as never) ?? [];
}

// ------------------------------------------------------------------------------------------------
// a. cold build

function measureColdBuild(server: Server, results: Results): void {
  const { store, world } = server;
  const cache = server.cache as XdsCache;
  // Process start-up, not build work: the server loads the Envoy protos when it starts serving.
  envoyRoot();
  const rssBefore = process.memoryUsage().rss;
  const t0 = nowMs();
  const built = buildGateways(store, { controllerName: CONTROLLER_NAME, now: buildNow() }, server.memo);
  const t1 = nowMs();
  const fleet = built.fleets.find((f) => f.fleet === FLEET);
  if (!fleet) throw new Error(`the build produced no fleet ${FLEET}`);
  const resources = translateFleet(fleet, { bindAddress: BIND_ADDRESS });
  const t2 = nowMs();
  const outcome = cache.setFleet(FLEET, resources);
  const t3 = nowMs();
  const peak = maxRss();
  if (!outcome.ok) throw new Error(`snapshot refused: ${outcome.errors.slice(0, 5).join('; ')}`);
  server.statuses = built.statuses;

  // Sanity: the world is fully accepted and the snapshot holds what it should.
  const snap = cache.snapshot(FLEET)!;
  const listener = resources.listeners.find((l) => l.name === world.listenerName());
  const chains = listener?.filter_chains?.length ?? 0;
  const counts = {
    filterChains: chains,
    routeConfigurations: snap.types[TypeUrl.Route].entries.size,
    secrets: snap.types[TypeUrl.Secret].entries.size,
    clusters: snap.types[TypeUrl.Cluster].entries.size,
    endpoints: snap.types[TypeUrl.Endpoint].entries.size,
    listeners: snap.types[TypeUrl.Listener].entries.size,
  };
  const problems = statusProblems(built.statuses);
  if (chains !== world.size.listenerSets || counts.secrets !== world.size.listenerSets) {
    throw new Error(
      `unexpected snapshot: ${JSON.stringify(counts)}; problems: ${problems.slice(0, 5).join('; ')}`,
    );
  }
  if (problems.length)
    console.error(`  warning: ${problems.length} objects not accepted, e.g. ${problems[0]}`);
  const stats = cache.stats();
  const total = t3 - t0;
  results.details.a = {
    ms: { buildGateways: t1 - t0, translateFleet: t2 - t1, setFleet: t3 - t2, total },
    rssBeforeBytes: rssBefore,
    peakRssBytes: peak,
    snapshot: counts,
    encodedBytes: stats.bytes,
    listenerBytes: snap.types[TypeUrl.Listener].entries.get(world.listenerName())?.bytes.length,
    statuses: built.statuses.length,
    notAccepted: problems.length,
  };
  const large = world.size.name === 'large';
  results.add({
    id: 'a',
    measurement: 'cold build (objects → DAG → encoded xDS)',
    result: `${fmtMs(total)} (build ${fmtMs(t1 - t0)}, translate ${fmtMs(t2 - t1)}, encode ${fmtMs(t3 - t2)})`,
    target: large ? '≤ 2 s' : '',
    pass: large ? total <= 2000 : undefined,
    value: round(total),
    unit: 'ms',
  });
  results.add({
    id: 'a',
    measurement: 'cold build peak RSS (whole process)',
    result: `${fmtBytes(peak)} (before build ${fmtBytes(rssBefore)}; ${fmtBytes(stats.bytes)} encoded)`,
    target: '',
    value: Math.round(peak),
    unit: 'bytes',
  });
}

/** Objects of the bench world whose status says they are not (fully) accepted. */
function statusProblems(statuses: ObjectStatus[]): string[] {
  const out: string[] = [];
  for (const s of statuses) {
    const conds: { type: string; status: string; reason: string; message: string }[] = [];
    const st = s.status as Record<string, unknown>;
    if (Array.isArray(st.conditions)) conds.push(...(st.conditions as typeof conds));
    for (const p of (st.parents as { conditions?: typeof conds }[] | undefined) ?? [])
      conds.push(...(p.conditions ?? []));
    for (const l of (st.listeners as { conditions?: typeof conds }[] | undefined) ?? [])
      conds.push(...(l.conditions ?? []));
    const bad = conds.find(
      (c) =>
        ((c.type === 'Accepted' || c.type === 'ResolvedRefs' || c.type === 'Programmed') &&
          c.status !== 'True') ||
        (c.type === 'Conflicted' && c.status === 'True'),
    );
    if (bad)
      out.push(
        `${s.kind} ${s.metadata.namespace}/${s.metadata.name}: ${bad.type}=${bad.status} ${bad.reason}: ${bad.message}`,
      );
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// b. incremental changes

export interface ChangeSpec {
  kind: 'route' | 'cert' | 'listenerset' | 'endpoints';
  label: string;
  objects: KubeObject[];
  /** The xDS type and name that must change. */
  expect: { typeUrl: string; name: string }[];
  /** Certificate rotations: the new serial. */
  serial?: string;
  hostname?: string;
}

let changeCounter = 0;

/** The next change of a kind, on a different object each time. */
export function nextChange(world: World, kind: ChangeSpec['kind'], server?: Server): ChangeSpec {
  const k = changeCounter++;
  const n = world.size;
  switch (kind) {
    case 'route': {
      const r = (k * 7919 + 13) % n.routes;
      const l = world.listenerOfRoute(r);
      return {
        kind,
        label: 'HTTPRoute edited',
        objects: world.editRoute(r),
        expect: [{ typeUrl: TypeUrl.Route, name: world.routeConfigName(l) }],
      };
    }
    case 'cert': {
      const i = (k * 104729 + 7) % n.listenerSets;
      const rot = world.rotateCertificate(i);
      return {
        kind,
        label: 'certificate rotated',
        objects: rot.objects,
        expect: [{ typeUrl: TypeUrl.Secret, name: world.secretResourceName(i) }],
        serial: rot.serial,
        hostname: `svc-${i}.bench.example.com`,
      };
    }
    case 'endpoints': {
      let s = (k * 6151 + 3) % n.services;
      // Only Services some route uses have a ClusterLoadAssignment.
      const eds = server?.cache.snapshot(FLEET)?.types[TypeUrl.Endpoint].entries;
      for (let tries = 0; eds && !eds.has(world.clusterName(s)) && tries < n.services; tries++)
        s = (s + 1) % n.services;
      return {
        kind,
        label: 'EndpointSlice changed',
        objects: world.changeEndpoints(s),
        expect: [{ typeUrl: TypeUrl.Endpoint, name: world.clusterName(s) }],
      };
    }
    case 'listenerset': {
      const add = world.addListenerSet();
      return {
        kind,
        label: 'ListenerSet added',
        objects: add.objects,
        expect: [
          { typeUrl: TypeUrl.Listener, name: world.listenerName() },
          { typeUrl: TypeUrl.Route, name: world.routeConfigName(add.index) },
          { typeUrl: TypeUrl.Secret, name: world.secretResourceName(add.index) },
        ],
      };
    }
  }
}

/** Applies a change to the store and resolves when the cache holds a snapshot with it. */
export async function applyChange(
  server: Server,
  change: ChangeSpec,
): Promise<{ t0: number; t1: number; change: FleetChange }> {
  const wait = nextFleetChange(
    server.cache,
    (c) => change.expect.every((e) => changedNames(c, e.typeUrl).includes(e.name)),
    30_000,
  );
  const t0 = nowMs();
  for (const o of change.objects) server.store.put(o);
  const got = await wait;
  return { t0, t1: got.at, change: got.change };
}

export const CHANGE_KINDS: ChangeSpec['kind'][] = ['route', 'cert', 'listenerset', 'endpoints'];

function startController(server: Server): Controller {
  const controller = new Controller({
    store: server.store,
    cache: server.cache as XdsCache,
    statusSinks: [],
    logger: silentLogger(),
    metrics: server.metrics,
    controllerName: CONTROLLER_NAME,
    translate: { bindAddress: BIND_ADDRESS },
    memo: server.memo,
    // No quiet period: measure the build itself (production default: 50 ms quiet, 500 ms max).
    debounceMs: 0,
    maxDelayMs: 0,
  });
  server.controller = controller;
  return controller;
}

async function measureIncremental(server: Server, args: BenchArgs, results: Results): Promise<void> {
  // The Controller's first build over an already-built cache: a full rebuild with warm JIT, from
  // the BuildMemo (a)'s build filled, as in a controller that has been running (every memo entry
  // is checked against its inputs, so each object is still looked at).
  let full: number;
  const large = server.world.size.name === 'large';
  if (server.controller) {
    // The build thread already built once (a): a full rebuild is asked for, as protected ports do.
    const rebuild = await fullRebuild(server);
    full = rebuild.ms;
    results.add({
      id: 'b',
      measurement: 'full rebuild, warm (in the build thread)',
      result: `${fmtMs(full)}; serving thread event-loop delay p99 ${fmtMs(rebuild.p99)}, max ${fmtMs(rebuild.max)} (idle before: p99 ${fmtMs(rebuild.idle.p99)})`,
      target: large ? 'p99 ≤ 20 ms' : '',
      pass: large ? rebuild.p99 <= 20 : undefined,
      value: round(full),
      unit: 'ms',
    });
  } else {
    const first = nextFleetChange(server.cache, () => true, 120_000).catch(() => undefined);
    const t0 = nowMs();
    startController(server).start();
    await Promise.race([first, waitIdle(server)]);
    await waitIdle(server);
    full = nowMs() - t0;
    results.add({
      id: 'b',
      measurement: 'full rebuild, warm (Controller first build)',
      result: fmtMs(full),
      target: '',
      value: round(full),
      unit: 'ms',
    });
  }
  const details: Record<string, number[]> = {};
  for (const kind of CHANGE_KINDS) {
    const times: number[] = [];
    let label = '';
    const profiler = args.profileChanges ? await (await import('./fanout')).startProfile() : undefined;
    for (let i = 0; i < args.repeats; i++) {
      const change = nextChange(server.world, kind, server);
      label = change.label;
      const r = await applyChange(server, change);
      times.push(r.t1 - r.t0);
      await waitIdle(server);
    }
    if (profiler) await profiler.stop(path.join(args.profileChanges!, `incremental-${kind}.cpuprofile`));
    details[kind] = times.map((t) => round(t, 2));
    const med = median(times);
    const max = Math.max(...times);
    results.add({
      id: 'b',
      measurement: `incremental: ${label} → snapshot`,
      result: `${fmtMs(med)} median, ${fmtMs(max)} max (n=${times.length})`,
      target: large ? '≤ 50 ms' : '',
      pass: large ? med <= 50 : undefined,
      value: round(med, 2),
      unit: 'ms',
    });
  }
  results.details.b = { fullRebuildMs: round(full), changesMs: details };
}

/** Resolves once the Controller has no build running or pending. */
export async function waitIdle(server: Server): Promise<void> {
  if (server.controller && !(server.controller instanceof Controller)) {
    await server.controller.settle();
    return;
  }
  const c = server.controller as unknown as
    { building?: boolean; debouncer?: { pending(): boolean } } | undefined;
  for (;;) {
    await new Promise((r) => setImmediate(r));
    if (!c) return;
    if (!c.building && !c.debouncer?.pending()) {
      await new Promise((r) => setTimeout(r, 2));
      if (!c.building && !c.debouncer?.pending()) return;
    }
  }
}

// ------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  // `npm run bench -- --peer envoy-gateway`: the side-by-side comparison (bench/peer.ts).
  if (process.argv.includes('--peer')) {
    await import('./peer');
    return;
  }
  // Measure Convoy as deployed: the Dockerfile starts it with MALLOC_ENV, which glibc only reads
  // at process start, so re-run this script with it (--no-malloc-tuning measures without).
  if (!hasMallocEnv() && !process.argv.includes('--no-malloc-tuning')) {
    const rerun = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, ...MALLOC_ENV },
    });
    process.exitCode = rerun.status ?? 1;
    return;
  }
  const args = parseArgs(process.argv.slice(2));
  if (args.serverCpus) pinToCpus(process.pid, args.serverCpus);
  // As `convoy serve` does (src/runtime/gc-tuning.ts); --no-gc-tuning measures without it.
  const gcTuned = !process.argv.includes('--no-gc-tuning') && tuneGarbageCollection().tuned;
  const root = repoRoot();
  const rev = gitShortRev(root);
  const results = new Results();
  const started = Date.now();
  console.error(
    `convoy bench: size ${args.size.name} (N=${args.size.listenerSets} ListenerSets, R=${args.size.routes} routes, ` +
      `S=${args.size.services} services, E=${args.size.endpoints}), rev ${rev}, node ${process.version}, ` +
      `${os.cpus().length} cpus, GC tuning ${gcTuned ? 'on' : 'off'}, malloc tuning ${hasMallocEnv() ? 'on' : 'off'}`,
  );

  const tw = nowMs();
  // A real Envoy binds the world's ports on 127.0.0.1: take free ones on this shared machine.
  let ports: { httpsPort?: number; httpPort?: number } = {};
  if (args.only.has('g')) {
    const { freePorts } = await import('../e2e/harness/ports');
    const [httpsPort, httpPort] = await freePorts(2);
    ports = { httpsPort, httpPort };
  }
  const world = new World({ size: args.size, ...ports });
  const store = new ObjectStore();
  const objectCount = world.load(store);
  console.error(`  world: ${objectCount} objects in ${fmtMs(nowMs() - tw)}`);
  const metrics = new ConvoyMetrics();
  const server: Server = {
    world,
    store,
    cache:
      args.buildThread === 'worker'
        ? new MirrorCache(silentLogger())
        : new XdsCache({ logger: silentLogger(), metrics }),
    metrics,
    statuses: [],
    memo: new BuildMemo(),
  };

  // a always runs: every other measurement needs the built snapshot.
  if (args.buildThread === 'worker') await measureColdBuildInThread(server, results);
  else measureColdBuild(server, results);
  if (args.only.has('b')) await measureIncremental(server, args, results);
  else if (!server.controller) {
    startController(server).start();
    await waitIdle(server);
  }

  const network = ['c', 'd', 'e', 'f', 'g'].filter((m) => args.only.has(m));
  if (network.length) {
    const { runNetworkMeasurements } = await import('./fanout');
    await runNetworkMeasurements(server, args, results);
  }

  await server.controller?.stop();
  const table = results.table();
  console.log(table);
  const out = {
    size: args.size,
    rev,
    date: new Date().toISOString(),
    node: process.version,
    buildThread: args.buildThread,
    gcTuning: gcTuned,
    mallocTuning: hasMallocEnv(),
    platform: `${os.platform()} ${os.arch()}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${round(os.totalmem() / 2 ** 30, 1)} GiB`,
    args: { ...args, size: args.size.name, only: [...args.only] },
    durationSeconds: round((Date.now() - started) / 1000),
    rows: results.rows,
    details: results.details,
  };
  if (args.write) {
    const dir = path.join(root, 'bench', 'results');
    fs.mkdirSync(dir, { recursive: true });
    // The Node major is part of the name: the suite is run on Node 24 (shipped) and Node 20.
    const thread = args.buildThread === 'worker' ? '-worker' : '';
    const file = path.join(
      dir,
      `${args.size.name}-${rev}-node${process.versions.node.split('.')[0]}${thread}${process.env.BENCH_RUN_SUFFIX ?? ''}.json`,
    );
    fs.writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
    console.error(`  results: ${path.relative(root, file)} (${round((Date.now() - started) / 1000)} s)`);
  }
  // Child processes and sockets are closed by now; exit explicitly in case a timer lingers.
  process.exit(0);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
