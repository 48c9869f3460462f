import { configDump, renderConfigDump, typeUrlOf } from '../xds/csds-view';
import { UsageError, defineCommand, parseCommand } from './args';
import { formatOutput, outputOption } from './output';
import { XDS_CLIENT_OPTIONS, fetchClientStatus } from './xds-client';

/**
 * `convoy config-dump`: what one connected Envoy received from Convoy, per resource with its
 * version and status, decoded to JSON, read from Convoy's Client Status Discovery Service
 * (docs/operations.md §16). Private keys and other secrets are redacted (Convoy already redacts
 * them before they leave; this redacts again in case the server is not Convoy).
 */

export const configDumpSpec = defineCommand({
  name: 'config-dump',
  summary: 'show what one connected Envoy received (decoded, secrets redacted), with versions and status',
  options: {
    ...XDS_CLIENT_OPTIONS,
    node: { type: 'string', valueName: 'ID', description: "The Envoy's node.id.", required: true },
    type: {
      type: 'string',
      valueName: 'TYPE',
      description:
        'Only this type: CDS, EDS, LDS, RDS, SDS (or clusters, endpoints, listeners, routes, secrets, or a type URL).',
    },
    output: outputOption('json'),
  },
  details: `Exit status: 0 with the dump, 1 when Convoy could not be asked or no Envoy with that node id is
connected, 2 for a bad flag.

Examples:
  convoy config-dump --node envoy-1
  convoy config-dump --node envoy-1 --type LDS -o yaml
  convoy config-dump --node envoy-1 -o table`,
});

export async function configDumpCommand(argv: string[]): Promise<void> {
  const parsed = parseCommand(configDumpSpec, argv);
  if (!parsed) return;
  const v = parsed.values;
  const typeUrl = v.type !== undefined ? typeUrlOf(v.type) : undefined;
  if (v.type !== undefined && typeUrl === undefined)
    throw new UsageError(
      `--type must be CDS, EDS, LDS, RDS or SDS (or a type URL), got ${JSON.stringify(v.type)}`,
      'config-dump',
    );
  const configs = await fetchClientStatus(v, { nodeId: v.node, excludeContents: false }, 'config-dump');
  if (configs.length === 0) throw new Error(`no Envoy with node id ${JSON.stringify(v.node)} is connected`);
  const out = configs.map((c) => ({
    node: c.node?.id ?? '',
    gateway: c.node?.cluster ?? '',
    resources: configDump(c, typeUrl),
  }));
  const data = out.length === 1 ? out[0] : out;
  process.stdout.write(
    formatOutput(v.output, data, () =>
      out.map((o) => renderConfigDump(`${o.node} (Gateway ${o.gateway})`, o.resources)).join('\n'),
    ),
  );
}
