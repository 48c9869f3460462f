/**
 * Convoy's xDS CA in Kubernetes mode (docs/security.md §2, docs/architecture.md §13): one CA shared
 * by every replica, kept in a Secret in Convoy's namespace and created when missing. Each replica
 * copies it into its certificate folder before serving, so the serving certificate and every
 * fleet's client certificate come from the same CA whichever replica issued them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { KubeClient } from '../../kubernetes/client';
import { statusCodeOf } from '../../kubernetes/client';
import type { Logger } from '../../observability/logger';
import type { CertificateDirectory } from '../../pki/certificate-directory';
import { writeFileAtomic } from '../../pki/certificate-directory';
import type { FleetCertificateSource } from './provisioner';

const CA_CERT_KEY = 'ca.crt';
const CA_KEY_KEY = 'ca.key';

interface SecretShape {
  data?: Record<string, string>;
}

function secretPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`;
}

/**
 * Makes `certs` hold the CA of Secret `namespace/name`, creating the Secret from the folder's CA
 * (made first if missing) when it does not exist. Two replicas racing to create it both end up
 * with the one the API server accepted (a create that conflicts reads the winner's).
 */
export async function syncXdsCaWithSecret(
  client: KubeClient,
  certs: CertificateDirectory,
  namespace: string,
  name: string,
  log: Logger,
): Promise<void> {
  const read = async (): Promise<SecretShape | undefined> => {
    try {
      return await client.request<SecretShape>('GET', secretPath(namespace, name));
    } catch (err) {
      if (statusCodeOf(err) === 404) return undefined;
      throw err;
    }
  };
  let secret = await read();
  if (!secret) {
    await certs.ensureCa({ create: true });
    const body = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace, labels: { 'app.kubernetes.io/name': 'convoy' } },
      type: 'Opaque',
      data: {
        [CA_CERT_KEY]: fs.readFileSync(certs.caCertFile).toString('base64'),
        [CA_KEY_KEY]: fs.readFileSync(certs.caKeyFile).toString('base64'),
      },
    };
    try {
      await client.request('POST', `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`, { body });
      log.info({ secret: `${namespace}/${name}` }, 'created the xDS CA Secret');
      return;
    } catch (err) {
      if (statusCodeOf(err) !== 409) throw err;
      secret = await read();
    }
  }
  const cert = secret?.data?.[CA_CERT_KEY];
  const key = secret?.data?.[CA_KEY_KEY];
  if (!cert || !key) throw new Error(`Secret ${namespace}/${name} lacks ${CA_CERT_KEY} or ${CA_KEY_KEY}`);
  const certPem = Buffer.from(cert, 'base64').toString('utf8');
  const keyPem = Buffer.from(key, 'base64').toString('utf8');
  const current = fs.existsSync(certs.caCertFile) ? fs.readFileSync(certs.caCertFile, 'utf8') : '';
  if (current === certPem) return;
  fs.mkdirSync(path.dirname(certs.caKeyFile), { recursive: true, mode: 0o700 });
  writeFileAtomic(certs.caKeyFile, keyPem, 0o600);
  writeFileAtomic(certs.caCertFile, certPem, 0o644);
  log.info({ secret: `${namespace}/${name}` }, 'using the xDS CA of the Secret');
}

/**
 * The fleet certificate source of a certificate folder: each fleet's client certificate
 * (spiffe://convoy/gateway/NS/NAME), issued when missing and renewed when due, with the CA.
 */
export function certificateDirectorySource(certs: CertificateDirectory): FleetCertificateSource {
  return async (fleet) => {
    const r = await certs.ensureGateway(fleet);
    return {
      certPem: fs.readFileSync(r.files.certFile, 'utf8'),
      keyPem: fs.readFileSync(r.files.keyFile, 'utf8'),
      caPem: fs.readFileSync(r.files.caFile, 'utf8'),
    };
  };
}
