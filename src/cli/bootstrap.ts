import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  DEFAULT_ADMIN_ADDRESS,
  buildBootstrap,
  renderBootstrapYaml,
  renderXdsSdsFiles,
} from '../envoy/bootstrap';
import { CertificateDirectory, defaultCertsDir, writeFileAtomic } from '../pki/certificate-directory';
import { parseDuration } from '../util/duration';
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
    'listener-layout': {
      type: 'string',
      valueName: 'LAYOUT',
      choices: ['chains', 'sni-dispatch', 'auto'],
      description:
        'The --listener-layout of the Convoy this Envoy dials (docs/xds.md §16); sni-dispatch and auto need a runtime setting in the bootstrap.',
      default: 'chains',
    },
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
      description:
        'Client certificate (PEM) for mTLS to Convoy, as Envoy will see it (instead of --certs-dir).',
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
    'certs-dir': {
      type: 'string',
      valueName: 'DIR',
      description:
        "Convoy's xDS certificate folder (convoy certgen): the Gateway's client certificate is taken from " +
        'DIR/gateways/NS/NAME, issued or renewed there first when DIR has the CA key. ' +
        `Default: ${defaultCertsDir()} (the default of convoy serve) unless --xds-tls-* is given.`,
    },
    'client-validity': {
      type: 'string',
      valueName: 'DURATION',
      description: 'Lifetime of a client certificate issued from --certs-dir. Default: 7d.',
    },
    'config-dir': {
      type: 'string',
      valueName: 'DIR',
      description:
        'With mTLS, two SDS files are written beside --out; DIR is where Envoy will read them when it ' +
        'differs (e.g. a ConfigMap mounted at /etc/envoy). Default: the folder of --out.',
    },
    'insecure-plaintext-xds': {
      type: 'boolean',
      description:
        'Connect without TLS, for a Convoy started with the same flag (anyone reaching it reads every key).',
    },
    output: {
      type: 'string',
      valueName: 'FORMAT',
      description:
        'Format of the bootstrap (Envoy reads both; -o is --out). table is yaml: a bootstrap has no table form.',
      choices: ['yaml', 'json', 'table'],
      default: 'yaml',
    },
  },
  details: `Exit status: 0 when written, 1 when a certificate or file cannot be read or written, 2 for a bad flag.

Examples:
  convoy bootstrap --xds-address 127.0.0.1:18000 --gateway default/web --out envoy.yaml
      (client certificate from the default folder, as convoy serve uses it; envoy.yaml plus two SDS files)
  convoy bootstrap --xds-address convoy-xds.convoy-system.svc:18000 --gateway default/web \\
      --xds-tls-cert /etc/convoy-xds/tls.crt --xds-tls-key /etc/convoy-xds/tls.key \\
      --xds-tls-ca /etc/convoy-xds/ca.crt --out bootstrap.yaml --config-dir /etc/envoy
  envoy -c envoy.yaml`,
});

type Flags = ParsedOptions<typeof bootstrapSpec.options>;

/** How the bootstrap's Envoy authenticates to Convoy. */
export type XdsClientTlsChoice =
  | { mode: 'plaintext' }
  | { mode: 'files'; certFile: string; keyFile: string; caFile: string }
  | { mode: 'certs-dir'; dir: string };

/** Reads the TLS flags; refuses contradictory or incomplete sets. */
export function xdsClientTlsChoice(v: Flags): XdsClientTlsChoice {
  const tlsFlags = [v['xds-tls-cert'], v['xds-tls-key'], v['xds-tls-ca']];
  const given = tlsFlags.filter((f) => f !== undefined).length;
  if (given !== 0 && given !== 3) {
    throw new UsageError(
      '--xds-tls-cert, --xds-tls-key and --xds-tls-ca must be given together',
      'bootstrap',
    );
  }
  if (v['insecure-plaintext-xds']) {
    if (given > 0 || v['certs-dir'] !== undefined || v['xds-tls-server-name'] !== undefined) {
      throw new UsageError('--insecure-plaintext-xds excludes the TLS flags', 'bootstrap');
    }
    return { mode: 'plaintext' };
  }
  if (given === 3) {
    if (v['certs-dir'] !== undefined) throw new UsageError('--certs-dir excludes --xds-tls-*', 'bootstrap');
    // Envoy resolves relative file names against its own working directory; pin them now.
    return {
      mode: 'files',
      certFile: path.resolve(v['xds-tls-cert'] as string),
      keyFile: path.resolve(v['xds-tls-key'] as string),
      caFile: path.resolve(v['xds-tls-ca'] as string),
    };
  }
  return { mode: 'certs-dir', dir: path.resolve(v['certs-dir'] ?? defaultCertsDir()) };
}

/**
 * Turns parsed flags into BootstrapOptions; exported for tests. `tls` is the resolved client
 * material (absent: plaintext) and `sdsDir` where Envoy reads the SDS files.
 */
export function bootstrapOptionsFromFlags(
  v: Flags,
  tls?: { certFile: string; keyFile: string; caFile: string; sdsDir: string; sdsPrefix?: string },
): BootstrapOptions {
  if (v['xds-tls-server-name'] !== undefined && !tls) {
    throw new UsageError('--xds-tls-server-name needs TLS', 'bootstrap');
  }
  const options: BootstrapOptions = {
    xdsAddress: v['xds-address'],
    gateway: v.gateway,
    sotw: v.sotw,
    adminAddress: v['admin-address'],
  };
  if (v['node-id'] !== undefined) options.nodeId = v['node-id'];
  if (v['listener-layout'] === 'sni-dispatch' || v['listener-layout'] === 'auto') {
    options.listenerLayout = v['listener-layout'];
  }
  if (tls) {
    options.tls = { ...tls };
    if (v['xds-tls-server-name'] !== undefined) options.tls.serverName = v['xds-tls-server-name'];
  }
  return options;
}

/**
 * The client certificate files of the Gateway in `dir`: issued or renewed from the CA there
 * when it has the key (creating the CA if the folder is new), else used as they are.
 */
async function gatewayCertificate(
  dir: string,
  gateway: string,
  validity: string | undefined,
): Promise<{ certFile: string; keyFile: string; caFile: string }> {
  const certs = new CertificateDirectory(dir);
  let files;
  try {
    files = certs.gatewayFiles(gateway);
  } catch (err) {
    throw new UsageError((err as Error).message, 'bootstrap');
  }
  const hasCa = fs.existsSync(certs.caCertFile) || certs.hasCaKey();
  if (hasCa && !certs.hasCaKey()) {
    if (!fs.existsSync(files.certFile)) {
      throw new Error(`${files.certFile} does not exist and ${dir} has no CA key to issue it`);
    }
    return files;
  }
  const { created } = await certs.ensureCa({ create: true });
  if (created) process.stderr.write(`created the xDS CA in ${path.dirname(certs.caCertFile)}\n`);
  const validityMs = validity === undefined ? undefined : parseDuration(validity, '--client-validity');
  const r = await certs.ensureGateway(gateway, { validityMs, forceValidity: validityMs !== undefined });
  if (r.action !== 'current') {
    process.stderr.write(
      `${r.action} the client certificate of ${gateway} (${r.reason}) in ${r.files.dir}\n`,
    );
  }
  return r.files;
}

/** SDS file prefix from the bootstrap file name: envoy.yaml → "envoy.". */
function sdsPrefixOf(out: string): string {
  return `${path.basename(out).replace(/\.(ya?ml|json)$/i, '')}.`;
}

export async function bootstrapCommand(argv: string[]): Promise<void> {
  const parsed = parseCommand(bootstrapSpec, argv);
  if (!parsed) return;
  const v = parsed.values;
  const choice = xdsClientTlsChoice(v);
  const out = v.out === '-' ? undefined : v.out;
  if (choice.mode !== 'plaintext' && out === undefined) {
    throw new UsageError(
      'with mTLS the bootstrap comes with two SDS files: give --out FILE (they are written beside it)',
      'bootstrap',
    );
  }
  let tls: Parameters<typeof bootstrapOptionsFromFlags>[1];
  if (choice.mode !== 'plaintext') {
    const files =
      choice.mode === 'files'
        ? choice
        : await gatewayCertificate(choice.dir, v.gateway, v['client-validity']);
    const sdsDir = path.resolve(v['config-dir'] ?? path.dirname(path.resolve(out!)));
    tls = { ...files, sdsDir, sdsPrefix: sdsPrefixOf(out!) };
  }
  const options = bootstrapOptionsFromFlags(v, tls);
  let yaml: string;
  try {
    yaml =
      v.output === 'json'
        ? JSON.stringify(buildBootstrap(options), null, 2) + '\n'
        : renderBootstrapYaml(options);
  } catch (err) {
    throw new UsageError((err as Error).message, 'bootstrap');
  }
  if (out === undefined) {
    process.stdout.write(yaml);
    return;
  }
  // Written then renamed so an Envoy (or a watcher) never reads a half-written file.
  const outDir = path.dirname(path.resolve(out));
  if (options.tls) {
    for (const [name, text] of Object.entries(renderXdsSdsFiles(options.tls))) {
      writeFileAtomic(path.join(outDir, name), text, 0o644);
    }
  }
  writeFileAtomic(path.resolve(out), yaml, 0o644);
  process.stderr.write(`wrote ${out}${options.tls ? ' and its two SDS files' : ''}\n`);
}
