import { Counter, Gauge } from 'prom-client';
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
