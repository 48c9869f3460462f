import * as fs from 'node:fs';
import * as path from 'node:path';
import { messageType } from '../envoy/protos';
import { TypeUrl, messageNameOf } from '../envoy/resources';
import type { EnvoyResources } from '../envoy/resources';
import { envoyValidate, staticBootstrap } from '../envoy/validate';
import { redactSecrets } from '../xds/redact';
import type { FleetSnapshot } from '../xds/snapshot';
import { renderTable } from '../xds/sync-view';
import { UsageError, defineCommand, parseCommand } from './args';
import { BUILD_OPTIONS, offlineBuild } from './offline-build';
import type { OfflineBuild } from './offline-build';
import { formatOutput, outputOption } from './output';
import { hasUnhealthyCondition, renderProblems, renderStatusTable } from './status';

/**
 * `convoy translate DIR|-`: Gateway API objects in, the Envoy resources Convoy would serve each
 * Gateway's fleet and the status of every object out, with no server and no Envoy
 * (docs/operations.md §17). The build is serve's own (offline-build.ts), so each resource's
 * version, the hash of its bytes, is the version `convoy serve --from-dir` publishes.
 */

/** Exit status: the input had problems (refused files or objects, unhealthy conditions). */
export const EXIT_INPUT_PROBLEMS = 3;
/** Exit status: `--validate` and Envoy rejected a fleet's resources. */
export const EXIT_ENVOY_REJECTED = 4;

export const translateSpec = defineCommand({
  name: 'translate',
  summary: 'build Gateway API YAML (a directory or stdin) into Envoy resources and statuses, offline',
  positionals: 'DIR|-',
  options: {
    ...BUILD_OPTIONS,
    gateway: {
      type: 'string',
      valueName: 'NAMESPACE/NAME',
      description: 'Only the resources of this Gateway (statuses stay complete).',
    },
    validate: {
      type: 'boolean',
      description: 'Also check every fleet with `envoy --mode validate` (needs an Envoy binary).',
    },
    envoy: {
      type: 'string',
      valueName: 'PATH',
      description: 'The Envoy binary for --validate. Default: $CONVOY_ENVOY_BIN, else envoy on PATH.',
    },
    output: outputOption('yaml'),
  },
  details: `Reads DIR like "convoy serve --from-dir DIR" (or documents on stdin with -), builds once and prints
per Gateway the listeners, routes, clusters, endpoints and secrets (private keys redacted) with their
versions, then every object's status and the refused inputs. Nothing is served and nothing is written.

Exit status: 0 when everything was accepted; ${EXIT_INPUT_PROBLEMS} when a file or object was refused or a condition is
unhealthy (the output says which); ${EXIT_ENVOY_REJECTED} when --validate and Envoy rejected a fleet; 1 when DIR cannot
be read or the build failed; 2 for a bad flag.

Examples:
  convoy translate examples
  convoy translate examples -o json --gateway default/demo
  cat gateway.yaml routes.yaml | convoy translate - -o table
  convoy translate examples --validate --envoy .venv/bin/envoy`,
});

/** Where each type goes in the output, in push order without SDS first (as in EnvoyResources). */
const LISTS: readonly { key: keyof EnvoyResources; typeUrl: TypeUrl }[] = [
  { key: 'listeners', typeUrl: TypeUrl.Listener },
  { key: 'routes', typeUrl: TypeUrl.Route },
  { key: 'clusters', typeUrl: TypeUrl.Cluster },
  { key: 'endpoints', typeUrl: TypeUrl.Endpoint },
  { key: 'secrets', typeUrl: TypeUrl.Secret },
];

export interface TranslatedResource {
  name: string;
  /** Hash of the resource's bytes: the delta xDS version serve publishes for it. */
  version: string;
  resource: Record<string, unknown>;
}

export type TranslatedFleet = { gateway: string } & Record<keyof EnvoyResources, TranslatedResource[]>;

/** Decodes bytes to proto JSON (no oneof markers), as config-dump shows them. */
function decode(typeUrl: string, bytes: Buffer): Record<string, unknown> {
  const type = messageType(messageNameOf(typeUrl));
  return type.toObject(type.decode(bytes), { longs: String, enums: String, json: true }) as Record<
    string,
    unknown
  >;
}

/** One fleet's resources decoded; secrets redacted unless `secrets` is true (for --validate). */
export function translatedFleet(gateway: string, snap: FleetSnapshot, secrets = false): TranslatedFleet {
  const out = { gateway } as TranslatedFleet;
  for (const { key, typeUrl } of LISTS) {
    out[key] = snap.types[typeUrl].sorted.map((e) => {
      const resource = decode(typeUrl, e.bytes);
      return {
        name: e.name,
        version: e.version,
        resource: typeUrl === TypeUrl.Secret && !secrets ? redactSecrets(resource) : resource,
      };
    });
  }
  return out;
}

/** The Envoy binary --validate runs: the flag, $CONVOY_ENVOY_BIN, else `envoy` on PATH. */
function findEnvoy(flag: string | undefined): string {
  const explicit = flag ?? process.env.CONVOY_ENVOY_BIN;
  if (explicit !== undefined) {
    if (!fs.existsSync(explicit)) throw new Error(`--validate: no Envoy binary at ${explicit}`);
    return explicit;
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir || '.', 'envoy');
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error('--validate needs an Envoy binary: put envoy on PATH, or give --envoy PATH');
}

/** Runs `envoy --mode validate` on each fleet; returns one line per fleet and whether all passed. */
function validateFleets(build: OfflineBuild, bin: string, only: string | undefined) {
  const results: { gateway: string; accepted: boolean; output?: string }[] = [];
  for (const [gateway, snap] of build.fleets) {
    if (only !== undefined && gateway !== only) continue;
    const fleet = translatedFleet(gateway, snap, true);
    const resources = Object.fromEntries(
      LISTS.map(({ key }) => [key, fleet[key].map((r) => r.resource)]),
    ) as unknown as EnvoyResources;
    let run;
    try {
      run = envoyValidate(bin, staticBootstrap(resources), gateway);
    } catch (err) {
      run = { status: 1, output: (err as Error).message };
    }
    results.push({
      gateway,
      accepted: run.status === 0,
      ...(run.status === 0 ? {} : { output: run.output.trim() }),
    });
  }
  return results;
}

/** The table form: per Gateway, each type's resources with versions; then statuses and problems. */
function renderTranslation(
  fleets: TranslatedFleet[],
  build: OfflineBuild,
  validation: ReturnType<typeof validateFleets> | undefined,
): string {
  let text = '';
  for (const f of fleets) {
    const rows = LISTS.flatMap(({ key }) => f[key].map((r) => [key, r.name, r.version]));
    text +=
      `Gateway ${f.gateway}\n` +
      renderTable(['TYPE', 'NAME', 'VERSION'], rows).replace(/^(?=.)/gm, '  ') +
      '\n';
  }
  if (fleets.length === 0) text += 'No Gateway is served.\n\n';
  text += renderStatusTable(build.statuses) + renderProblems(build.problems);
  for (const v of validation ?? [])
    text += `\nenvoy --mode validate ${v.gateway}: ${v.accepted ? 'accepted' : `REJECTED\n${v.output}`}\n`;
  return text;
}

export async function translateCommand(argv: string[]): Promise<number> {
  const parsed = parseCommand(translateSpec, argv);
  if (!parsed) return 0;
  const v = parsed.values;
  if (parsed.positionals.length !== 1)
    throw new UsageError('give one directory, or - for standard input', 'translate');
  const bin = v.validate ? findEnvoy(v.envoy) : undefined;
  const build = await offlineBuild(parsed.positionals[0], v, 'translate');
  if (v.gateway !== undefined && !build.fleets.has(v.gateway))
    throw new Error(`no Gateway ${v.gateway} is served by this input`);
  const fleets = [...build.fleets]
    .filter(([gateway]) => v.gateway === undefined || gateway === v.gateway)
    .map(([gateway, snap]) => translatedFleet(gateway, snap));
  const validation = bin !== undefined ? validateFleets(build, bin, v.gateway) : undefined;
  const data = {
    fleets,
    statuses: build.statuses,
    problems: build.problems,
    ...(validation ? { validation } : {}),
  };
  process.stdout.write(formatOutput(v.output, data, () => renderTranslation(fleets, build, validation)));
  if (validation?.some((r) => !r.accepted)) return EXIT_ENVOY_REJECTED;
  if (build.problems.length > 0 || hasUnhealthyCondition(build.statuses)) return EXIT_INPUT_PROBLEMS;
  return 0;
}
