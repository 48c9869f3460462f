import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { silentLogger } from '../src/observability/logger';
import { ConvoyMetrics } from '../src/observability/metrics';
import { XdsCache } from '../src/xds/cache';
import { AdsServer } from '../src/xds/server';
import { TypeUrl } from '../src/envoy/resources';
import { fleetResources } from '../test/support/xds-fixtures';
import type { FleetSpec } from '../test/support/xds-fixtures';
import type { StartCommand } from '../test/support/ads-fanout-worker';

/**
 * 200 concurrent ADS streams (SotW and delta, from 4 child processes) all receive a named RDS
 * change and a full-state CDS change; the server's RSS stays bounded.
 */

const WORKERS = 4;
const PER_WORKER = 50;
const FLEET = 'fanout/gw';
const RSS_BOUND = 300 * 1024 * 1024;
const WORKER = path.join(__dirname, '..', 'test', 'support', 'ads-fanout-worker.js');

interface WorkerMsg {
  ev: string;
  id?: number;
  clients?: number;
  ms?: number;
}

class Worker {
  readonly proc: ChildProcess;
  private readonly listeners = new Set<(m: WorkerMsg) => void>();

  constructor() {
    this.proc = fork(WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.proc.on('message', (m: WorkerMsg) => {
      for (const l of this.listeners) l(m);
    });
  }

  send(msg: object): void {
    this.proc.send(msg);
  }

  wait(pred: (m: WorkerMsg) => boolean, timeoutMs: number, what: string): Promise<WorkerMsg> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(l);
        reject(new Error(`worker ${this.proc.pid}: timed out waiting for ${what}`));
      }, timeoutMs);
      const l = (m: WorkerMsg) => {
        if (!pred(m)) return;
        clearTimeout(timer);
        this.listeners.delete(l);
        resolve(m);
      };
      this.listeners.add(l);
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.proc.exitCode !== null) return resolve();
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
      this.proc.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      if (this.proc.connected) this.send({ cmd: 'stop' });
      else this.proc.kill();
    });
  }
}

test('ADS fan-out: 200 streams from 4 processes receive named and full-state changes with bounded memory', async (t) => {
  const metrics = new ConvoyMetrics();
  const cache = new XdsCache({ logger: silentLogger(), metrics });
  const server = new AdsServer({ cache, logger: silentLogger(), metrics });
  const port = await server.listen('127.0.0.1:0');
  const clusters = Array.from({ length: 60 }, (_, i) => `fanout/svc-${i}/80`);
  const spec: FleetSpec = { clusters, extraHttpPorts: [9000, 9001, 9002] };
  const routes = ['http-8080', 'https-8443', 'http-9000', 'http-9001', 'http-9002'];
  assert.ok(cache.setFleet(FLEET, fleetResources(spec)).ok);

  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 25);

  const workers = Array.from({ length: WORKERS }, () => new Worker());
  try {
    const ready = workers.map((w) => w.wait((m) => m.ev === 'ready', 90_000, 'ready'));
    workers.forEach((w, i) => {
      const start: StartCommand = {
        cmd: 'start',
        address: `127.0.0.1:${port}`,
        count: PER_WORKER,
        variant: 'mixed',
        fleet: FLEET,
        idPrefix: `w${i}`,
        routes,
        secrets: ['default/cert'],
      };
      w.send(start);
    });
    const readyMsgs = await Promise.all(ready);
    assert.equal(
      readyMsgs.reduce((n, m) => n + (m.clients ?? 0), 0),
      WORKERS * PER_WORKER,
    );
    assert.equal(server.debugState().streams.length, WORKERS * PER_WORKER);
    assert.equal(
      (await metrics.xdsStreams.get()).values.reduce((n, v) => n + v.value, 0),
      WORKERS * PER_WORKER,
    );

    let nextId = 1;
    const everyone = async (typeUrl: string, version: string) => {
      const id = nextId++;
      const reached = workers.map((w) => w.wait((m) => m.ev === 'reached' && m.id === id, 90_000, typeUrl));
      for (const w of workers) w.send({ cmd: 'await', id, typeUrl, version });
      const msgs = await Promise.all(reached);
      assert.equal(
        msgs.reduce((n, m) => n + (m.clients ?? 0), 0),
        WORKERS * PER_WORKER,
      );
    };

    // A named (RDS) change: only the route that changed is pushed, to every stream.
    const before = cache.snapshot(FLEET)!.types[TypeUrl.Route].version;
    assert.ok(cache.setFleet(FLEET, fleetResources({ ...spec, routePrefix: '/v2' })).ok);
    const rdsVersion = cache.snapshot(FLEET)!.types[TypeUrl.Route].version;
    assert.notEqual(rdsVersion, before);
    await everyone(TypeUrl.Route, rdsVersion);

    // A full-state (CDS) change: one more cluster.
    const more = { ...spec, routePrefix: '/v2', clusters: [...clusters, 'fanout/new/80'] };
    assert.ok(cache.setFleet(FLEET, fleetResources(more)).ok);
    await everyone(TypeUrl.Cluster, cache.snapshot(FLEET)!.types[TypeUrl.Cluster].version);
    // ... and its endpoints, which every simulated Envoy asked for after seeing the cluster.
    await everyone(TypeUrl.Endpoint, cache.snapshot(FLEET)!.types[TypeUrl.Endpoint].version);

    const states = server.debugState().streams.flatMap((s) => Object.values(s.types).map((t) => t.state));
    assert.equal(states.filter((s) => s === 'nacked').length, 0);
    peak = Math.max(peak, process.memoryUsage().rss);
    t.diagnostic(
      `server RSS: baseline ${(baseline / 1048576).toFixed(1)} MiB, peak +${((peak - baseline) / 1048576).toFixed(1)} MiB`,
    );
    assert.ok(
      peak - baseline < RSS_BOUND,
      `server RSS grew by ${((peak - baseline) / 1048576).toFixed(1)} MiB (bound ${RSS_BOUND / 1048576} MiB)`,
    );
  } finally {
    clearInterval(sampler);
    await Promise.all(workers.map((w) => w.stop()));
    await server.stop(1000);
  }
});
