import * as path from 'node:path';

/**
 * The command line of one managed Envoy (docs/operations.md §14), as a pure function of its
 * folder and settings. `--use-dynamic-base-id` lets any number of Envoys share a host (each
 * picks a free shared-memory id and writes it to `--base-id-path`); the admin listener binds
 * port 0 on loopback and Envoy writes the port it got to `--admin-address-path`.
 */

export interface EnvoyCommandOptions {
  /** This Envoy's folder (LocalEnvoySpec.dir). */
  dir: string;
  /** Seconds of graceful drain (Envoy's --drain-time-s), used by /drain_listeners?graceful. */
  drainTimeS: number;
  /** Worker threads (Envoy's --concurrency). */
  concurrency: number;
  /** Envoy's --log-level. */
  logLevel: string;
}

/** The files of an Envoy's folder. */
export function envoyFiles(dir: string): {
  bootstrap: string;
  adminAddress: string;
  baseId: string;
  log: string;
  pid: string;
} {
  return {
    bootstrap: path.join(dir, 'envoy.yaml'),
    adminAddress: path.join(dir, 'admin-address'),
    baseId: path.join(dir, 'base-id'),
    log: path.join(dir, 'envoy.log'),
    pid: path.join(dir, 'envoy.pid'),
  };
}

/** Envoy's arguments (without the binary). */
export function envoyArgs(o: EnvoyCommandOptions): string[] {
  const files = envoyFiles(o.dir);
  return [
    '-c',
    files.bootstrap,
    '--use-dynamic-base-id',
    '--base-id-path',
    files.baseId,
    '--admin-address-path',
    files.adminAddress,
    '--concurrency',
    String(o.concurrency),
    '--log-level',
    o.logLevel,
    '--drain-time-s',
    String(o.drainTimeS),
    '--drain-strategy',
    'gradual',
    // After a drain Convoy stops Envoy itself; this only bounds a hot restart, which is not used.
    '--parent-shutdown-time-s',
    String(o.drainTimeS + 15),
  ];
}
