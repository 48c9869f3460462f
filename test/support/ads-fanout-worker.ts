/**
 * Child process for fan-out tests and benchmarks: opens many simulated Envoys (ADS clients)
 * against one server and reports over IPC when every client has reached a given version.
 *
 * Messages from the parent:
 *   { cmd: 'start', address, count, variant: 'sotw' | 'delta' | 'mixed', fleet, idPrefix, routes, secrets }
 *   { cmd: 'await', id, typeUrl, version }   → { ev: 'reached', id, clients, ms }
 *   { cmd: 'stats' }                          → { ev: 'stats', responses, bytes, rss }
 *   { cmd: 'stop' }                           → closes the clients and exits
 * Replies: { ev: 'ready', clients } once every client has CDS, EDS, LDS, RDS and SDS responses.
 *
 * Each client behaves like Envoy: wildcard CDS and LDS, EDS for the clusters CDS returned, RDS and
 * SDS for the names given by the parent. (Run without an IPC channel, e.g. picked up by a test
 * runner, it does nothing.)
 */
import { AdsClient } from './ads-client';
import type { AdsResponse } from './ads-client';

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const EDS = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const RDS = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';
const SDS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';
const ALL = [CDS, EDS, LDS, RDS, SDS];

export interface StartCommand {
  cmd: 'start';
  address: string;
  count: number;
  variant: 'sotw' | 'delta' | 'mixed';
  fleet: string;
  idPrefix: string;
  routes: string[];
  secrets: string[];
}

interface Waiter {
  id: number;
  typeUrl: string;
  version: string;
  started: number;
}

interface Sim {
  client: AdsClient;
  clusters: Set<string>;
  edsKey: string;
}

const sims: Sim[] = [];
const waiters: Waiter[] = [];
let readySent = false;
let bytes = 0;
let responses = 0;

/** Sends a message to the parent process over IPC. */
function send(msg: object): void {
  process.send?.(msg);
}

/** Opens `cmd.count` simulated Envoys and subscribes each to every type. */
function start(cmd: StartCommand): void {
  for (let i = 0; i < cmd.count; i++) {
    const variant = cmd.variant === 'mixed' ? (i % 2 === 0 ? 'sotw' : 'delta') : cmd.variant;
    const client = new AdsClient({
      address: cmd.address,
      variant,
      node: { id: `${cmd.idPrefix}-${i}`, cluster: cmd.fleet },
      keepResponses: false,
    });
    const sim: Sim = { client, clusters: new Set(), edsKey: '' };
    sims.push(sim);
    client.on('response', (r: AdsResponse) => onResponse(sim, r));
    client.on('stream-error', () => undefined);
    client.subscribe(CDS, []);
    client.subscribe(LDS, []);
    client.subscribe(SDS, cmd.secrets);
    client.subscribe(RDS, cmd.routes);
  }
}

/** Counts a response and, on CDS, subscribes the Envoy to the EDS of its current clusters. */
function onResponse(sim: Sim, r: AdsResponse): void {
  responses++;
  bytes += r.raw.length;
  if (r.typeUrl === CDS) {
    if (sim.client.variant === 'sotw') sim.clusters = new Set(r.names);
    else {
      for (const n of r.names) sim.clusters.add(n);
      for (const n of r.removed) sim.clusters.delete(n);
    }
    const names = [...sim.clusters].sort();
    const key = names.join('\n');
    if (key !== sim.edsKey) {
      sim.edsKey = key;
      sim.client.subscribe(EDS, names);
    }
  }
  check();
}

/** Reports `ready` once every Envoy has every type, and `reached` for each version all have. */
function check(): void {
  if (!readySent && sims.length > 0 && sims.every((s) => ALL.every((t) => s.client.latest.has(t)))) {
    readySent = true;
    send({ ev: 'ready', clients: sims.length });
  }
  for (let i = waiters.length - 1; i >= 0; i--) {
    const w = waiters[i];
    if (sims.every((s) => s.client.latest.get(w.typeUrl)?.version === w.version)) {
      waiters.splice(i, 1);
      send({ ev: 'reached', id: w.id, clients: sims.length, ms: Date.now() - w.started });
    }
  }
}

if (process.send) {
  process.on('message', (msg: { cmd: string } & Record<string, unknown>) => {
    switch (msg.cmd) {
      case 'start':
        start(msg as unknown as StartCommand);
        break;
      case 'await':
        waiters.push({
          id: msg.id as number,
          typeUrl: msg.typeUrl as string,
          version: msg.version as string,
          started: Date.now(),
        });
        check();
        break;
      case 'stats':
        send({ ev: 'stats', responses, bytes, rss: process.memoryUsage().rss });
        break;
      case 'stop':
        for (const s of sims) s.client.close();
        setTimeout(() => process.exit(0), 50).unref();
        process.disconnect();
        break;
    }
  });
  process.on('disconnect', () => {
    for (const s of sims) s.client.close();
    setTimeout(() => process.exit(0), 50).unref();
  });
}
