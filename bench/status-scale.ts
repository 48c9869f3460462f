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
 *   [--out FILE.json]. Needs CONVOY_K8S_BIN_DIR and CONVOY_CRD_DIR like the e2e tests.
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { LocalCluster } from '../e2e/cluster/cluster';
import { ConvoyProcess } from '../e2e/harness';
import type { KubeClient } from '../src/kubernetes/client';
import { collectionPath, resourceForKind } from '../src/kubernetes/resources';
import { createWorld } from './e2e/kube-world';
import type { KubeObject } from '../src/store/objects';
import { calibrationMs, gitShortRev, median, round } from './common';
import { CONTROLLER_NAME, SIZES, World } from './world';

/** The kinds whose status Convoy writes, with the collection they are listed from. */
const STATUS_KINDS = ['GatewayClass', 'Gateway', 'ListenerSet', 'HTTPRoute'] as const;
const POLL_MS = 250;

interface RunResult {
  objects: number;
  statuses: number;
  createMs: number;
  readyMs: number;
  completeMs: number;
  writes: Record<string, number>;
  /** CPU seconds each process spent from Convoy's start to complete status. */
  cpuSeconds: Record<string, number>;
  /** The API server's own view of the status writes in that window (its /metrics, differenced). */
  apiserver: ApiServerFigures;
}

/** What the API server's /metrics say about the status PUTs and priority and fairness. */
interface ApiServerFigures {
  /** PUT/PATCH …/status requests served. */
  statusRequests: number;
  /** Their mean latency inside the API server, ms. */
  statusMeanMs: number;
  /** Requests rejected (429) by priority and fairness. */
  flowcontrolRejected: number;
  /** Mean time a request waited in a priority-and-fairness queue, ms. */
  flowcontrolMeanWaitMs: number;
}

/** Sums of the counters ApiServerFigures is computed from. */
interface ApiServerCounters {
  statusCount: number;
  statusSum: number;
  rejected: number;
  waitCount: number;
  waitSum: number;
}

/**
 * Returns utime+stime in seconds of this process's children that run one of the named commands
 * (kube-apiserver, etcd, node for Convoy), read from /proc (Linux).
 */
function childCpuSeconds(): Record<string, number> {
  const ticks = 100; // USER_HZ on Linux
  const out: Record<string, number> = {};
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) !== process.pid) continue;
    const name = comm === 'node' || comm === 'MainThread' ? 'convoy' : comm;
    out[name] = (out[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) / ticks;
  }
  return out;
}

/** Reads the API server's /metrics page as the admin. */
function apiserverMetrics(cluster: LocalCluster): Promise<string> {
  const ca = fs.readFileSync(path.join(cluster.dir, 'certs', 'apiserver.crt'));
  return new Promise((resolve, reject) => {
    https
      .get(
        `${cluster.server}/metrics`,
        { ca, headers: { authorization: `Bearer ${cluster.adminToken}` } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve(body));
        },
      )
      .on('error', reject);
  });
}

/** Sums the status-write and priority-and-fairness counters of a /metrics page. */
function apiserverCounters(page: string): ApiServerCounters {
  const c: ApiServerCounters = { statusCount: 0, statusSum: 0, rejected: 0, waitCount: 0, waitSum: 0 };
  for (const line of page.split('\n')) {
    if (line.startsWith('#')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('apiserver_request_duration_seconds_') && line.includes('subresource="status"')) {
      if (!/verb="(PUT|PATCH|APPLY)"/.test(line)) continue;
      if (line.startsWith('apiserver_request_duration_seconds_count')) c.statusCount += value;
      else if (line.startsWith('apiserver_request_duration_seconds_sum')) c.statusSum += value;
    } else if (line.startsWith('apiserver_flowcontrol_rejected_requests_total')) c.rejected += value;
    else if (line.startsWith('apiserver_flowcontrol_request_wait_duration_seconds_count'))
      c.waitCount += value;
    else if (line.startsWith('apiserver_flowcontrol_request_wait_duration_seconds_sum')) c.waitSum += value;
  }
  return c;
}

/** Returns the figures of the window between two counter readings. */
function apiserverFigures(a: ApiServerCounters, b: ApiServerCounters): ApiServerFigures {
  const requests = b.statusCount - a.statusCount;
  const waits = b.waitCount - a.waitCount;
  return {
    statusRequests: requests,
    statusMeanMs: requests > 0 ? round(((b.statusSum - a.statusSum) / requests) * 1000, 1) : 0,
    flowcontrolRejected: b.rejected - a.rejected,
    flowcontrolMeanWaitMs: waits > 0 ? round(((b.waitSum - a.waitSum) / waits) * 1000, 2) : 0,
  };
}

/** Returns `b - a` per process, in seconds with one decimal. */
function cpuDelta(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, s] of Object.entries(b)) out[name] = round(s - (a[name] ?? 0), 1);
  return out;
}

/** Returns whether a listed object carries Convoy's status for its current generation. */
function hasCurrentStatus(o: KubeObject): boolean {
  const generation = o.metadata.generation;
  const status = (o as { status?: Record<string, unknown> }).status ?? {};
  const current = (conditions: unknown) =>
    Array.isArray(conditions) &&
    (conditions as { observedGeneration?: number }[]).some((c) => c.observedGeneration === generation);
  if (o.kind === 'HTTPRoute') {
    const parents = (status.parents ?? []) as { controllerName?: string; conditions?: unknown }[];
    return parents.some((p) => p.controllerName === CONTROLLER_NAME && current(p.conditions));
  }
  return current(status.conditions);
}

/** Counts the objects of the status kinds that carry current status (paginated LISTs). */
async function countCurrent(client: KubeClient): Promise<number> {
  let n = 0;
  for (const kind of STATUS_KINDS) {
    const r = resourceForKind(kind)!;
    let cont: string | undefined;
    do {
      const page = await client.request<{
        items: Omit<KubeObject, 'kind'>[];
        metadata: { continue?: string };
      }>('GET', collectionPath(r), { query: { limit: 2000, continue: cont } });
      for (const item of page.items) if (hasCurrentStatus({ ...item, kind } as KubeObject)) n++;
      cont = page.metadata.continue || undefined;
    } while (cont);
  }
  return n;
}

/** Parses convoy_status_writes_total by result from a Prometheus text page. */
function statusWrites(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(/^convoy_status_writes_total\{result="([a-z]+)"\} (\d+)/gm))
    out[m[1]!] = Number(m[2]);
  return out;
}

/** One run on a fresh cluster: create the world, start Convoy, wait for complete status. */
async function runOnce(world: World, statusQps: number | undefined): Promise<RunResult> {
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
    convoy = await ConvoyProcess.start({
      name: 'convoy-status-scale',
      args: [
        '--kubeconfig',
        cluster.convoyKubeconfig,
        '--leader-election-namespace',
        'convoy-system',
        '--xds-certs-dir',
        path.join(cluster.dir, 'xds-pki'),
        ...(statusQps ? ['--status-qps', String(statusQps)] : []),
      ],
      workDir: path.join(cluster.dir, 'convoy'),
      readyTimeoutMs: 600_000,
    });
    const readyMs = performance.now() - started;
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
    return {
      objects: objects.length,
      statuses: expected,
      createMs,
      readyMs,
      completeMs,
      writes,
      cpuSeconds,
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
    const r = await runOnce(world, statusQps);
    results.push(r);
    process.stdout.write(
      `run ${i + 1}/${runs}: ${r.statuses} statuses of ${r.objects} objects complete ${round(r.completeMs / 1000, 1)} s after start (ready ${round(r.readyMs / 1000, 1)} s; world created in ${round(r.createMs / 1000, 1)} s); writes ${JSON.stringify(r.writes)}; CPU s ${JSON.stringify(r.cpuSeconds)}; API server ${JSON.stringify(r.apiserver)}\n`,
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
