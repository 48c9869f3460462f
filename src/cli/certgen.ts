import * as path from 'node:path';
import { CertificateDirectory, defaultCertsDir } from '../pki/certificate-directory';
import type { EnsureResult } from '../pki/certificate-directory';
import { parseDuration } from '../util/duration';
import { UsageError, defineCommand, parseCommand } from './args';

export const certgenSpec = defineCommand({
  name: 'certgen',
  summary: "create Convoy's xDS CA, its serving certificate and Gateways' client certificates",
  options: {
    'certs-dir': {
      type: 'string',
      valueName: 'DIR',
      description: `Folder to write (DIR/ca, DIR/server, DIR/gateways/NS/NAME). Default: ${defaultCertsDir()}.`,
    },
    gateway: {
      type: 'string',
      valueName: 'NAMESPACE/NAME',
      multiple: true,
      description: 'Issue (or renew) the client certificate for the Envoys of this Gateway. Repeatable.',
    },
    operator: {
      type: 'boolean',
      description:
        "Issue (or renew) the operator client certificate in DIR/operator: it reads every fleet's client status (convoy proxy-status, convoy config-dump) and receives no fleet.",
    },
    'server-name': {
      type: 'string',
      valueName: 'NAME',
      multiple: true,
      description:
        'DNS name or IP Envoys dial Convoy at (e.g. convoy-xds.convoy-system.svc); repeatable. localhost, 127.0.0.1 and ::1 are always included.',
    },
    'server-validity': {
      type: 'string',
      valueName: 'DURATION',
      description: 'Lifetime of the serving certificate (reissued when it differs). Default: 90d.',
    },
    'client-validity': {
      type: 'string',
      valueName: 'DURATION',
      description: 'Lifetime of client certificates (reissued when it differs). Default: 7d.',
    },
  },
  details: `Idempotent: a certificate is written only when it is missing, not from this CA, lacks a
name, has a different lifetime than asked, or has used two thirds of its lifetime; run it again
(e.g. from a CronJob) to renew. Each leaf folder holds tls.crt, tls.key and ca.crt, the shape of a
Kubernetes TLS Secret. The CA key stays in DIR/ca: never mount that folder into an Envoy.

Examples:
  convoy certgen --gateway default/demo
  convoy certgen --operator
  convoy certgen --certs-dir ./xds-pki --server-name convoy-xds.convoy-system.svc \\
      --gateway convoy-system/convoy-gateway`,
});

function line(subject: string, r: EnsureResult): string {
  const until = r.info.notAfter.toISOString();
  return r.action === 'current'
    ? `${subject}: current, valid until ${until} (${r.files.dir})`
    : `${subject}: ${r.action} (${r.reason}), valid until ${until} (${r.files.dir})`;
}

export async function certgenCommand(argv: string[]): Promise<void> {
  const parsed = parseCommand(certgenSpec, argv);
  if (!parsed) return;
  const v = parsed.values;
  let serverValidityMs: number | undefined;
  let clientValidityMs: number | undefined;
  try {
    if (v['server-validity'] !== undefined)
      serverValidityMs = parseDuration(v['server-validity'], '--server-validity');
    if (v['client-validity'] !== undefined)
      clientValidityMs = parseDuration(v['client-validity'], '--client-validity');
  } catch (err) {
    throw new UsageError((err as Error).message, 'certgen');
  }
  const certs = new CertificateDirectory(path.resolve(v['certs-dir'] ?? defaultCertsDir()));
  for (const g of v.gateway) {
    try {
      certs.gatewayFiles(g);
    } catch (err) {
      throw new UsageError((err as Error).message, 'certgen');
    }
  }
  const { created } = await certs.ensureCa({ create: true });
  process.stdout.write(`ca: ${created ? 'created' : 'current'} (${path.dirname(certs.caCertFile)})\n`);
  const server = await certs.ensureServer(v['server-name'], {
    validityMs: serverValidityMs,
    forceValidity: serverValidityMs !== undefined,
  });
  process.stdout.write(`${line('server', server)}\n`);
  if (v.operator) {
    const r = await certs.ensureOperator({
      validityMs: clientValidityMs,
      forceValidity: clientValidityMs !== undefined,
    });
    process.stdout.write(`${line('operator', r)}\n`);
  }
  for (const g of v.gateway) {
    const r = await certs.ensureGateway(g, {
      validityMs: clientValidityMs,
      forceValidity: clientValidityMs !== undefined,
    });
    process.stdout.write(`${line(`gateway ${g}`, r)}\n`);
  }
}
