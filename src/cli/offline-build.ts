import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Controller } from '../controller/controller';
import { DEFAULT_ADMIN_ADDRESS as ENVOY_DEFAULT_ADMIN_ADDRESS } from '../envoy/bootstrap';
import { buildGateways } from '../gateway/build';
import type { BuildOptions } from '../gateway/resolved';
import type { BuildState } from '../gateway/incremental/state';
import { createLogger } from '../observability/logger';
import { ConvoyMetrics } from '../observability/metrics';
import { FileProvider } from '../providers/files/provider';
import type { FileProblem } from '../providers/files/provider';
import type { ObjectStatus } from '../status/types';
import { StatusView } from '../status/view';
import { ObjectStore } from '../store/store';
import { parseHostPort } from '../util/host-port';
import { XdsCache } from '../xds/cache';
import type { FleetSnapshot } from '../xds/snapshot';
import { UsageError } from './args';
import { parsePortPool } from '../gateway/dynamic-ports';
import type { ParsedOptions } from './args';
import { DEFAULT_CONTROLLER_NAME } from './serve';

/**
 * One build of a directory (or of stdin) without a server or an Envoy, for `convoy translate` and
 * `convoy describe`: the objects are read by the file provider (parsing and validation as in
 * `convoy serve --from-dir`), built by the Controller into an xDS cache, exactly as serve
 * publishes them, and the statuses collected. The build-affecting flags are serve's.
 */

/** The flags of serve that change what is built, shared by translate and describe. */
export const BUILD_OPTIONS = {
  'controller-name': {
    type: 'string',
    valueName: 'NAME',
    description: 'GatewayClass controllerName Convoy owns.',
    default: DEFAULT_CONTROLLER_NAME,
  },
  'envoy-bind-address': {
    type: 'string',
    valueName: 'ADDR',
    description: 'Address Envoy listeners bind to.',
    default: '0.0.0.0',
  },
  'gateway-address': {
    type: 'string',
    valueName: 'ADDR',
    multiple: true,
    description: "Report ADDR in Gateways' status.addresses.",
  },
  'enable-external-name-services': { type: 'boolean', description: 'Allow routes to ExternalName Services.' },
  'allow-loopback-endpoints': { type: 'boolean', description: 'Allow loopback endpoint addresses.' },
  'allow-link-local-endpoints': { type: 'boolean', description: 'Allow link-local endpoint addresses.' },
  'enable-xlistenerset': { type: 'boolean', description: 'Read legacy XListenerSets (as serve does).' },
  'dynamic-port-range': {
    type: 'string',
    valueName: 'FIRST-LAST',
    description: "serve's --dynamic-port-range: ports for XListenerSet listeners without one.",
  },
  'xds-address': {
    type: 'string',
    valueName: 'HOST:PORT',
    description: "serve's --xds-address: its port stays refused as a loopback endpoint, as serve refuses it.",
    default: '127.0.0.1:18000',
  },
  'admin-address': {
    type: 'string',
    valueName: 'HOST:PORT',
    description: "serve's --admin-address, refused as a loopback endpoint port likewise.",
    default: '127.0.0.1:9090',
  },
} as const;

export type BuildFlags = ParsedOptions<typeof BUILD_OPTIONS>;

export interface OfflineBuild {
  /** Each fleet's snapshot, as serve would publish it, by fleet (Gateway `namespace/name`). */
  fleets: Map<string, FleetSnapshot>;
  /** Every status Convoy would write. */
  statuses: ObjectStatus[];
  /** Files and objects the file provider refused. */
  problems: FileProblem[];
  /** The resolved Gateways, routes and attachment of the same build (for describe). */
  state: BuildState;
}

/** Reads all of stdin. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Builds `source` (a directory, or `-` for YAML/JSON documents on stdin, read as one file) once.
 * Throws for an unreadable source; problems with single files or objects are in the result.
 */
export async function offlineBuild(source: string, v: BuildFlags, command: string): Promise<OfflineBuild> {
  const ports: number[] = [];
  for (const flag of ['xds-address', 'admin-address'] as const) {
    try {
      ports.push(parseHostPort(v[flag], `--${flag}`).port);
    } catch (err) {
      throw new UsageError((err as Error).message, command);
    }
  }
  ports.push(parseHostPort(ENVOY_DEFAULT_ADMIN_ADDRESS).port);
  let dir = source;
  let tmp: string | undefined;
  if (source === '-') {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-translate-'));
    dir = tmp;
    fs.writeFileSync(path.join(tmp, 'stdin.yaml'), await readStdin());
  }
  const logger = createLogger({
    level: process.env.CONVOY_LOG_LEVEL ?? 'error',
    pretty: false,
    destination: { write: (line: string) => process.stderr.write(line) },
  });
  const metrics = new ConvoyMetrics();
  const store = new ObjectStore();
  const files = new FileProvider({
    dir,
    store,
    logger,
    metrics,
    settleMs: 0,
    pollIntervalMs: 0,
    parseWorkers: 1,
  });
  try {
    await files.start();
  } finally {
    await files.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
  const cache = new XdsCache({ logger, metrics });
  const view = new StatusView();
  const options: Omit<BuildOptions, 'now'> = {
    controllerName: v['controller-name'],
    externalNameServices: v['enable-external-name-services'],
    endpoints: {
      allowLoopback: v['allow-loopback-endpoints'],
      allowLinkLocal: v['allow-link-local-endpoints'],
      protectedPorts: ports,
    },
    gatewayAddresses: v['gateway-address'].length > 0 ? { static: v['gateway-address'] } : undefined,
    ...(v['enable-xlistenerset'] ? { xListenerSets: true } : {}),
    ...(v['dynamic-port-range'] !== undefined
      ? { dynamicPorts: checkedPool(v['dynamic-port-range'], command) }
      : {}),
  };
  const controller = new Controller({
    store,
    cache,
    statusSinks: [view],
    logger,
    metrics,
    controllerName: options.controllerName,
    externalNameServices: options.externalNameServices,
    endpoints: options.endpoints,
    gatewayAddresses: options.gatewayAddresses,
    ...(options.xListenerSets ? { xListenerSets: true } : {}),
    ...(options.dynamicPorts ? { dynamicPorts: options.dynamicPorts } : {}),
    translate: { bindAddress: v['envoy-bind-address'] },
  });
  try {
    await controller.build();
    await controller.settle();
  } finally {
    controller.stop();
  }
  if (!controller.isReady()) throw new Error('the build failed (CONVOY_LOG_LEVEL=error shows why)');
  const fleets = new Map<string, FleetSnapshot>();
  for (const fleet of [...cache.fleets()].sort()) fleets.set(fleet, cache.snapshot(fleet)!);
  const { state } = buildGateways(store, { ...options, now: new Date().toISOString() });
  return { fleets, statuses: view.list(), problems: files.problems(), state };
}

/** Parses --dynamic-port-range as serve does, turning a bad value into a UsageError of `command`. */
function checkedPool(text: string, command: string): { first: number; last: number } {
  try {
    return parsePortPool(text);
  } catch (err) {
    throw new UsageError(`--dynamic-port-range: ${(err as Error).message}`, command);
  }
}
