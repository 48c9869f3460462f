import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Metric } from 'prom-client';
import { CertificateExpiryMetric } from './certificate-expiry-metric';

/**
 * Every Prometheus metric Convoy exports, on one registry per process (tests create their own).
 * Names are prefixed convoy_. Modules receive this object instead of touching a global registry.
 */
export class ConvoyMetrics {
  readonly registry = new Registry();

  /**
   * Set by the ADS server: its streams per fleet and variant. Read at scrape time, so a fleet's
   * series disappears with its last stream and streams for fleets nobody serves share the label
   * fleet="unknown" (invented names never become series).
   */
  xdsStreamCounts: () => Iterable<{ fleet: string; variant: string; streams: number }> = () => [];
  readonly xdsStreams: Gauge<'fleet' | 'variant'> = new Gauge({
    name: 'convoy_xds_streams',
    help: 'Connected ADS streams per fleet and protocol variant (fleet="unknown": no such Gateway).',
    labelNames: ['fleet', 'variant'] as const,
    registers: [this.registry],
    collect: () => {
      this.xdsStreams.reset();
      for (const c of this.xdsStreamCounts())
        this.xdsStreams.set({ fleet: c.fleet, variant: c.variant }, c.streams);
    },
  });
  /**
   * Set by `convoy serve` from the ADS server's bookkeeping: per fleet and state (synced, stale,
   * not_sent, nacked), how many (connected Envoy, xDS type) pairs are in it. Read at scrape time.
   */
  xdsTypeStates: () => Iterable<{ fleet: string; state: string; count: number }> = () => [];
  readonly xdsTypeStateGauge: Gauge<'fleet' | 'state'> = new Gauge({
    name: 'convoy_xds_type_states',
    help: 'Connected Envoys x xDS types per fleet in each sync state: synced, stale (sent, not yet acknowledged), not_sent, nacked.',
    labelNames: ['fleet', 'state'] as const,
    registers: [this.registry],
    collect: () => {
      this.xdsTypeStateGauge.reset();
      for (const c of this.xdsTypeStates())
        this.xdsTypeStateGauge.set({ fleet: c.fleet, state: c.state }, c.count);
    },
  });
  /**
   * Set by the Controller: per listener serving certificates (`Kind/ns/name/listener`), the time
   * its earliest certificate expires (ms since the epoch). Read at scrape time, so the gauge is
   * current without a build and only listeners that exist have a series.
   */
  certificateExpiries: () => Iterable<{ listener: string; notAfter: number }> = () => [];
  readonly certificateExpirySeconds = new CertificateExpiryMetric(() => this.certificateExpiries());
  readonly xdsPushes = new Counter({
    name: 'convoy_xds_pushes_total',
    help: 'xDS responses sent, by type.',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly xdsPushBytes = new Counter({
    name: 'convoy_xds_push_bytes_total',
    help: 'Bytes of xDS responses written to streams, by type.',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly xdsPushLatency = new Histogram({
    name: 'convoy_xds_push_ack_seconds',
    help: 'Time from sending a response to receiving its ACK or NACK.',
    labelNames: ['type'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly xdsNacks = new Counter({
    name: 'convoy_xds_nacks_total',
    help: 'NACKs received from Envoy, by type and fleet (fleets Convoy serves; others are "unknown").',
    labelNames: ['type', 'fleet'] as const,
    registers: [this.registry],
  });
  readonly xdsStalledStreams = new Gauge({
    name: 'convoy_xds_stalled_streams',
    help: 'ADS streams whose Envoy stopped reading: their unflushed responses no longer hold the send budget.',
    registers: [this.registry],
  });
  readonly snapshotsRejected = new Counter({
    name: 'convoy_snapshots_rejected_total',
    help: 'Fleet snapshots refused by the consistency check (the previous one stays in service).',
    labelNames: ['fleet'] as const,
    registers: [this.registry],
  });
  readonly buildDuration = new Histogram({
    name: 'convoy_build_duration_seconds',
    help: 'Time to build the fleet models, status and Envoy resources from the store.',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly builds = new Counter({
    name: 'convoy_builds_total',
    help: 'Builds run, by result.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly fullBuilds = new Counter({
    name: 'convoy_full_builds_total',
    help: 'Full builds run instead of a fast path, by reason (docs/operations.md §8).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /** `convoy serve --build-thread worker` (docs/architecture.md §14): build threads restarted after they died. */
  readonly buildWorkerRestarts = new Counter({
    name: 'convoy_build_worker_restarts_total',
    help: 'Build threads restarted after they exited unexpectedly (the last snapshots stayed in service).',
    registers: [this.registry],
  });
  readonly invalidObjects = new Gauge({
    name: 'convoy_invalid_objects',
    help: 'Objects currently refused by validation (file mode: parse and schema errors).',
    registers: [this.registry],
  });
  readonly statusWrites = new Counter({
    name: 'convoy_status_writes_total',
    help: 'Status patches sent to the API server, by result.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly logLinesDropped = new Counter({
    name: 'convoy_log_lines_dropped_total',
    help: 'Log lines dropped because the log destination could not take them (full pipe or disk).',
    registers: [this.registry],
  });
  readonly logWriteErrors = new Counter({
    name: 'convoy_log_write_errors_total',
    help: 'Failed writes to the log destination (e.g. ENOSPC, EPIPE); the data is tried again.',
    registers: [this.registry],
  });
  // xDS admission and authorization (docs/security.md §2): labels are a fixed set of reasons.
  readonly xdsStreamsRefused = new Counter({
    name: 'convoy_xds_streams_refused_total',
    help:
      'ADS streams refused or closed by the server, by reason: permission_denied (the identity does not ' +
      'name the fleet), unauthenticated, stream_limit, peer_stream_limit, unknown_fleet (no such Gateway ' +
      'within the timeout), invalid_request.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  // Local managed Envoys (docs/operations.md §14).
  readonly localEnvoyRestarts = new Counter({
    name: 'convoy_local_envoy_restarts_total',
    help: 'Managed local Envoys restarted after they exited on their own, by Gateway.',
    labelNames: ['gateway'] as const,
    registers: [this.registry],
  });
  /** Set by serve: how many managed local Envoys run. Read at scrape time. */
  localEnvoyCount: () => number = () => 0;
  readonly localEnvoys: Gauge = new Gauge({
    name: 'convoy_local_envoys',
    help: 'Managed local Envoy processes (one per Gateway) that Convoy supervises.',
    registers: [this.registry],
    collect: () => this.localEnvoys.set(this.localEnvoyCount()),
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    this.registry.registerMetric(this.certificateExpirySeconds as unknown as Metric);
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'convoy_' });
  }

  /**
   * Returns every metric in Prometheus text format, as `registry.metrics()` does, except that the
   * certificate-expiry gauge renders itself (CertificateExpiryMetric: thousands of series, cheap to
   * write directly, costly through prom-client's label formatting).
   */
  async text(): Promise<string> {
    let out = '';
    for await (const part of this.textParts()) out += part;
    return out;
  }

  /**
   * Yields the text of `text()` in parts, giving the event loop back (one `setImmediate`) whenever
   * the current turn has run SCRAPE_TURN_MS: at 5,000 listeners a scrape is tens of milliseconds
   * of the serving thread, which would otherwise delay xDS pushes and fall into the next
   * event-loop delay window (docs/operations.md §8 "Scrape cost (session 18)").
   */
  async *textParts(): AsyncGenerator<string> {
    let turnStart = performance.now();
    const due = (): boolean => performance.now() - turnStart >= SCRAPE_TURN_MS;
    const nextTurn = async (): Promise<void> => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      turnStart = performance.now();
    };
    const all = this.registry.getMetricsAsArray();
    if (all.length === 0) yield '\n';
    for (let i = 0; i < all.length; i++) {
      const m = all[i]!;
      const end = i < all.length - 1 ? '\n\n' : '\n';
      if ((m as unknown) === this.certificateExpirySeconds) {
        for (const part of this.certificateExpirySeconds.parts(Date.now(), due)) {
          yield part;
          if (due()) await nextTurn();
        }
        yield end;
      } else yield (await this.registry.getSingleMetricAsString(m.name)) + end;
      if (due()) await nextTurn();
    }
  }
}

/** How long one turn of a scrape may run before it yields (docs/operations.md §8). */
const SCRAPE_TURN_MS = 2;
