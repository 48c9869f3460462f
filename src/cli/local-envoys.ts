import type { ListenerLayout } from '../envoy/translate/sni-dispatch';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalEnvoyFleet } from '../fleets/local/local-fleet';
import type { FleetSource } from '../fleets/local/local-fleet';
import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import type { CertificateDirectory } from '../pki/certificate-directory';
import { parseDuration } from '../util/duration';
import { parseHostPort } from '../util/host-port';
import { UsageError } from './args';
import type { OptionSpec } from './args';

/**
 * `convoy serve --from-dir`'s managed local Envoys (docs/operations.md §14): the flags, the
 * choice of the Envoy binary, and the wiring of the local fleet to the xDS cache, Convoy's CA
 * and the endpoint guard.
 */

/** Flags merged into serve's table. */
export const LOCAL_ENVOY_OPTIONS = {
  'envoy-bin': {
    type: 'string',
    valueName: 'FILE',
    description:
      'File mode: start and supervise one Envoy per Gateway with this binary. Default: ENVOY_BIN, else .venv/bin/envoy of the Convoy checkout when it exists (scripts/setup-envoy.sh).',
  },
  'no-managed-envoy': {
    type: 'boolean',
    description: 'File mode: start no Envoy; you run them yourself (convoy bootstrap).',
  },
  'envoy-state-dir': {
    type: 'string',
    valueName: 'DIR',
    description:
      "Managed Envoys' bootstraps, SDS files and logs (DIR/NS/NAME/envoy.log). Default: $XDG_STATE_HOME/convoy/envoys.",
  },
  'envoy-drain-time': {
    type: 'string',
    valueName: 'DURATION',
    description:
      'How long a managed Envoy drains (health check failed, listeners draining) before it is stopped.',
    default: '5s',
  },
  'envoy-concurrency': {
    type: 'string',
    valueName: 'N',
    description: 'Worker threads of each managed Envoy.',
    default: '1',
  },
} as const satisfies Record<string, OptionSpec>;

/** What the managed local Envoys run with, after the flags were checked. */
export interface LocalEnvoysOptions {
  binary: string;
  stateDir: string;
  drainMs: number;
  concurrency: number;
}

interface LocalEnvoyFlags {
  'from-dir'?: string;
  'envoy-bin'?: string;
  'no-managed-envoy': boolean;
  'envoy-state-dir'?: string;
  'envoy-drain-time': string;
  'envoy-concurrency': string;
  'xds-tls-cert'?: string;
}

/** The checkout's .venv/bin/envoy (scripts/setup-envoy.sh), found from this file upwards. */
export function defaultEnvoyBinary(from = __dirname): string | undefined {
  for (let dir = from; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (!fs.existsSync(path.join(dir, 'package.json'))) continue;
    const candidate = path.join(dir, '.venv', 'bin', 'envoy');
    return isExecutable(candidate) ? candidate : undefined;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Decides whether `convoy serve` manages local Envoys, and with what: only in file mode, unless
 * --no-managed-envoy, with the first binary of --envoy-bin, ENVOY_BIN and the checkout's
 * .venv/bin/envoy. None found: undefined (the user runs Envoys, as before). A binary named
 * explicitly must exist; managed Envoys need Convoy's own CA (or plaintext), not --xds-tls-*,
 * so with those only an explicitly named binary is an error (the found one is not used).
 */
export function localEnvoysFromFlags(
  v: LocalEnvoyFlags,
  env: NodeJS.ProcessEnv = process.env,
  defaultBinary: () => string | undefined = defaultEnvoyBinary,
): LocalEnvoysOptions | undefined {
  if (v['from-dir'] === undefined) {
    if (v['envoy-bin'] !== undefined)
      throw new UsageError('--envoy-bin needs --from-dir (managed Envoys are local processes)', 'serve');
    return undefined;
  }
  if (v['no-managed-envoy']) {
    if (v['envoy-bin'] !== undefined)
      throw new UsageError('--no-managed-envoy excludes --envoy-bin', 'serve');
    return undefined;
  }
  const named = v['envoy-bin'] ?? (env.ENVOY_BIN || undefined);
  const binary = named ?? defaultBinary();
  if (binary === undefined) return undefined;
  if (named !== undefined && !isExecutable(named)) {
    const source = v['envoy-bin'] !== undefined ? '--envoy-bin' : 'ENVOY_BIN';
    throw new UsageError(
      `${source} ${named} is not an executable file (or pass --no-managed-envoy)`,
      'serve',
    );
  }
  if (v['xds-tls-cert'] !== undefined) {
    // Found, not asked for: the user runs Envoys with their own certificates, as before.
    if (named === undefined) return undefined;
    throw new UsageError(
      "managed Envoys get their client certificates from Convoy's own CA (--xds-certs-dir), not --xds-tls-*; pass --no-managed-envoy to run Envoys yourself",
      'serve',
    );
  }
  let drainMs: number;
  try {
    drainMs = parseDuration(v['envoy-drain-time'], '--envoy-drain-time');
  } catch (err) {
    throw new UsageError((err as Error).message, 'serve');
  }
  const concurrency = Number(v['envoy-concurrency']);
  if (!/^\d+$/.test(v['envoy-concurrency']) || concurrency < 1 || concurrency > 1024) {
    throw new UsageError(
      `--envoy-concurrency must be a whole number from 1 to 1024, got ${v['envoy-concurrency']}`,
      'serve',
    );
  }
  const stateHome = env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
  return {
    binary: path.resolve(binary),
    stateDir: path.resolve(v['envoy-state-dir'] ?? path.join(stateHome, 'convoy', 'envoys')),
    drainMs,
    concurrency,
  };
}

/** The address a local Envoy dials for Convoy's xDS: the listen host, loopback for a wildcard. */
export function localXdsAddress(xdsListenAddress: string, boundPort: number): string {
  const { host } = parseHostPort(xdsListenAddress);
  const dial = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return dial.includes(':') ? `[${dial}]:${boundPort}` : `${dial}:${boundPort}`;
}

/**
 * Starts the local fleet. `protectedPorts` is the endpoint guard's live list: the managed Envoys'
 * admin ports are kept in it after its first `staticCount` entries (docs/security.md §7).
 */
export function startLocalEnvoys(o: {
  options: LocalEnvoysOptions;
  /** The Gateways to run an Envoy for, and their parameters' settings (model-source.ts). */
  source: FleetSource;
  xdsAddress: string;
  xdsPort: number;
  certificates: CertificateDirectory | undefined;
  logger: Logger;
  metrics: ConvoyMetrics;
  protectedPorts: number[];
  /** The listener layout Convoy serves; the bootstraps carry what it needs. */
  listenerLayout?: ListenerLayout;
  /** Called when the protected ports changed: routes must be judged again. */
  onProtectedPortsChange: () => void;
}): LocalEnvoyFleet {
  const staticCount = o.protectedPorts.length;
  let fleet: LocalEnvoyFleet | undefined = undefined;
  fleet = new LocalEnvoyFleet({
    source: o.source,
    stateDir: o.options.stateDir,
    binary: o.options.binary,
    command: {
      drainTimeS: Math.ceil(o.options.drainMs / 1000),
      concurrency: o.options.concurrency,
      logLevel: 'info',
    },
    connection: {
      xdsAddress: localXdsAddress(o.xdsAddress, o.xdsPort),
      ...(o.certificates ? { certificates: o.certificates } : {}),
      ...(o.listenerLayout ? { listenerLayout: o.listenerLayout } : {}),
    },
    drainMs: o.options.drainMs,
    logger: o.logger,
    onRestart: (gateway) => o.metrics.localEnvoyRestarts.inc({ gateway }),
    onAdminPort: (port) => {
      const ports = [...new Set([...(fleet?.adminPorts() ?? []), port])].sort((a, b) => a - b);
      if (ports.join() === o.protectedPorts.slice(staticCount).join()) return;
      o.protectedPorts.splice(staticCount, Infinity, ...ports);
      o.onProtectedPortsChange();
    },
  });
  o.metrics.localEnvoyCount = () => fleet?.fleets().length ?? 0;
  fleet.start();
  return fleet;
}
