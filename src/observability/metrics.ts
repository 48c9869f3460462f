import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every Prometheus metric Convoy exports, on one registry per process (tests create their own).
 * Names are prefixed convoy_. Modules receive this object instead of touching a global registry.
 */
export class ConvoyMetrics {
  readonly registry = new Registry();

  readonly xdsStreams = new Gauge({
    name: 'convoy_xds_streams',
    help: 'Connected ADS streams per fleet and protocol variant.',
    labelNames: ['fleet', 'variant'] as const,
    registers: [this.registry],
  });
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
    help: 'NACKs received from Envoy, by type.',
    labelNames: ['type'] as const,
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

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'convoy_' });
  }
}
