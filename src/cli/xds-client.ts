import * as fs from 'node:fs';
import * as net from 'node:net';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { encodeMessage, messageType } from '../envoy/protos';
import { CertificateDirectory, defaultCertsDir } from '../pki/certificate-directory';
import { parseHostPort } from '../util/host-port';
import { UsageError } from './args';
import type { ClientConfigJson } from '../xds/csds-view';

/**
 * A client of Convoy's Client Status Discovery Service (docs/xds.md §15) for `convoy
 * proxy-status` and `convoy config-dump`: connects to the xDS address with the operator's client
 * certificate (docs/security.md §2.6), by default from Convoy's certificate folder, issuing it
 * there first when the folder holds the CA key.
 */

/** The connection flags both commands share. */
export const XDS_CLIENT_OPTIONS = {
  'xds-address': {
    type: 'string',
    valueName: 'HOST:PORT',
    description: "Convoy's xDS address.",
    default: '127.0.0.1:18000',
  },
  'certs-dir': {
    type: 'string',
    valueName: 'DIR',
    description: `Convoy's xDS certificate folder: the operator certificate is DIR/operator, issued there when DIR has the CA key (convoy certgen --operator). Default: ${defaultCertsDir()}.`,
  },
  'xds-tls-cert': {
    type: 'string',
    valueName: 'FILE',
    description: 'Operator client certificate (PEM) instead of --certs-dir.',
  },
  'xds-tls-key': { type: 'string', valueName: 'FILE', description: 'Private key (PEM) of --xds-tls-cert.' },
  'xds-tls-ca': {
    type: 'string',
    valueName: 'FILE',
    description: "CA bundle (PEM) that signed Convoy's certificate.",
  },
  'xds-tls-server-name': {
    type: 'string',
    valueName: 'NAME',
    description: "Name Convoy's certificate must carry. Default: the host of --xds-address.",
  },
  'insecure-plaintext-xds': {
    type: 'boolean',
    description: 'Connect without TLS, to a Convoy started with the same flag.',
  },
} as const;

export interface XdsClientFlags {
  'xds-address': string;
  'certs-dir'?: string;
  'xds-tls-cert'?: string;
  'xds-tls-key'?: string;
  'xds-tls-ca'?: string;
  'xds-tls-server-name'?: string;
  'insecure-plaintext-xds': boolean;
}

/** The channel credentials the flags ask for; throws UsageError on contradictory flags. */
async function credentials(
  v: XdsClientFlags,
  command: string,
  checkedName: string,
): Promise<grpc.ChannelCredentials> {
  const files = [v['xds-tls-cert'], v['xds-tls-key'], v['xds-tls-ca']];
  const given = files.filter((f) => f !== undefined).length;
  if (v['insecure-plaintext-xds']) {
    if (given > 0 || v['certs-dir'] !== undefined)
      throw new UsageError('--insecure-plaintext-xds excludes the TLS flags', command);
    return grpc.credentials.createInsecure();
  }
  if (given !== 0 && given !== 3)
    throw new UsageError('--xds-tls-cert, --xds-tls-key and --xds-tls-ca must be given together', command);
  let certFile: string, keyFile: string, caFile: string;
  if (given === 3) [certFile, keyFile, caFile] = files as [string, string, string];
  else {
    const dir = new CertificateDirectory(v['certs-dir'] ?? defaultCertsDir());
    if (dir.hasCaKey()) {
      await dir.ensureCa({ create: false });
      await dir.ensureOperator();
    }
    ({ certFile, keyFile, caFile } = dir.operatorFiles());
    if (!fs.existsSync(certFile))
      throw new Error(
        `no operator certificate in ${dir.root}/operator: run "convoy certgen --operator" where the CA key is, or pass --xds-tls-cert/--xds-tls-key/--xds-tls-ca`,
      );
  }
  return grpc.credentials.createSsl(
    fs.readFileSync(caFile),
    fs.readFileSync(keyFile),
    fs.readFileSync(certFile),
    { checkServerIdentity: (_host, cert) => tls.checkServerIdentity(checkedName, cert) },
  );
}

/** How long a client status request may take before the command gives up. */
const DEADLINE_MS = 30_000;

/**
 * Calls FetchClientStatus once and returns the decoded ClientConfigs. Errors name the address and,
 * for a refusal, what the server said.
 */
export async function fetchClientStatus(
  v: XdsClientFlags,
  query: { nodeId?: string; excludeContents: boolean },
  command: string,
): Promise<ClientConfigJson[]> {
  const hp = parseHostPort(v['xds-address'], '--xds-address');
  const checkedName = v['xds-tls-server-name'] ?? hp.host;
  const creds = await credentials(v, command, checkedName);
  const target = hp.host.includes(':') ? `[${hp.host}]:${hp.port}` : `${hp.host}:${hp.port}`;
  // TLS forbids an IP address as SNI; Convoy's certificate is checked against checkedName anyway.
  const sni = net.isIP(checkedName) !== 0 ? 'convoy-xds' : checkedName;
  const client = new grpc.Client(target, creds, {
    'grpc.ssl_target_name_override': sni,
    'grpc.max_receive_message_length': -1,
  });
  const request = encodeMessage('envoy.service.status.v3.ClientStatusRequest', {
    node_matchers: query.nodeId !== undefined ? [{ node_id: { exact: query.nodeId } }] : [],
    exclude_resource_contents: query.excludeContents,
  });
  try {
    const bytes = await new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest(
        '/envoy.service.status.v3.ClientStatusDiscoveryService/FetchClientStatus',
        (b: Buffer) => b,
        (b: Buffer) => b,
        request,
        new grpc.Metadata(),
        { deadline: Date.now() + DEADLINE_MS },
        (err, res) => (err ? reject(err) : resolve(res!)),
      ),
    );
    // Without `oneofs`: a dump shows the fields Envoy got, not protobufjs's oneof markers.
    const type = messageType('envoy.service.status.v3.ClientStatusResponse');
    const decoded = type.toObject(type.decode(bytes), {
      longs: String,
      enums: String,
      json: true,
    }) as { config?: ClientConfigJson[] };
    return decoded.config ?? [];
  } catch (err) {
    const e = err as grpc.ServiceError;
    if (typeof e.code === 'number')
      throw new Error(`client status from ${v['xds-address']}: ${grpc.status[e.code]}: ${e.details}`, {
        cause: err,
      });
    throw err;
  } finally {
    client.close();
  }
}
