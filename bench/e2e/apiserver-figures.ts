/**
 * What the local cluster's processes spend, for the status benches (bench/status-scale.ts,
 * bench/status-cost.ts): CPU seconds of this process's children from /proc, the API server's own
 * /metrics figures for status writes and priority and fairness, and its Go CPU profile.
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import type { LocalCluster } from '../../e2e/cluster/cluster';
import { round } from '../common';

/** What the API server's /metrics say about the status PUTs and priority and fairness. */
export interface ApiServerFigures {
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
export interface ApiServerCounters {
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
export function childCpuSeconds(): Record<string, number> {
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
export function apiserverMetrics(cluster: LocalCluster): Promise<string> {
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
export function apiserverCounters(page: string): ApiServerCounters {
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
export function apiserverFigures(a: ApiServerCounters, b: ApiServerCounters): ApiServerFigures {
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
export function cpuDelta(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, s] of Object.entries(b)) out[name] = round(s - (a[name] ?? 0), 1);
  return out;
}

/**
 * Fetches a CPU profile of the API server over `seconds` (its /debug/pprof, on by default) and
 * writes it to `file`, for `go tool pprof -top <kube-apiserver binary> <file>`.
 */
export function apiserverCpuProfile(cluster: LocalCluster, seconds: number, file: string): Promise<void> {
  const ca = fs.readFileSync(path.join(cluster.dir, 'certs', 'apiserver.crt'));
  return new Promise((resolve, reject) => {
    https
      .get(
        `${cluster.server}/debug/pprof/profile?seconds=${seconds}`,
        { ca, headers: { authorization: `Bearer ${cluster.adminToken}` } },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            reject(new Error(`pprof: HTTP ${res.statusCode}`));
            return;
          }
          const out = fs.createWriteStream(file);
          res.pipe(out);
          out.on('finish', () => resolve());
          out.on('error', reject);
        },
      )
      .on('error', reject);
  });
}
