/**
 * Network measurements: the AdsServer in this process, simulated Envoys in forked child processes
 * (client.ts), and one real Envoy (envoy-real.ts).
 *
 *   c  each incremental change fanned out to M clients: time until every client ACKed it (p50, p99,
 *      max across clients, from the store change), bytes and resources each client received
 *   d  RSS of this process with M streams connected and synced
 *   e  event-loop delay (monitorEventLoopDelay) while a change is built and pushed
 *   f  reconnect storm: K fresh clients at once, time until all ACKed all types, aggregate MB/s
 *   g  real Envoy: certificate rotation → Envoy presents the new certificate (envoy-real.ts)
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { PerformanceObserver, constants as perfConstants, monitorEventLoopDelay } from 'node:perf_hooks';
import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { IntervalHistogram } from 'node:perf_hooks';
import { AdsServer } from '../src/xds/server';
import { TypeUrl } from '../src/envoy/resources';
import { silentLogger } from '../src/observability/logger';
import type { DoneResult, FromClient, SyncResult, ToClient } from './client';
import type { Expectation, SimTls, Variant } from './sim-envoy';
import { fmtBytes, fmtMs, median, mib, nowMs, percentile, pinToCpus, round, sleep } from './common';
import type { BenchArgs, ChangeSpec, Results, Server } from './run';
import { BIND_ADDRESS, CHANGE_KINDS, applyChange, nextChange, waitIdle } from './run';
import { fullRebuild } from './build-thread';
import { FLEET } from './world';
import { cacheDir } from './pki';

// ------------------------------------------------------------------------------------------------
// Child processes hosting simulated Envoys

type SyncedMsg = Extract<FromClient, { t: 'synced' }>;
type DoneMsg = Extract<FromClient, { t: 'done' }>;
type CollectedMsg = Extract<FromClient, { t: 'collected' }>;

interface Proc {
  child: ChildProcess;
  inbox: FromClient[];
  wake: (() => void)[];
}

export class ClientPool {
  private batchSeq = 0;
  private armSeq = 0;
  errors = 0;

  private constructor(private readonly procs: Proc[]) {}

  /**
   * `nice`: scheduling priority of the client processes (os.setPriority). On this 2-core machine
   * the simulated fleet competes with the control plane for the same cores, which a deployed
   * fleet (Envoys on other machines) does not; a positive value gives the server the CPU first.
   */
  static async start(count: number, nice = 0, cpus?: string): Promise<ClientPool> {
    const procs: Proc[] = [];
    for (let i = 0; i < count; i++) {
      const child = fork(path.join(__dirname, 'client.js'), [], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        execArgv: ['--max-old-space-size=4096'],
      });
      if (nice !== 0 && child.pid !== undefined) os.setPriority(child.pid, nice);
      if (cpus && child.pid !== undefined) pinToCpus(child.pid, cpus);
      const proc: Proc = { child, inbox: [], wake: [] };
      child.on('message', (m: FromClient) => {
        proc.inbox.push(m);
        for (const w of proc.wake.splice(0)) w();
      });
      child.on('exit', (code) => {
        proc.inbox.push({ t: 'error', message: `client process exited (${code})` });
        for (const w of proc.wake.splice(0)) w();
      });
      procs.push(proc);
    }
    const pool = new ClientPool(procs);
    await Promise.all(procs.map((p) => pool.take(p, (m) => m.t === 'ready', 30_000)));
    return pool;
  }

  get size(): number {
    return this.procs.length;
  }

  /** Process ids of the client processes (for their CPU time). */
  get pids(): number[] {
    return this.procs.flatMap((p) => (p.child.pid === undefined ? [] : [p.child.pid]));
  }

  /** Removes and returns the first message of `p` matching `pred`, waiting for it if needed. */
  private async take<T extends FromClient>(
    p: Proc,
    pred: (m: FromClient) => boolean,
    timeoutMs: number,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let i = 0; i < p.inbox.length; i++) {
        const m = p.inbox[i];
        if (m.t === 'error') {
          p.inbox.splice(i--, 1);
          this.errors++;
          if (this.errors <= 5) console.error(`  client error: ${m.message}`);
          continue;
        }
        if (pred(m)) {
          p.inbox.splice(i, 1);
          return m as T;
        }
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`client process ${p.child.pid}: timed out waiting for a message`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1000));
        p.wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private send(p: Proc, m: ToClient): void {
    p.child.send(m);
  }

  /**
   * Connects `count` clients spread over the processes, `wave` at a time, each wave waiting until
   * all its clients hold and ACKed everything. Returns every client's sync result.
   */
  async connect(
    address: string,
    variant: Variant | 'mixed',
    count: number,
    idPrefix: string,
    wave: number,
    timeoutMs: number,
    tls?: SimTls,
  ): Promise<SyncResult[]> {
    const out: SyncResult[] = [];
    let made = 0;
    while (made < count) {
      const n = Math.min(wave, count - made);
      const batch = ++this.batchSeq;
      const pending: Promise<SyncedMsg>[] = [];
      const per = this.procs.map(
        (_, i) => Math.floor(n / this.procs.length) + (i < n % this.procs.length ? 1 : 0),
      );
      let k = made;
      const sends: (() => void)[] = [];
      this.procs.forEach((p, i) => {
        if (per[i] === 0) return;
        const ids: string[] = [];
        for (let j = 0; j < per[i]; j++) ids.push(`${idPrefix}-${k++}`);
        const v: Variant = variant === 'mixed' ? (i % 2 === 0 ? 'sotw' : 'delta') : variant;
        sends.push(() => this.send(p, { t: 'connect', batch, address, fleet: FLEET, variant: v, ids, tls }));
        pending.push(this.take<SyncedMsg>(p, (m) => m.t === 'synced' && m.batch === batch, timeoutMs));
      });
      for (const s of sends) s();
      for (const r of await Promise.all(pending)) out.push(...r.results);
      made += n;
    }
    return out;
  }

  /** Arms every client with the expectations of the next change. Returns the arm id. */
  async arm(expect: Expectation[]): Promise<number> {
    const arm = ++this.armSeq;
    for (const p of this.procs) this.send(p, { t: 'arm', arm, expect });
    await Promise.all(this.procs.map((p) => this.take(p, (m) => m.t === 'armed' && m.arm === arm, 30_000)));
    return arm;
  }

  async waitDone(arm: number, timeoutMs: number): Promise<DoneResult[]> {
    const all = await Promise.all(
      this.procs.map((p) => this.take<DoneMsg>(p, (m) => m.t === 'done' && m.arm === arm, timeoutMs)),
    );
    return all.flatMap((m) => m.results);
  }

  async collect(arm: number): Promise<{ results: CollectedMsg['results']; rss: number[] }> {
    for (const p of this.procs) this.send(p, { t: 'collect', arm });
    const all = await Promise.all(
      this.procs.map((p) => this.take<CollectedMsg>(p, (m) => m.t === 'collected' && m.arm === arm, 60_000)),
    );
    return { results: all.flatMap((m) => m.results), rss: all.map((m) => m.rss) };
  }

  async closeClients(): Promise<void> {
    for (const p of this.procs) this.send(p, { t: 'close' });
    await Promise.all(this.procs.map((p) => this.take(p, (m) => m.t === 'closed', 60_000)));
  }

  async exit(): Promise<void> {
    await Promise.all(
      this.procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.child.exitCode !== null) return resolve();
            p.child.once('exit', () => resolve());
            try {
              this.send(p, { t: 'exit' });
            } catch {
              p.child.kill();
            }
            setTimeout(() => p.child.kill(), 5000).unref();
          }),
      ),
    );
  }
}

// ------------------------------------------------------------------------------------------------
// Measurements

interface Ctx {
  server: Server;
  args: BenchArgs;
  results: Results;
  address: string;
  ads: AdsServer;
  large: boolean;
  /** Event-loop delay maxima (ms) of every push, over both variants. */
  eldMax: { whole: number[]; push: number[] };
  /** Event-loop delay p99 (ms) of every change, build included, over both variants. */
  eldP99: number[];
  /** Full rebuilds with the clients connected (bench/build-thread.ts fullRebuild), over both variants. */
  rebuilds: { ms: number; p99: number; max: number; idle: { p99: number; max: number } }[];
}

const TYPE_LABEL: Record<string, string> = {
  [TypeUrl.Listener]: 'LDS',
  [TypeUrl.Route]: 'RDS',
  [TypeUrl.Cluster]: 'CDS',
  [TypeUrl.Endpoint]: 'EDS',
  [TypeUrl.Secret]: 'SDS',
};

function histMaxMs(h: IntervalHistogram): number {
  return h.count > 0 || h.max > 0 ? h.max / 1e6 : 0;
}

async function fanoutOne(
  ctx: Ctx,
  pool: ClientPool,
  kind: ChangeSpec['kind'],
  variant: string,
): Promise<Record<string, unknown>> {
  const { server } = ctx;
  const change = nextChange(server.world, kind, server);
  const arm = await pool.arm(change.expect);
  const whole = monitorEventLoopDelay({ resolution: 10 });
  const push = monitorEventLoopDelay({ resolution: 10 });
  whole.enable();
  // The histogram only records from its second tick on: let it tick before the change.
  await sleep(50);
  const gc = watchGc();
  const profiler = ctx.args.profileChanges ? await startProfile() : undefined;
  const doneP = pool.waitDone(arm, 120_000);
  const snapshots: string[] = [];
  const off = server.cache.onChange((c) => {
    if (c.fleet === FLEET)
      snapshots.push([...c.changed].map(([t, n]) => `${TYPE_LABEL[t]}:${n.length}`).join(' '));
  });
  const applied = await applyChange(server, change);
  push.enable();
  const done = await doneP;
  whole.disable();
  push.disable();
  const gcPauses = gc.stop();
  if (profiler) await profiler.stop(path.join(ctx.args.profileChanges!, `${variant}-${kind}.cpuprofile`));
  await waitIdle(server);
  await sleep(ctx.large ? 500 : 200); // let any trailing responses arrive before counting bytes
  const collected = await pool.collect(arm);
  off();

  const lat = done.map((d) => d.doneAt - applied.t0);
  const bytes = collected.results.map((c) => c.bytes);
  const resources: Record<string, number> = {};
  for (const c of collected.results) {
    for (const [t, n] of Object.entries(c.resources))
      resources[TYPE_LABEL[t] ?? t] = Math.max(resources[TYPE_LABEL[t] ?? t] ?? 0, n);
  }
  const snap = server.cache.snapshot(FLEET)!;
  const sizes: Record<string, number> = {};
  for (const e of change.expect) {
    const entry = snap.types[e.typeUrl as TypeUrl].entries.get(e.name);
    sizes[`${TYPE_LABEL[e.typeUrl]} ${e.name}`] = entry?.bytes.length ?? 0;
  }
  const listener = snap.types[TypeUrl.Listener].entries.get(server.world.listenerName());
  const eldWhole = histMaxMs(whole);
  const eldPush = histMaxMs(push);
  ctx.eldMax.whole.push(eldWhole);
  ctx.eldMax.push.push(eldPush);
  const eldP99 = whole.count > 0 ? whole.percentile(99) / 1e6 : 0;
  ctx.eldP99.push(eldP99);
  return {
    variant,
    kind,
    label: change.label,
    clients: done.length,
    snapshotMs: round(applied.t1 - applied.t0, 2),
    snapshots,
    ackMs: {
      p50: round(percentile(lat, 50), 1),
      p99: round(percentile(lat, 99), 1),
      max: round(Math.max(...lat), 1),
    },
    bytesPerClient: { median: median(bytes), max: Math.max(...bytes), min: Math.min(...bytes) },
    maxResourcesPerClient: resources,
    resourceBytes: sizes,
    listenerBytes: listener?.bytes.length,
    filterChains: server.world.size.listenerSets + countAdded(server),
    eventLoopDelayMaxMs: { wholeChange: round(eldWhole, 1), pushOnly: round(eldPush, 1) },
    eventLoopDelayP99Ms: round(eldP99, 1),
    gcPauses,
    clientRssBytes: collected.rss,
  };
}

const GC_KINDS: Record<number, string> = {
  [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** Garbage-collection pauses while a change is pushed: count, total and longest, per kind. */
function watchGc(): { stop(): Record<string, { count: number; totalMs: number; maxMs: number }> } {
  const byKind: Record<string, { count: number; totalMs: number; maxMs: number }> = {};
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const detail = (e as unknown as { detail?: { kind?: number } }).detail;
      const kind = GC_KINDS[detail?.kind ?? -1] ?? 'other';
      const k = (byKind[kind] ??= { count: 0, totalMs: 0, maxMs: 0 });
      k.count++;
      k.totalMs = round(k.totalMs + e.duration, 1);
      k.maxMs = round(Math.max(k.maxMs, e.duration), 1);
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      obs.disconnect();
      return byKind;
    },
  };
}

/** An in-process CPU profile (node:inspector), for --profile-changes. */
export async function startProfile(): Promise<{ stop(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) =>
      session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))),
    );
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
  return {
    async stop(file: string) {
      const { profile } = (await post('Profiler.stop')) as { profile: object };
      session.disconnect();
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      console.error(`  profile: ${file}`);
    },
  };
}

function countAdded(server: Server): number {
  const snap = server.cache.snapshot(FLEET)!;
  return snap.types[TypeUrl.Secret].entries.size - server.world.size.listenerSets;
}

function reportFanout(ctx: Ctx, r: Record<string, unknown>): void {
  const { results, large } = ctx;
  const ack = r.ackMs as { p50: number; p99: number; max: number };
  const bytes = r.bytesPerClient as { median: number; max: number };
  const res = r.maxResourcesPerClient as Record<string, number>;
  const sizes = r.resourceBytes as Record<string, number>;
  const kind = r.kind as ChangeSpec['kind'];
  // SotW LDS/CDS responses carry the full state (every listener/cluster), not only the changed one.
  const resText = Object.entries(res)
    .map(([t, n]) =>
      r.variant === 'sotw' && (t === 'LDS' || t === 'CDS') ? `${t} (full state, ${n})` : `${n} ${t}`,
    )
    .join(' + ');
  let extra: string;
  let pass = ack.p99 <= 1000;
  let target = '≤ 1 s p99';
  const onlyChanged = Object.values(res).reduce((a, b) => a + b, 0) === 1;
  if (kind === 'route') {
    const size = Object.values(sizes)[0] ?? 0;
    const ratio = bytes.max / Math.max(1, size);
    extra = `; ${fmtBytes(bytes.max)}/client = ${round(ratio, 2)}× the RouteConfiguration (${fmtBytes(size)})`;
    pass = pass && ratio <= 2 && onlyChanged;
    target += ', ≤ 2× route bytes, only it sent';
  } else if (kind === 'cert' || kind === 'endpoints') {
    extra = `; ${fmtBytes(bytes.max)}/client`;
    pass = pass && onlyChanged;
    target += kind === 'cert' ? ', only its Secret sent' : ', only its CLA sent';
  } else {
    const chains = r.filterChains as number;
    const lb = (r.listenerBytes as number) ?? 0;
    extra = `; ${fmtBytes(bytes.max)}/client (Listener ${fmtBytes(lb)}, ${round(lb / Math.max(1, chains), 0)} B per filter chain × ${chains})`;
    target = 'report';
    pass = true;
  }
  const eld = r.eventLoopDelayMaxMs as { wholeChange: number; pushOnly: number };
  results.add({
    id: 'c',
    measurement: `fan-out ${r.variant} ×${r.clients}: ${r.label}`,
    result: `p50 ${fmtMs(ack.p50)}, p99 ${fmtMs(ack.p99)}, max ${fmtMs(ack.max)} (snapshot ${fmtMs(r.snapshotMs as number)}); sent ${resText}${extra}; event-loop delay ≤ ${fmtMs(eld.pushOnly)} pushing, ${fmtMs(eld.wholeChange)} with the build`,
    target: large ? target : '',
    pass: large && target !== 'report' ? pass : undefined,
    value: ack.p99,
    unit: 'ms',
  });
}

async function fleetMeasurements(
  ctx: Ctx,
  pool: ClientPool,
  variant: Variant,
  details: Record<string, unknown>,
): Promise<void> {
  const { args, results, server, large } = ctx;
  const m = args.clients;
  const t0 = nowMs();
  const synced = await pool.connect(ctx.address, variant, m, `${variant}-envoy`, large ? 100 : 50, 600_000);
  const connectMs = nowMs() - t0;
  const perClient = synced.map((s) => s.bytes);
  console.error(
    `  ${variant}: ${synced.length} clients connected and synced in ${fmtMs(connectMs)} ` +
      `(${fmtBytes(median(perClient))} per client)`,
  );
  await waitIdle(server);
  await sleep(1000);
  const mem = process.memoryUsage();
  const { rss, heapUsed: heap } = mem;
  const streams = ctx.ads.streamCount;
  if (args.heapSnapshot) {
    const file = writeHeapSnapshot(
      path.join(cacheDir(), `heap-${server.world.size.name}-${variant}-${m}.heapsnapshot`),
    );
    console.error(`  heap snapshot: ${file}`);
  }
  details[`${variant}Connect`] = {
    clients: synced.length,
    ms: round(connectMs),
    bytesPerClient: median(perClient),
    rss,
    heap,
    // Where the rest of the RSS is: V8's reserved heap, Buffers and other native allocations.
    heapTotal: mem.heapTotal,
    external: mem.external,
    arrayBuffers: mem.arrayBuffers,
    streams,
  };
  if (args.only.has('d')) {
    results.add({
      id: 'd',
      measurement: `control-plane RSS, ${streams} ${variant} streams`,
      result: `${fmtBytes(rss)} (heap ${fmtBytes(heap)} of ${fmtBytes(mem.heapTotal)}, external ${fmtBytes(mem.external)})`,
      target: large ? '≤ 1 GiB' : '',
      pass: large ? rss <= 1024 ** 3 : undefined,
      value: rss,
      unit: 'bytes',
    });
  }
  if (!args.only.has('c') && !args.only.has('e')) return;
  const runs: Record<string, unknown>[] = [];
  for (const kind of ctx.args.changes ?? CHANGE_KINDS) {
    const r = await fanoutOne(ctx, pool, kind, variant);
    runs.push(r);
    if (args.only.has('c')) reportFanout(ctx, r);
  }
  details[`${variant}Changes`] = runs;
  if (args.only.has('e')) {
    // A full rebuild of the whole world while every stream is open (no resource changes).
    const rebuild = await fullRebuild(server);
    ctx.rebuilds.push(rebuild);
    details[`${variant}FullRebuild`] = rebuild;
    console.error(
      `  ${variant}: full rebuild ${fmtMs(rebuild.ms)}, event-loop delay p99 ${fmtMs(rebuild.p99)} (idle before: p99 ${fmtMs(rebuild.idle.p99)})`,
    );
  }
}

async function storm(ctx: Ctx, pool: ClientPool, details: Record<string, unknown>): Promise<void> {
  const { args, results, large } = ctx;
  const k = args.stormClients;
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const cpu0 = process.cpuUsage();
  const t0 = nowMs();
  const synced = await pool.connect(ctx.address, 'mixed', k, 'storm-envoy', k, 600_000);
  const cpu = process.cpuUsage(cpu0);
  const t1 = Math.max(...synced.map((s) => s.syncedAt));
  h.disable();
  const total = synced.reduce((a, s) => a + s.bytes, 0);
  const seconds = (t1 - t0) / 1000;
  const rate = mib(total) / seconds;
  const mbps = total / 1e6 / seconds;
  details.storm = {
    clients: synced.length,
    ms: round(t1 - t0),
    totalBytes: total,
    mibPerSecond: round(rate),
    mbPerSecond: round(mbps),
    bytesPerClient: median(synced.map((s) => s.bytes)),
    syncMs: {
      p50: round(
        percentile(
          synced.map((s) => s.syncedAt - t0),
          50,
        ),
      ),
      p99: round(
        percentile(
          synced.map((s) => s.syncedAt - t0),
          99,
        ),
      ),
    },
    eventLoopDelayMaxMs: round(histMaxMs(h), 1),
    serverCpuSeconds: round((cpu.user + cpu.system) / 1e6, 2),
    rssAfter: process.memoryUsage().rss,
  };
  results.add({
    id: 'f',
    measurement: `reconnect storm: ${synced.length} clients at once (½ SotW, ½ delta)`,
    result:
      `${fmtMs(t1 - t0)} to all ACKed, ${fmtBytes(total)} total, ${round(mbps)} MB/s ` +
      `(${fmtBytes(total / synced.length)}/client; server CPU ${round((cpu.user + cpu.system) / 1e6, 1)} s)`,
    target: large ? '≥ 200 MB/s' : '',
    pass: large ? mbps >= 200 : undefined,
    value: round(mbps),
    unit: 'MB/s',
  });
}

export async function runNetworkMeasurements(
  server: Server,
  args: BenchArgs,
  results: Results,
): Promise<void> {
  const large = server.world.size.name === 'large';
  const ads = new AdsServer({ cache: server.cache, logger: silentLogger(), metrics: server.metrics });
  const port = await ads.listen(`${BIND_ADDRESS}:0`);
  const ctx: Ctx = {
    server,
    args,
    results,
    address: `${BIND_ADDRESS}:${port}`,
    ads,
    large,
    eldMax: { whole: [], push: [] },
    eldP99: [],
    rebuilds: [],
  };
  const details: Record<string, unknown> = {};
  results.details.network = details;
  try {
    if (['c', 'd', 'e'].some((m) => args.only.has(m))) {
      for (const variant of args.variants) {
        const pool = await ClientPool.start(args.procs, args.clientNice, args.clientCpus);
        try {
          await fleetMeasurements(ctx, pool, variant, details);
          await pool.closeClients();
        } finally {
          await pool.exit();
        }
        await sleep(500);
      }
      if (args.only.has('e') && ctx.eldMax.whole.length) {
        const whole = Math.max(...ctx.eldMax.whole);
        const push = Math.max(...ctx.eldMax.push);
        details.eventLoopDelay = { wholeChangeMaxMs: ctx.eldMax.whole, pushOnlyMaxMs: ctx.eldMax.push };
        results.add({
          id: 'e',
          measurement: 'event-loop delay max during pushes',
          result: `${fmtMs(push)} while pushing; ${fmtMs(whole)} including the build`,
          target: large ? '≤ 100 ms' : '',
          pass: large ? whole <= 100 : undefined,
          value: round(whole, 1),
          unit: 'ms',
        });
        const p99 = Math.max(...ctx.eldP99, ...ctx.rebuilds.map((r) => r.p99));
        const rebuildMax = Math.max(...ctx.rebuilds.map((r) => r.max));
        details.eventLoopDelayP99 = {
          changesMs: ctx.eldP99.map((v) => round(v, 1)),
          fullRebuilds: ctx.rebuilds,
        };
        results.add({
          id: 'e',
          measurement: `event-loop delay p99, worst change or full rebuild (build thread: ${args.buildThread})`,
          result: `${fmtMs(p99)} (full rebuild ${ctx.rebuilds.map((r) => fmtMs(r.ms)).join(', ')}, its max delay ${fmtMs(rebuildMax)}; idle before: p99 ${ctx.rebuilds.map((r) => fmtMs(r.idle.p99)).join(', ')})`,
          target: large ? '≤ 20 ms' : '',
          pass: large ? p99 <= 20 : undefined,
          value: round(p99, 1),
          unit: 'ms',
        });
      }
    }
    if (args.only.has('f')) {
      const pool = await ClientPool.start(args.procs, args.clientNice, args.clientCpus);
      try {
        await storm(ctx, pool, details);
        await pool.closeClients();
      } finally {
        await pool.exit();
      }
    }
    if (args.only.has('g')) {
      const { measureRealEnvoy } = await import('./envoy-real');
      await measureRealEnvoy(ctx.server, ctx.address, args, results);
    }
  } finally {
    await ads.stop(2000);
  }
}
