/**
 * The bench fleet's xDS identity: a CA and the fleet's client certificate in a certificate folder
 * (as `convoy certgen` would have made them before a start), and the same as PEM text for the
 * simulated Envoys.
 */
import * as fs from 'node:fs';
import { CertificateDirectory } from '../src/pki/certificate-directory';
import type { LeafFiles } from '../src/pki/certificate-directory';
import type { SimTls } from './sim-envoy';
import { FLEET } from './world';

/** The fleet certificate's files (for a real Envoy's bootstrap) and its PEM text (for the simulated ones). */
export interface XdsIdentity {
  files: LeafFiles;
  simTls: SimTls;
}

/**
 * Makes (or reuses) the CA and the bench fleet's client certificate in `certsDir`, which Convoy
 * is then started with as its `--xds-certs-dir`, so both sides trust the same CA.
 */
export async function benchXdsIdentity(certsDir: string): Promise<XdsIdentity> {
  const certs = new CertificateDirectory(certsDir);
  await certs.ensureCa({ create: true });
  const { files } = await certs.ensureGateway(FLEET);
  const simTls: SimTls = {
    ca: fs.readFileSync(files.caFile, 'utf8'),
    cert: fs.readFileSync(files.certFile, 'utf8'),
    key: fs.readFileSync(files.keyFile, 'utf8'),
  };
  return { files, simTls };
}
