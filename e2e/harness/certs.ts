import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Test PKI with the openssl CLI: a CA, then server or client certificates it signs, written as
 * PEM files into a directory. Only for tests; keys are unencrypted.
 */

export interface CertFiles {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

export interface CaFiles extends CertFiles {
  dir: string;
  name: string;
}

function openssl(args: string[], cwd: string): void {
  const r = childProcess.spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (r.error) throw new Error(`openssl not runnable: ${r.error.message} (install the openssl package)`);
  if (r.status !== 0) throw new Error(`openssl ${args[0]} failed (${r.status}): ${r.stderr}`);
}

function read(certFile: string, keyFile: string): CertFiles {
  return {
    certFile,
    keyFile,
    cert: fs.readFileSync(certFile, 'utf8'),
    key: fs.readFileSync(keyFile, 'utf8'),
  };
}

/** A self-signed CA (EC P-256, 1 day). */
export function createCa(dir: string, name = 'convoy-test-ca'): CaFiles {
  fs.mkdirSync(dir, { recursive: true });
  const keyFile = path.join(dir, `${name}.key`);
  const certFile = path.join(dir, `${name}.crt`);
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', keyFile], dir);
  openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      keyFile,
      '-sha256',
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-out',
      certFile,
    ],
    dir,
  );
  return { ...read(certFile, keyFile), dir, name };
}

export interface IssueOptions {
  /** File name stem and CN. */
  name: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  /** URI SANs, e.g. Convoy's Gateway identity spiffe://convoy/gateway/NS/NAME. */
  uris?: string[];
  /** serverAuth (default), clientAuth, or both. */
  usage?: 'server' | 'client' | 'both';
}

/** A leaf certificate signed by `ca`, with the given SANs. */
export function issueCert(ca: CaFiles, opts: IssueOptions): CertFiles {
  const dir = ca.dir;
  const keyFile = path.join(dir, `${opts.name}.key`);
  const csrFile = path.join(dir, `${opts.name}.csr`);
  const certFile = path.join(dir, `${opts.name}.crt`);
  const extFile = path.join(dir, `${opts.name}.ext`);
  const sans = [
    ...(opts.dnsNames ?? []).map((d) => `DNS:${d}`),
    ...(opts.ipAddresses ?? []).map((i) => `IP:${i}`),
    ...(opts.uris ?? []).map((u) => `URI:${u}`),
  ];
  const eku = { server: 'serverAuth', client: 'clientAuth', both: 'serverAuth,clientAuth' }[
    opts.usage ?? 'server'
  ];
  fs.writeFileSync(
    extFile,
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      `extendedKeyUsage=${eku}`,
      ...(sans.length > 0 ? [`subjectAltName=${sans.join(',')}`] : []),
    ].join('\n') + '\n',
  );
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', keyFile], dir);
  openssl(['req', '-new', '-key', keyFile, '-subj', `/CN=${opts.name}`, '-out', csrFile], dir);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      csrFile,
      '-CA',
      ca.certFile,
      '-CAkey',
      ca.keyFile,
      '-CAcreateserial',
      '-days',
      '1',
      '-sha256',
      '-extfile',
      extFile,
      '-out',
      certFile,
    ],
    dir,
  );
  return read(certFile, keyFile);
}
