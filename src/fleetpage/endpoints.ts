/**
 * Wires the fleet page into `convoy serve` (docs/operations.md §19): its files, its JSON view and
 * its event stream on the admin server, fed from the store, the published statuses, the
 * certificate expiries the Controller reports and the ADS server's bookkeeping.
 */
import type { Page, Provider } from '../observability/admin-server';
import type { EventSource } from '../observability/event-stream';
import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import { ROUTE_KINDS } from '../gateway/routes/types';
import type { ObjectStatus, StatusSink } from '../status/types';
import type { ObjectStore } from '../store/store';
import type { FleetRejections } from '../xds/rejections';
import type { XdsDebugState } from '../xds/debug-state';
import { FLEET_PATHS, fleetAssetDir, fleetPages } from './assets';
import { FleetFeed } from './feed';
import { buildFleetView } from './view';

export interface FleetPageSources {
  store: Pick<ObjectStore, 'list'>;
  /** The statuses as last published (the StatusView). */
  statuses: { list(): readonly ObjectStatus[] };
  xds: {
    debugState(): Pick<XdsDebugState, 'streams' | 'rejections'>;
    onRejectionsChange(listener: (view: FleetRejections) => void): () => void;
  };
  metrics: Pick<ConvoyMetrics, 'certificateExpiries'>;
  logger: Logger;
  /** Recompute interval while a page is open (FleetFeed). */
  intervalMs?: number;
}

export interface FleetPageEndpoints {
  pages: Record<string, () => Page>;
  routes: Record<string, Provider>;
  eventStreams: Record<string, EventSource>;
  /** Add to the Controller's status sinks: a publication updates open pages. */
  statusSink: StatusSink;
  stop(): void;
}

export function fleetPageEndpoints(sources: FleetPageSources): FleetPageEndpoints {
  const log = sources.logger.child({ component: 'fleet-page' });
  const feed = new FleetFeed(
    () =>
      buildFleetView({
        gateways: sources.store.list('Gateway'),
        listenerSets: sources.store.list('ListenerSet'),
        routes: ROUTE_KINDS.flatMap((kind) => sources.store.list(kind)),
        statuses: sources.statuses.list(),
        certificateExpiries: sources.metrics.certificateExpiries(),
        xds: sources.xds.debugState(),
        now: Date.now(),
      }),
    { intervalMs: sources.intervalMs, onError: (err) => log.warn({ err }, 'fleet view failed') },
  );
  const unsubscribe = sources.xds.onRejectionsChange(() => feed.poke());
  return {
    pages: fleetPages(fleetAssetDir()),
    routes: { [FLEET_PATHS.view]: () => feed.view() },
    eventStreams: { [FLEET_PATHS.events]: (send) => feed.subscribe(send) },
    // Runs after the StatusView in the sinks' order, so the poke sees the new statuses.
    statusSink: { publish: () => feed.poke(), publishChanges: () => feed.poke() },
    stop: () => {
      unsubscribe();
      feed.stop();
    },
  };
}
