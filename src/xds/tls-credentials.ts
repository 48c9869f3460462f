import { X509Certificate, createPrivateKey } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../observability/logger';
import { pemCertificates } from '../pki/certificate-info';

/**
 * The ADS server's TLS credentials, replaceable while it runs: Convoy's serving certificate and
 * the CA bundle that client certificates must chain to are reloaded from their files when they
 * change (docs/security.md §2), so a rotation needs no restart. New connections use the new
 * material; open streams keep the session they have.
 */

export interface TlsMaterial {
  /** PEM certificate chain Convoy presents. */
  cert: Buffer;
  /** PEM private key of `cert`. */
  key: Buffer;
  /** PEM CA bundle client certificates must chain to; without it clients are not asked for one. */
  ca?: Buffer;
}

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  caFile: string;
}

/** gRPC server credentials whose certificate, key and client CA can be swapped at run time. */
export class ReloadableServerCredentials extends grpc.ServerCredentials {
  constructor(material: TlsMaterial) {
    super(
      {
        // Without a CA no client certificate is asked for; with one, a client without a valid
        // certificate fails the handshake and never reaches the ADS service.
        requestCert: material.ca !== undefined,
        rejectUnauthorized: material.ca !== undefined,
        minVersion: 'TLSv1.2',
      },
      contextOptions(material),
    );
  }

  /** Uses `material` for every connection from now on. */
  update(material: TlsMaterial): void {
    this.updateSecureContextOptions(contextOptions(material));
  }

  _equals(other: grpc.ServerCredentials): boolean {
    return this === other;
  }
}

function contextOptions(m: TlsMaterial): { cert: Buffer; key: Buffer; ca?: Buffer } {
  return { cert: m.cert, key: m.key, ...(m.ca ? { ca: m.ca } : {}) };
}

/**
 * Reads and checks TLS material: the certificate parses, its key matches, the CA bundle holds
 * at least one certificate. Throws a message naming the bad file, never its contents.
 */
export function loadTlsMaterial(files: TlsFiles): TlsMaterial {
  const cert = fs.readFileSync(files.certFile);
  const key = fs.readFileSync(files.keyFile);
  const ca = fs.readFileSync(files.caFile);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`${files.certFile}: not a PEM certificate (${(err as Error).message})`, { cause: err });
  }
  let matches: boolean;
  try {
    matches = leaf.checkPrivateKey(createPrivateKey(key));
  } catch (err) {
    throw new Error(`${files.keyFile}: not a PEM private key (${(err as Error).message})`, { cause: err });
  }
  if (!matches) throw new Error(`${files.keyFile} is not the key of ${files.certFile}`);
  let cas: X509Certificate[];
  try {
    cas = pemCertificates(ca.toString('utf8'));
  } catch (err) {
    throw new Error(`${files.caFile}: unreadable CA bundle (${(err as Error).message})`, { cause: err });
  }
  if (cas.length === 0) throw new Error(`${files.caFile}: no certificate in the CA bundle`);
  return { cert, key, ca };
}

function sameMaterial(a: TlsMaterial, b: TlsMaterial): boolean {
  return (
    a.cert.equals(b.cert) && a.key.equals(b.key) && (a.ca ?? Buffer.alloc(0)).equals(b.ca ?? Buffer.alloc(0))
  );
}

/**
 * Watches the three files (fs.watch on their folders, which also sees a Kubernetes Secret
 * volume swapping its `..data` link, plus a periodic re-read in case an event is missed) and
 * hands every new, valid set to `onChange`. An invalid or half-written set is logged and
 * skipped; the credentials in use stay.
 */
export class TlsFileWatcher {
  private current: TlsMaterial;
  private readonly watchers: fs.FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private pending: NodeJS.Timeout | undefined;
  private lastError = '';

  constructor(
    private readonly files: TlsFiles,
    private readonly opts: {
      logger: Logger;
      onChange: (material: TlsMaterial) => void;
      pollIntervalMs?: number;
    },
  ) {
    this.current = loadTlsMaterial(files);
  }

  get material(): TlsMaterial {
    return this.current;
  }

  start(): void {
    const dirs = new Set(
      [this.files.certFile, this.files.keyFile, this.files.caFile].map((f) => path.dirname(f)),
    );
    for (const dir of dirs) {
      try {
        const w = fs.watch(dir, { persistent: false }, () => this.schedule());
        w.on('error', () => undefined);
        this.watchers.push(w);
      } catch (err) {
        this.opts.logger.debug(
          { dir, err: (err as Error).message },
          'xds: cannot watch TLS folder; polling only',
        );
      }
    }
    this.timer = setInterval(() => this.reload(), this.opts.pollIntervalMs ?? 10_000);
    this.timer.unref();
  }

  stop(): void {
    for (const w of this.watchers) w.close();
    this.watchers.length = 0;
    if (this.timer) clearInterval(this.timer);
    if (this.pending) clearTimeout(this.pending);
  }

  /** Several events arrive for one rotation (key, certificate, CA): read once they settle. */
  private schedule(): void {
    if (this.pending) clearTimeout(this.pending);
    this.pending = setTimeout(() => this.reload(), 100);
    this.pending.unref();
  }

  /** Re-reads the files; applies them when they are valid and differ from the ones in use. */
  reload(): boolean {
    let next: TlsMaterial;
    try {
      next = loadTlsMaterial(this.files);
    } catch (err) {
      const message = (err as Error).message;
      if (message !== this.lastError) {
        this.lastError = message;
        this.opts.logger.warn({ err: message }, 'xds: TLS files not reloaded; the credentials in use stay');
      }
      return false;
    }
    this.lastError = '';
    if (sameMaterial(next, this.current)) return false;
    this.current = next;
    const leaf = new X509Certificate(next.cert);
    this.opts.logger.info(
      { serial: leaf.serialNumber, notAfter: leaf.validTo, certFile: this.files.certFile },
      'xds: reloaded the TLS certificate and client CA',
    );
    this.opts.onChange(next);
    return true;
  }
}
