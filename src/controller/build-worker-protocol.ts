import type { FleetModel } from '../model/fleet';
import type { ObjectStatus } from '../status/types';
import type { KubeObject } from '../store/objects';
import type { FleetDelta } from '../xds/snapshot-delta';
import type { FleetRejections } from '../xds/rejections';
import type { ControllerOptions } from './controller';

/**
 * The messages between the serving thread and the build thread (docs/architecture.md §14). Every
 * field is plain data (structured clone), except FleetDelta's bytes, which are transferred.
 */

/** The Controller options that are plain data, as the build thread's Controller gets them. */
export type BuildWorkerControllerOptions = Pick<
  ControllerOptions,
  | 'controllerName'
  | 'externalNameServices'
  | 'endpoints'
  | 'gatewayAddresses'
  | 'debounceMs'
  | 'maxDelayMs'
  | 'managedFleets'
  | 'maxPortRangePorts'
  | 'xListenerSets'
  | 'dynamicPorts'
>;

/** The build thread's workerData. */
export interface BuildWorkerInit {
  controller: BuildWorkerControllerOptions;
  /** Turned into the Controller's TranslateOptions by the thread's entry (functions do not clone). */
  translate: unknown;
  logLevel?: string;
  /** Send the fleet models (their provisioning part) after each build pass: someone provisions fleets. */
  fleetModels: boolean;
}

/** One store change as the build thread's copy of the store applies it. */
export type StoreOp =
  { op: 'put'; object: KubeObject } | { op: 'delete'; kind: string; namespace: string; name: string };

/** Serving thread → build thread. */
export type ToBuildWorker =
  | { t: 'store'; ops: StoreOp[] }
  | { t: 'synced' }
  | { t: 'rejections'; view: FleetRejections }
  | { t: 'full-build' }
  /** The serving thread took a 'statuses' chunk: the next may come. */
  | { t: 'status-ack' }
  | { t: 'settle'; id: number };

/** Build thread → serving thread. */
export type FromBuildWorker =
  | { t: 'fleet'; delta: FleetDelta }
  /** After the thread's first build: the fleets it has (others the serving thread holds are gone). */
  | { t: 'fleets'; fleets: string[] }
  | { t: 'ready' }
  /**
   * Statuses that changed since the last batch (by key); `reset` starts from nothing (a new
   * thread). Sent in chunks; the serving thread publishes on `last`: a full publication in the
   * order of `keys` (every key, in the Controller's order), or a fast path's changes with the
   * keys that went (`removed`).
   */
  | {
      t: 'statuses';
      reset: boolean;
      changed: ObjectStatus[];
      last: boolean;
      keys?: string[];
      removed?: string[];
    }
  | { t: 'fleet-models'; models: FleetModel[]; untouched: string[] }
  | { t: 'expiries'; expiries: { listener: string; notAfter: number }[] }
  | { t: 'metric'; field: string; method: string; args: unknown[] }
  | { t: 'reoffer'; fleet: string; resources: readonly { typeUrl: string; name: string }[] }
  | { t: 'settled'; id: number };

/**
 * Statuses per 'statuses' message: receiving one (its clone is ~0.05 ms per status on a loaded
 * machine) must stay well inside the serving thread's delay budget.
 */
export const STATUS_CHUNK = 100;
/** Objects per 'store' message when the whole store is sent to a new build thread (same budget). */
export const STORE_CHUNK = 100;

/**
 * Returns the part of a fleet model the provisioners read (managed-fleet settings, ports without
 * their filter chains and routes): a full model is megabytes at 5,000 ListenerSets and the
 * provisioners never look at chains, clusters or secrets.
 */
export function provisioningModel(model: FleetModel): FleetModel {
  return {
    fleet: model.fleet,
    gateway: model.gateway,
    ports: model.ports.map((p) => ({ ...p, filterChains: [], http: undefined })),
    clusters: [],
    secrets: [],
    ...(model.managed ? { managed: model.managed } : {}),
  };
}
