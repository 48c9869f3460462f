import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { ConvoyMetrics } from '../observability/metrics';

/**
 * Holds the metrics of the Kubernetes provider, registered on the process's ConvoyMetrics registry.
 *
 * They are looked up by name first so that several providers (tests, restarts) can share one
 * registry.
 */
export interface KubernetesMetrics {
  relists: Counter<'kind'>;
  watchErrors: Counter<'kind'>;
  events: Counter<'kind' | 'type'>;
  synced: Gauge<'kind'>;
}

/** Returns the counter registered under `name`, registering it first if needed. */
function counter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: L[],
): Counter<L> {
  return (
    (registry.getSingleMetric(name) as Counter<L> | undefined) ??
    new Counter({ name, help, labelNames, registers: [registry] })
  );
}

/** Returns the gauge registered under `name`, registering it first if needed. */
function gauge<L extends string>(registry: Registry, name: string, help: string, labelNames: L[]): Gauge<L> {
  return (
    (registry.getSingleMetric(name) as Gauge<L> | undefined) ??
    new Gauge({ name, help, labelNames, registers: [registry] })
  );
}

/** Returns the Kubernetes provider's metrics on the registry of `metrics` (docs/operations.md §8). */
export function kubernetesMetrics(metrics: ConvoyMetrics): KubernetesMetrics {
  const r = metrics.registry;
  return {
    relists: counter(
      r,
      'convoy_kubernetes_lists_total',
      'Complete LISTs of a kind (initial sync and relists).',
      ['kind'],
    ),
    watchErrors: counter(
      r,
      'convoy_kubernetes_watch_errors_total',
      'Failed LISTs or interrupted WATCHes, by kind.',
      ['kind'],
    ),
    events: counter(r, 'convoy_kubernetes_watch_events_total', 'Watch events received, by kind and type.', [
      'kind',
      'type',
    ]),
    synced: gauge(
      r,
      'convoy_kubernetes_informer_synced',
      '1 once a kind has been listed (or found missing).',
      ['kind'],
    ),
  };
}

/** Returns the `convoy_leader` gauge: 1 while this replica holds the leader Lease. */
export function leaderGauge(metrics: ConvoyMetrics): Gauge<'lease'> {
  return gauge(metrics.registry, 'convoy_leader', '1 while this replica holds the leader Lease.', ['lease']);
}

/** The status writer's window and the watch lag it follows (write-window.ts; docs/operations.md §8). */
export interface StatusWindowMetrics {
  window: Gauge;
  echoLag: Histogram;
}

/** Returns the status writer's window metrics on the registry of `metrics`, registering them once. */
export function statusWindowMetrics(metrics: ConvoyMetrics): StatusWindowMetrics {
  const r = metrics.registry;
  const window =
    (r.getSingleMetric('convoy_status_write_window') as Gauge | undefined) ??
    new Gauge({
      name: 'convoy_status_write_window',
      help: 'Status writes allowed in flight now; shrinks while their watch echoes arrive late.',
      registers: [r],
    });
  const echoLag =
    (r.getSingleMetric('convoy_status_echo_lag_seconds') as Histogram | undefined) ??
    new Histogram({
      name: 'convoy_status_echo_lag_seconds',
      help: "Time from a status write's answer to its event on the watch stream (the API server's watch lag).",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [r],
    });
  return { window, echoLag };
}
