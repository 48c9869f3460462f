import type { ListenerLayout } from '../../envoy/translate/sni-dispatch';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { renderBootstrapYaml, renderXdsSdsFiles } from '../../envoy/bootstrap';
import type { BootstrapOptions } from '../../envoy/bootstrap';
import type { CertificateDirectory } from '../../pki/certificate-directory';
import { writeFileAtomic } from '../../pki/certificate-directory';
import { envoyFiles } from './envoy-command';
import type { LocalEnvoySpec } from './desired';

/**
 * Writes what one managed Envoy starts from (docs/operations.md §14): the bootstrap, made by the
 * same code as `convoy bootstrap` (src/envoy/bootstrap.ts), and with mTLS the two SDS files and a
 * client certificate naming its Gateway from Convoy's own CA. The certificate stays in the CA
 * folder (DIR/gateways/NS/NAME), where Convoy's renewal rewrites it; the SDS files watch that
 * folder, so Envoy picks a renewed certificate up without a restart.
 */

export interface EnvoyConnection {
  /** Convoy's xDS address as a local Envoy dials it (a loopback address for a wildcard listen). */
  xdsAddress: string;
  /** Convoy's CA folder; absent means plaintext xDS (--insecure-plaintext-xds). */
  certificates?: CertificateDirectory;
  /** State-of-the-world ADS instead of delta. */
  sotw?: boolean;
  /** The listener layout Convoy serves (bootstrap.ts BootstrapOptions.listenerLayout). */
  listenerLayout?: ListenerLayout;
}

/** The bootstrap options of `spec`'s Envoy, with its admin listener on loopback port `adminPort`. */
export function localBootstrapOptions(
  spec: LocalEnvoySpec,
  adminPort: number,
  xdsAddress: string,
  sotw = false,
  listenerLayout?: ListenerLayout,
): BootstrapOptions {
  return {
    xdsAddress,
    gateway: spec.fleet,
    nodeId: spec.nodeId,
    adminAddress: `127.0.0.1:${adminPort}`,
    ...(sotw ? { sotw: true } : {}),
    ...(listenerLayout ? { listenerLayout } : {}),
  };
}

/**
 * Creates `spec.dir` (private to Convoy's user) and writes the bootstrap and, with mTLS, the SDS
 * files after issuing or renewing the Gateway's client certificate. Idempotent: rewriting the
 * same content is harmless, and files are replaced by rename so Envoy never reads half a file.
 */
export async function writeEnvoyFiles(
  spec: LocalEnvoySpec,
  adminPort: number,
  conn: EnvoyConnection,
): Promise<void> {
  fs.mkdirSync(spec.dir, { recursive: true, mode: 0o700 });
  const options = localBootstrapOptions(spec, adminPort, conn.xdsAddress, conn.sotw, conn.listenerLayout);
  if (conn.certificates) {
    const { files } = await conn.certificates.ensureGateway(spec.fleet);
    options.tls = { ...files, sdsDir: spec.dir };
    for (const [name, text] of Object.entries(renderXdsSdsFiles(options.tls))) {
      writeFileAtomic(path.join(spec.dir, name), text, 0o600);
    }
  }
  writeFileAtomic(envoyFiles(spec.dir).bootstrap, renderBootstrapYaml(options), 0o600);
}
