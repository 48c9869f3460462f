/**
 * Data-plane cost of a listener layout through one real Envoy (one worker thread), and what a
 * hostname change does to it (docs/xds.md §16):
 * - new TLS connections per second (handshake, one request, close) from a few concurrent clients,
 *   spread over the world's hostnames;
 * - request latency p50/p99 on kept-alive connections (one request at a time);
 * - a hostname added, then removed, while a connection to another hostname stays open: the time
 *   until Envoy serves (or stops serving) it, Envoy's listener-manager statistics over the change,
 *   and whether the open connection still answers.
 * Traffic goes to Envoy on 127.0.0.1 only; the routes answer directly (no backend).
 */
import * as fs from 'node:fs';
import { hostnameOf } from '../world';
import { median, nowMs, percentile, round } from '../common';
import type { EnvoyProcess } from '../../e2e/harness/envoy';
import { freePort } from '../../e2e/harness/ports';
import type { ListenerLayout } from '../../src/envoy/translate/sni-dispatch';
import { ControlPlane, OpenConnection, request, startEnvoy, waitGone, waitServed } from './plane';
import { LayoutWorld, type LayoutPki } from './world';

export interface DataPlaneResult {
  layout: ListenerLayout;
  hostnames: number;
  /** Envoy start → every probed hostname served. */
  readyMs: number;
  handshakesPerSecond: number[];
  /** Envoy's CPU time (user + system, all threads) per new TLS connection with one request. */
  envoyCpuUsPerConnection: number[];
  /** Envoy's CPU time per request on kept-alive connections. */
  envoyCpuUsPerRequest: number[];
  latencyP50Ms: number[];
  latencyP99Ms: number[];
  change?: ChangeResult;
}

export type ChangeResult = ChangeMeasured | { error: string };

export interface ChangeMeasured {
  addServedMs: number;
  removeGoneMs: number;
  /** listener_manager counters and gauges that moved over add + remove (after − before). */
  listenerManager: Record<string, number>;
  /** Highest total_filter_chains_draining seen while the change was applied. */
  maxFilterChainsDraining: number;
  /** The connection opened to another hostname before the change still answered after it. */
  otherConnectionSurvived: boolean;
}

/** CPU time a process used so far, in ms (Linux /proc: utime + stime, clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function handshakeRate(
  port: number,
  hosts: string[],
  seconds: number,
  concurrency: number,
): Promise<{ rate: number; count: number }> {
  let done = 0;
  let failed = 0;
  const end = nowMs() + seconds * 1000;
  let next = 0;
  const worker = async () => {
    while (nowMs() < end) {
      const host = hosts[next++ % hosts.length];
      const r = await request(port, host, host);
      if ('status' in r && r.status === 200) done++;
      else failed++;
    }
  };
  const t0 = nowMs();
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (failed > done / 100) throw new Error(`${failed} of ${done + failed} requests failed`);
  return { rate: done / ((nowMs() - t0) / 1000), count: done };
}

async function latency(
  port: number,
  hosts: string[],
  requests: number,
): Promise<{ p50: number; p99: number }> {
  const conns = await Promise.all(hosts.slice(0, 8).map((h) => OpenConnection.open(port, h)));
  const times: number[] = [];
  try {
    for (let k = 0; k < requests; k++) {
      const c = conns[k % conns.length];
      const t0 = nowMs();
      const status = await c.get();
      times.push(nowMs() - t0);
      if (!status.includes(' 200 ')) throw new Error(`unexpected ${status}`);
    }
  } finally {
    for (const c of conns) c.close();
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

function numbers(stats: Map<string, number | string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of stats) if (typeof v === 'number') out.set(k, v);
  return out;
}

async function change(
  envoy: EnvoyProcess,
  cp: ControlPlane,
  world: LayoutWorld,
  port: number,
  n: number,
): Promise<ChangeMeasured> {
  const base = Array.from({ length: n }, (_, i) => i);
  const held = await OpenConnection.open(port, hostnameOf(1));
  await held.get();
  const before = numbers(await envoy.stats('listener_manager'));
  let maxDraining = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      // Envoy's main thread may be too busy applying a large listener to answer in time: skip that sample.
      const s = await envoy.stats('total_filter_chains_draining').catch(() => undefined);
      if (s)
        maxDraining = Math.max(
          maxDraining,
          Number(s.get('listener_manager.total_filter_chains_draining') ?? 0),
        );
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const t0 = nowMs();
  cp.publish(world.model([...base, n], { wildcard: false, catchAll: false }, port));
  await waitServed(port, hostnameOf(n), 200, 300_000);
  const addServedMs = nowMs() - t0;
  const t1 = nowMs();
  cp.publish(world.model(base, { wildcard: false, catchAll: false }, port));
  await waitGone(port, hostnameOf(n), 120_000);
  const removeGoneMs = nowMs() - t1;
  // Envoy's drain time is 1 s here: a drained connection would be closed by now.
  await new Promise((r) => setTimeout(r, 2500));
  sampling = false;
  await sampler;
  let survived = true;
  try {
    await held.get();
  } catch {
    survived = false;
  }
  held.close();
  const after = numbers(await envoy.stats('listener_manager'));
  const moved: Record<string, number> = {};
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d !== 0 && !k.includes('lds.') && !k.includes('update_'))
      moved[k.replace('listener_manager.', '')] = d;
  }
  return {
    addServedMs: round(addServedMs),
    removeGoneMs: round(removeGoneMs),
    listenerManager: moved,
    maxFilterChainsDraining: maxDraining,
    otherConnectionSurvived: survived,
  };
}

interface Running {
  layout: ListenerLayout;
  cp: ControlPlane;
  envoy: EnvoyProcess;
  world: LayoutWorld;
  port: number;
  result: DataPlaneResult;
}

async function startLayout(
  layout: ListenerLayout,
  n: number,
  certs: LayoutPki,
  hosts: string[],
): Promise<Running> {
  const world = new LayoutWorld(certs);
  const port = await freePort();
  const cp = new ControlPlane(layout);
  cp.publish(
    world.model(
      Array.from({ length: n }, (_, i) => i),
      { wildcard: false, catchAll: false },
      port,
    ),
  );
  await cp.listen();
  const t0 = nowMs();
  const envoy = await startEnvoy(cp, false, `layout-${layout}-${n}`);
  try {
    // Every sampled hostname answers: its route configuration and certificate have arrived.
    for (const h of hosts) await waitServed(port, h, 200, 600_000);
  } catch (e) {
    console.error(envoy.logContext(20));
    await envoy.stop(1000);
    throw e;
  }
  const result: DataPlaneResult = {
    layout,
    hostnames: n,
    readyMs: round(nowMs() - t0),
    handshakesPerSecond: [],
    envoyCpuUsPerConnection: [],
    envoyCpuUsPerRequest: [],
    latencyP50Ms: [],
    latencyP99Ms: [],
  };
  return { layout, cp, envoy, world, port, result };
}

/**
 * Runs the data-plane measurements of every layout at n hostnames. Each layout gets its own Envoy;
 * both run at once and the rounds alternate between them (ABBA…), so a busy machine slows both
 * alike. Then each layout's hostname change, one after the other.
 */
export async function measureDataPlane(
  layouts: ListenerLayout[],
  n: number,
  certs: LayoutPki,
  opts: { runs: number; seconds: number; concurrency: number; latencyRequests: number; withChange: boolean },
): Promise<DataPlaneResult[]> {
  const sample = Math.min(n, 200);
  const hosts = Array.from({ length: sample }, (_, k) => hostnameOf(Math.floor((k * n) / sample)));
  const running: Running[] = [];
  try {
    for (const layout of layouts) running.push(await startLayout(layout, n, certs, hosts));
    for (const r of running) await handshakeRate(r.port, hosts, 1, opts.concurrency); // warm-up
    for (let round_ = 0; round_ < opts.runs; round_++) {
      const order = round_ % 2 === 0 ? running : [...running].reverse();
      for (const r of order) {
        const pid = r.envoy.pid!;
        const c0 = cpuMs(pid);
        const h = await handshakeRate(r.port, hosts, opts.seconds, opts.concurrency);
        r.result.handshakesPerSecond.push(round(h.rate));
        r.result.envoyCpuUsPerConnection.push(round(((cpuMs(pid) - c0) * 1000) / h.count));
        const c1 = cpuMs(pid);
        const l = await latency(r.port, hosts, opts.latencyRequests);
        r.result.envoyCpuUsPerRequest.push(round(((cpuMs(pid) - c1) * 1000) / opts.latencyRequests));
        r.result.latencyP50Ms.push(round(l.p50, 3));
        r.result.latencyP99Ms.push(round(l.p99, 3));
      }
    }
    if (opts.withChange) {
      for (const r of running) {
        // A change Envoy does not apply in time is a result too, not the end of the run.
        r.result.change = await change(r.envoy, r.cp, r.world, r.port, n).catch((e: Error): ChangeResult => ({
          error: e.message,
        }));
      }
    }
    return running.map((r) => r.result);
  } finally {
    for (const r of running) {
      await r.envoy.stop(1000);
      await r.cp.stop();
    }
  }
}

/** Median of a list of runs, for the summary lines. */
export function med(values: number[]): number {
  return round(median(values), 3);
}
