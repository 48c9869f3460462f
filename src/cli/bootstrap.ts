import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_ADMIN_ADDRESS, renderBootstrapYaml } from '../envoy/bootstrap';
import type { BootstrapOptions } from '../envoy/bootstrap';
import { UsageError, defineCommand, parseCommand } from './args';
import type { ParsedOptions } from './args';

export const bootstrapSpec = defineCommand({
  name: 'bootstrap',
  summary: 'write an Envoy bootstrap that connects one Envoy of a Gateway fleet to Convoy',
  options: {
    'xds-address': {
      type: 'string',
      valueName: 'HOST:PORT',
      description: "Convoy's xDS address (IPv6 as [ADDR]:PORT).",
      required: true,
    },
    gateway: {
      type: 'string',
      valueName: 'NAMESPACE/NAME',
      description: 'The Gateway this Envoy serves; becomes node.cluster.',
      required: true,
    },
    'node-id': {
      type: 'string',
      valueName: 'ID',
      description:
        "node.id, unique per Envoy. Default: this machine's hostname (the pod name in Kubernetes).",
    },
    sotw: { type: 'boolean', description: 'Use state-of-the-world ADS instead of delta ADS.' },
    'admin-address': {
      type: 'string',
      valueName: 'HOST:PORT',
      description: "Envoy's admin listener; keep it on loopback.",
      default: DEFAULT_ADMIN_ADDRESS,
    },
    out: { type: 'string', short: 'o', valueName: 'FILE', description: 'Write to FILE instead of stdout.' },
    'xds-tls-cert': {
      type: 'string',
      valueName: 'FILE',
      description: 'Client certificate (PEM) for mTLS to Convoy.',
    },
    'xds-tls-key': {
      type: 'string',
      valueName: 'FILE',
      description: 'Private key (PEM) for --xds-tls-cert.',
    },
    'xds-tls-ca': {
      type: 'string',
      valueName: 'FILE',
      description: "CA bundle (PEM) that signed Convoy's certificate.",
    },
    'xds-tls-server-name': {
      type: 'string',
      valueName: 'NAME',
      description: "Name Convoy's certificate must carry (and SNI). Default: the host of --xds-address.",
    },
  },
  details: `Examples:
  convoy bootstrap --xds-address convoy.convoy-system:18000 --gateway default/web --out /etc/envoy/bootstrap.yaml
  envoy -c /etc/envoy/bootstrap.yaml`,
});

/** Turns parsed flags into BootstrapOptions; exported for tests. */
export function bootstrapOptionsFromFlags(v: ParsedOptions<typeof bootstrapSpec.options>): BootstrapOptions {
  const tlsFlags = [v['xds-tls-cert'], v['xds-tls-key'], v['xds-tls-ca']];
  const given = tlsFlags.filter((f) => f !== undefined).length;
  if (given !== 0 && given !== 3) {
    throw new UsageError(
      '--xds-tls-cert, --xds-tls-key and --xds-tls-ca must be given together',
      'bootstrap',
    );
  }
  if (v['xds-tls-server-name'] !== undefined && given === 0) {
    throw new UsageError('--xds-tls-server-name needs the --xds-tls-* flags', 'bootstrap');
  }
  const options: BootstrapOptions = {
    xdsAddress: v['xds-address'],
    gateway: v.gateway,
    sotw: v.sotw,
    adminAddress: v['admin-address'],
  };
  if (v['node-id'] !== undefined) options.nodeId = v['node-id'];
  if (given === 3) {
    // Envoy resolves relative file names against its own working directory; pin them now.
    options.tls = {
      certFile: path.resolve(v['xds-tls-cert'] as string),
      keyFile: path.resolve(v['xds-tls-key'] as string),
      caFile: path.resolve(v['xds-tls-ca'] as string),
    };
    if (v['xds-tls-server-name'] !== undefined) options.tls.serverName = v['xds-tls-server-name'];
  }
  return options;
}

export async function bootstrapCommand(argv: string[]): Promise<void> {
  const parsed = parseCommand(bootstrapSpec, argv);
  if (!parsed) return;
  const options = bootstrapOptionsFromFlags(parsed.values);
  let yaml: string;
  try {
    yaml = renderBootstrapYaml(options);
  } catch (err) {
    throw new UsageError((err as Error).message, 'bootstrap');
  }
  const out = parsed.values.out;
  if (out === undefined || out === '-') {
    process.stdout.write(yaml);
    return;
  }
  // Write then rename so an Envoy (or a watcher) never reads a half-written file.
  const tmp = `${out}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, yaml, { mode: 0o644 });
  fs.renameSync(tmp, out);
  process.stderr.write(`wrote ${out}\n`);
}
