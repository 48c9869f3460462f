import * as path from 'node:path';
import { Controller, type ControllerOptions } from '../controller/controller';
import { BuildWorkerHost } from '../controller/build-worker-host';
import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import { XdsCache } from '../xds/cache';
import { MirrorCache, type SnapshotSource } from '../xds/mirror-cache';
import { translateOptions, type BuildThreadTranslate } from './build-thread';

/**
 * `convoy serve --build-thread main|worker` (docs/architecture.md §14): the snapshot cache the ADS
 * server reads and the builder that fills it, either the Controller on this thread or the
 * Controller in a worker thread behind a BuildWorkerHost.
 */

export type BuildThread = 'main' | 'worker';

/** What `convoy serve` calls on its builder: the Controller's surface, in either thread. */
export interface Builder {
  start(): void;
  stop(): void | Promise<void>;
  isReady(): boolean;
  requestFullBuild(): void;
}

/** Returns the snapshot cache for a build thread choice: the XdsCache itself, or its serving-thread copy. */
export function snapshotCache(thread: BuildThread, logger: Logger, metrics: ConvoyMetrics): SnapshotSource {
  return thread === 'worker' ? new MirrorCache(logger) : new XdsCache({ logger, metrics });
}

/** The Controller's options without the cache, with translate settings that can cross threads. */
export type BuilderOptions = Omit<ControllerOptions, 'cache' | 'translate'> & {
  translate: BuildThreadTranslate;
};

/**
 * Returns the builder that fills `cache` (made by snapshotCache). In a worker, the options that
 * are plain data cross to the thread; the sinks, rejections and fleet hook stay here.
 */
export function createBuilder(cache: SnapshotSource, options: BuilderOptions, logLevel?: string): Builder {
  if (cache instanceof XdsCache)
    return new Controller({ ...options, cache, translate: translateOptions(options.translate) });
  if (!(cache instanceof MirrorCache))
    throw new Error('createBuilder: the cache must come from snapshotCache');
  const { store, statusSinks, logger, metrics, rejections, onFleets, translate, ...plain } = options;
  return new BuildWorkerHost({
    entry: path.join(__dirname, 'build-thread.js'),
    init: {
      controller: {
        controllerName: plain.controllerName,
        ...(plain.externalNameServices !== undefined
          ? { externalNameServices: plain.externalNameServices }
          : {}),
        ...(plain.endpoints ? { endpoints: plain.endpoints } : {}),
        ...(plain.gatewayAddresses ? { gatewayAddresses: plain.gatewayAddresses } : {}),
        ...(plain.debounceMs !== undefined ? { debounceMs: plain.debounceMs } : {}),
        ...(plain.maxDelayMs !== undefined ? { maxDelayMs: plain.maxDelayMs } : {}),
        ...(plain.managedFleets !== undefined ? { managedFleets: plain.managedFleets } : {}),
        ...(plain.maxPortRangePorts !== undefined ? { maxPortRangePorts: plain.maxPortRangePorts } : {}),
        ...(plain.xListenerSets ? { xListenerSets: true } : {}),
        ...(plain.dynamicPorts ? { dynamicPorts: plain.dynamicPorts } : {}),
      },
      translate,
      ...(logLevel ? { logLevel } : {}),
      fleetModels: onFleets !== undefined,
    },
    store,
    cache,
    statusSinks,
    logger,
    metrics,
    ...(rejections ? { rejections } : {}),
    ...(onFleets ? { onFleets } : {}),
  });
}
