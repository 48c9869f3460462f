/**
 * What the peer bench observes of one real Envoy, from outside as a client would (TLS handshakes
 * and HTTPS requests to its loopback listener) and through its admin interface (xDS bytes
 * received, resource counts). Requests only ever reach Envoy itself: the probes use paths that
 * a redirect answers or that match no route, so Envoy never dials an endpoint of the world.
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { EnvoyProcess } from '../../e2e/harness/envoy';
import { nowMs, sleep } from '../common';
import { servedSerial } from '../envoy-real';

/** Upper-case hex serial without leading zeros, as Node reports it. */
export function normSerial(s: string): string {
  return s.toUpperCase().replace(/^0+/, '');
}

/** Waits until `host` (SNI) is served with the certificate of `serial`; returns when it was seen. */
export async function waitCertificate(
  port: number,
  host: string,
  serial: string,
  timeoutMs: number,
  stepMs = 20,
): Promise<number> {
  const want = normSerial(serial);
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    const got = await servedSerial(port, host, 2000);
    if (got === want) return nowMs();
    if (nowMs() > deadline)
      throw new Error(`Envoy did not serve serial ${want} for ${host} within ${timeoutMs} ms (got ${got})`);
    await sleep(stepMs);
  }
}

/** Status code of GET https://<host><path> through Envoy's loopback listener, or 0 on failure. */
export function httpsStatus(port: number, host: string, path: string, timeoutMs = 2000): Promise<number> {
  return new Promise((resolve) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'GET',
        servername: host,
        headers: { host },
        rejectUnauthorized: false,
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Waits until GET https://<host><path> answers `status`; returns when it did. */
export async function waitStatus(
  port: number,
  host: string,
  path: string,
  status: number,
  timeoutMs: number,
  stepMs = 20,
): Promise<number> {
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    const got = await httpsStatus(port, host, path);
    if (got === status) return nowMs();
    if (nowMs() > deadline)
      throw new Error(`https://${host}${path} did not answer ${status} within ${timeoutMs} ms (got ${got})`);
    await sleep(stepMs);
  }
}

/** Reads one counter or gauge from Envoy's /stats (0 when absent). */
export async function envoyStat(envoy: EnvoyProcess, name: string): Promise<number> {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const r = await envoy.admin(`/stats?filter=${encodeURIComponent(`^${escaped}$`)}`);
  const m = new RegExp(`^${escaped}: (\\d+)`, 'm').exec(r.body);
  return m ? Number(m[1]) : 0;
}

/** Bytes Envoy has received on the connections of its xDS cluster (the control plane's pushes). */
export function xdsBytes(envoy: EnvoyProcess, xdsCluster: string): Promise<number> {
  return envoyStat(envoy, `cluster.${xdsCluster}.upstream_cx_rx_bytes_total`);
}

/**
 * Waits until the xDS bytes Envoy received stop growing for `quietMs` (HTTP/2 pings of a few
 * bytes aside), and returns the count then. A control plane may push a change in several
 * responses; this is how the bench knows it is done.
 */
export async function waitXdsQuiet(
  envoy: EnvoyProcess,
  xdsCluster: string,
  quietMs: number,
  timeoutMs: number,
): Promise<number> {
  const slack = 64;
  const deadline = nowMs() + timeoutMs;
  let last = await xdsBytes(envoy, xdsCluster);
  let since = nowMs();
  for (;;) {
    await sleep(250);
    const now = await xdsBytes(envoy, xdsCluster);
    if (now - last > slack) {
      last = now;
      since = nowMs();
    } else if (nowMs() - since >= quietMs) return now;
    if (nowMs() > deadline) return now;
  }
}

/** Envoy's counters of what xDS changed in it (clusters and listeners added or updated, rejections). */
const UPDATE_COUNTERS = [
  'cluster_manager.cluster_added',
  'cluster_manager.cluster_modified',
  'cluster_manager.cluster_removed',
  'listener_manager.listener_added',
  'listener_manager.listener_modified',
  'listener_manager.listener_removed',
  'listener_manager.lds.update_rejected',
  'cluster_manager.cds.update_rejected',
];

/** Reads Envoy's update counters (see UPDATE_COUNTERS). */
export async function updateCounters(envoy: EnvoyProcess): Promise<Record<string, number>> {
  const stats = await envoy.stats(`^(${UPDATE_COUNTERS.map((c) => c.replaceAll('.', '\\.')).join('|')})$`);
  const out: Record<string, number> = {};
  for (const name of UPDATE_COUNTERS) {
    const v = stats.get(name);
    out[name] = typeof v === 'number' ? v : 0;
  }
  // Per-resource subscriptions, summed: SDS secrets and EDS cluster load assignments accepted.
  for (const [key, filter] of [
    ['sds updates (sum)', '^sds\\..*\\.update_success$'],
    ['eds updates (sum)', '^cluster\\..*\\.update_success$'],
  ] as const) {
    let sum = 0;
    for (const v of (await envoy.stats(filter)).values()) if (typeof v === 'number') sum += v;
    out[key] = sum;
  }
  return out;
}

/** The counters that grew from `before` to `after`, by how much. */
export function counterDelta(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v !== (before[k] ?? 0)) out[k] = v - (before[k] ?? 0);
  return out;
}

export interface ResourceCounts {
  clusters: number;
  listeners: number;
  filterChains: number;
  routeConfigs: number;
  secrets: number;
  listenerNames: string[];
}

interface DumpedListener {
  name?: string;
  active_state?: { listener?: { filter_chains?: unknown[]; default_filter_chain?: unknown } };
}

/**
 * Counts what the control plane gave Envoy: dynamic clusters, listeners, filter chains, RDS, SDS.
 * Each dump may take minutes to start answering: Envoy Gateway's world at large is 30,000 clusters.
 */
export async function resourceCounts(envoy: EnvoyProcess): Promise<ResourceCounts> {
  const dump = async (resource: string) => {
    const r = await envoy.admin(`/config_dump?resource=${resource}`, 'GET', 300_000);
    return (JSON.parse(r.body) as { configs?: unknown[] }).configs ?? [];
  };
  const listeners = (await dump('dynamic_listeners')) as DumpedListener[];
  let filterChains = 0;
  for (const l of listeners) {
    const spec = l.active_state?.listener;
    filterChains += (spec?.filter_chains?.length ?? 0) + (spec?.default_filter_chain ? 1 : 0);
  }
  return {
    clusters: (await dump('dynamic_active_clusters')).length,
    listeners: listeners.length,
    filterChains,
    routeConfigs: (await dump('dynamic_route_configs')).length,
    secrets: (await dump('dynamic_active_secrets')).length,
    listenerNames: listeners.map((l) => l.name ?? '?'),
  };
}

/** Resident and peak resident memory of a process, in bytes, from /proc. */
export function processMemory(pid: number): { rss: number; peak: number } {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rss: kib('VmRSS') * 1024, peak: kib('VmHWM') * 1024 };
}
