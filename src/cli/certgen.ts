import * as path from 'node:path';
import { CertificateDirectory, defaultCertsDir } from '../pki/certificate-directory';
import type { EnsureResult } from '../pki/certificate-directory';
import { parseDuration } from '../util/duration';
import { UsageError, defineCommand, parseCommand } from './args';
import { formatOutput, outputOption } from './output';

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
    output: outputOption('table'),
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

Exit status: 0 when every certificate is current or was written, 1 when the folder cannot be used,
2 for a bad flag.

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
  const results: { subject: string; result: EnsureResult }[] = [];
  const client = { validityMs: clientValidityMs, forceValidity: clientValidityMs !== undefined };
  results.push({
    subject: 'server',
    result: await certs.ensureServer(v['server-name'], {
      validityMs: serverValidityMs,
      forceValidity: serverValidityMs !== undefined,
    }),
  });
  if (v.operator) results.push({ subject: 'operator', result: await certs.ensureOperator(client) });
  for (const g of v.gateway)
    results.push({ subject: `gateway ${g}`, result: await certs.ensureGateway(g, client) });
  const data = {
    ca: { action: created ? 'created' : 'current', dir: path.dirname(certs.caCertFile) },
    certificates: results.map(({ subject, result: r }) => ({
      subject,
      action: r.action,
      ...(r.reason ? { reason: r.reason } : {}),
      notAfter: r.info.notAfter.toISOString(),
      dir: r.files.dir,
    })),
  };
  process.stdout.write(
    formatOutput(
      v.output,
      data,
      () =>
        `ca: ${data.ca.action} (${data.ca.dir})\n` +
        results.map(({ subject, result }) => `${line(subject, result)}\n`).join(''),
    ),
  );
}
