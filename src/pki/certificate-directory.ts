import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { certificateInfo, pemCertificates } from './certificate-info';
import type { CertificateInfo } from './certificate-info';
import { OPERATOR_IDENTITY_URI, gatewayIdentityUri, parseFleetKey } from './gateway-identity';
import { BACKDATE_MS, createCertificateAuthority, issueLeafCertificate } from './x509-issuer';
import type { PemPair } from './x509-issuer';

/**
 * Convoy's xDS certificate authority kept in a directory (docs/security.md §2):
 *
 *   DIR/ca/ca.crt, ca.key                        the CA (the key never leaves this folder)
 *   DIR/server/tls.crt, tls.key, ca.crt          Convoy's serving certificate
 *   DIR/gateways/NS/NAME/tls.crt, tls.key, ca.crt  the client certificate of Gateway NS/NAME's Envoys
 *
 * Each leaf folder has the shape of a Kubernetes TLS Secret with its CA (tls.crt, tls.key,
 * ca.crt), so it can be mounted as one. Every operation is idempotent: a certificate is issued
 * only when it is missing, unreadable, not from the current CA, lacks a required name, or has
 * used two thirds of its lifetime. Files are replaced by rename, so a reader (Convoy's own
 * reload, Envoy's SDS file watch) sees the old file or the new one, never half of one.
 */

export const DEFAULT_CA_VALIDITY_MS = 10 * 365 * 86_400_000;
export const DEFAULT_SERVER_VALIDITY_MS = 90 * 86_400_000;
export const DEFAULT_CLIENT_VALIDITY_MS = 7 * 86_400_000;
/** The shortest lifetime accepted for a leaf certificate (tests use seconds; nobody should). */
export const MIN_LEAF_VALIDITY_MS = 5_000;
/** Names every serving certificate carries, so local Envoys can reach Convoy on loopback. */
export const DEFAULT_SERVER_NAMES: readonly string[] = ['localhost', '127.0.0.1', '::1'];

export type LeafKind = 'server' | 'client';

/** What a leaf certificate must be; the decision to (re)issue compares a file against it. */
export interface LeafWanted {
  kind: LeafKind;
  dnsNames: readonly string[];
  ipAddresses: readonly string[];
  uris: readonly string[];
}

export interface LeafFiles {
  dir: string;
  certFile: string;
  keyFile: string;
  caFile: string;
}

export interface EnsureResult {
  /** `current`: nothing written. */
  action: 'issued' | 'renewed' | 'current';
  /** Why it was (re)issued. */
  reason?: string;
  files: LeafFiles;
  info: CertificateInfo;
  /** When this certificate should be renewed. */
  renewAt: Date;
}

/**
 * The instant a certificate should be replaced: two thirds into its lifetime, counted from when
 * it was issued (notBefore is backdated by BACKDATE_MS), so a renewer has the last third to
 * succeed before the certificate expires.
 */
export function renewalTime(info: Pick<CertificateInfo, 'notBefore' | 'notAfter'>): Date {
  const issued = Math.min(info.notBefore.getTime() + BACKDATE_MS, info.notAfter.getTime());
  return new Date(issued + ((info.notAfter.getTime() - issued) * 2) / 3);
}

/** The lifetime a certificate was issued with (what a renewal keeps). */
export function issuedLifetimeMs(info: Pick<CertificateInfo, 'notBefore' | 'notAfter'>): number {
  return Math.max(MIN_LEAF_VALIDITY_MS, info.notAfter.getTime() - info.notBefore.getTime() - BACKDATE_MS);
}

/** Canonical text of an IP address (`0:0:0:0:0:0:0:1` and `::1` compare equal). */
export function canonicalIp(ip: string): string {
  if (!ip.includes(':')) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip;
  }
}

/** Splits host names and IP literals (server names are given as one list). */
export function splitServerNames(names: readonly string[]): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const n of names) {
    const bare = n.startsWith('[') && n.endsWith(']') ? n.slice(1, -1) : n;
    if (/^[0-9.]+$/.test(bare) || bare.includes(':')) ipAddresses.push(canonicalIp(bare));
    else dnsNames.push(bare.toLowerCase());
  }
  return { dnsNames: [...new Set(dnsNames)], ipAddresses: [...new Set(ipAddresses)] };
}

/**
 * Why the certificate in `pair` cannot stay, or undefined when it is fine. Pure: the unit tests
 * drive every branch.
 */
export function reissueReason(
  pair: { certPem: string; keyPem: string } | undefined,
  ca: X509Certificate,
  wanted: LeafWanted,
  now: Date,
): string | undefined {
  if (!pair) return 'missing';
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pair.certPem);
    if (!cert.checkPrivateKey(createPrivateKey(pair.keyPem))) return 'the key does not match the certificate';
  } catch (err) {
    return `unreadable (${(err as Error).message})`;
  }
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return 'not issued by the current CA';
  const info = certificateInfo(cert);
  const eku = wanted.kind === 'server' ? '1.3.6.1.5.5.7.3.1' : '1.3.6.1.5.5.7.3.2';
  if (!info.extendedKeyUsage?.includes(eku)) return `not a ${wanted.kind} certificate`;
  const missing = [
    ...wanted.dnsNames.filter((n) => !info.dnsNames.includes(n)),
    ...wanted.ipAddresses.filter((n) => !info.ipAddresses.map(canonicalIp).includes(n)),
    ...wanted.uris.filter((n) => !info.uris.includes(n)),
  ];
  if (missing.length > 0) return `lacks ${missing.join(', ')}`;
  if (wanted.kind === 'client') {
    const extra = info.uris.filter((u) => !wanted.uris.includes(u));
    if (extra.length > 0) return `names more than its Gateway (${extra.join(', ')})`;
  }
  if (now < info.notBefore) return 'not valid yet';
  if (now >= info.notAfter) return 'expired';
  if (now >= renewalTime(info)) return `due for renewal (expires ${info.notAfter.toISOString()})`;
  return undefined;
}

/** Writes `data` to `file` through a temporary file and a rename (atomic for readers). */
export function writeFileAtomic(file: string, data: string, mode: number): void {
  const tmp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}`,
  );
  try {
    fs.writeFileSync(tmp, data, { mode });
    fs.chmodSync(tmp, mode);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Where `convoy serve`, `certgen` and `bootstrap` keep the xDS PKI when no directory is given. */
export function defaultCertsDir(env: NodeJS.ProcessEnv = process.env): string {
  const stateHome = env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
  return path.join(stateHome, 'convoy', 'xds-pki');
}

const LOCK_STALE_MS = 60_000;
const LOCK_WAIT_MS = 20_000;

export class CertificateDirectory {
  readonly root: string;
  private ca: { pair: PemPair; cert: X509Certificate } | undefined;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  get caCertFile(): string {
    return path.join(this.root, 'ca', 'ca.crt');
  }

  get caKeyFile(): string {
    return path.join(this.root, 'ca', 'ca.key');
  }

  /** True when this directory holds a CA key (it can issue). */
  hasCaKey(): boolean {
    return fs.existsSync(this.caKeyFile);
  }

  serverFiles(): LeafFiles {
    return this.leafFiles(path.join(this.root, 'server'));
  }

  gatewayFiles(fleet: string): LeafFiles {
    const ref = parseFleetKey(fleet);
    if (!ref) throw new Error(`gateway: expected NAMESPACE/NAME, got ${JSON.stringify(fleet)}`);
    return this.leafFiles(path.join(this.root, 'gateways', ref.namespace, ref.name));
  }

  /** The operator's client certificate (CSDS, `convoy proxy-status`; docs/security.md §2.6). */
  operatorFiles(): LeafFiles {
    return this.leafFiles(path.join(this.root, 'operator'));
  }

  /** Gateways that have a client certificate folder here, as fleet keys, sorted. */
  gateways(): string[] {
    const out: string[] = [];
    const base = path.join(this.root, 'gateways');
    for (const ns of safeReaddir(base)) {
      for (const name of safeReaddir(path.join(base, ns))) {
        const fleet = `${ns}/${name}`;
        if (parseFleetKey(fleet) && fs.existsSync(path.join(base, ns, name, 'tls.crt'))) out.push(fleet);
      }
    }
    return out.sort();
  }

  /**
   * Loads the CA, creating it when the folder has neither file (`create`). A CA with only one
   * of its two files is an error: replacing it would silently invalidate every issued
   * certificate.
   */
  async ensureCa(opts: { create: boolean; validityMs?: number }): Promise<{ created: boolean }> {
    const certPem = readIfExists(this.caCertFile);
    const keyPem = readIfExists(this.caKeyFile);
    if (certPem !== undefined && keyPem !== undefined) {
      this.ca = { pair: { certPem, keyPem }, cert: loadCa(certPem, keyPem, this.caCertFile) };
      return { created: false };
    }
    if (certPem !== undefined || keyPem !== undefined) {
      throw new Error(
        `${path.dirname(this.caCertFile)} has ${certPem !== undefined ? 'ca.crt but no ca.key' : 'ca.key but no ca.crt'}; ` +
          'restore the missing file, or remove the folder to create a new CA (every issued certificate then has to be reissued)',
      );
    }
    if (!opts.create)
      throw new Error(`no CA in ${path.dirname(this.caCertFile)} (run "convoy certgen" first)`);
    return this.locked(async () => {
      // Another process may have created it while this one waited for the lock.
      if (fs.existsSync(this.caCertFile))
        return { created: (await this.ensureCa({ create: false })).created };
      const pair = await createCertificateAuthority({
        commonName: `Convoy xDS CA ${randomBytes(4).toString('hex')}`,
        validityMs: opts.validityMs ?? DEFAULT_CA_VALIDITY_MS,
      });
      fs.mkdirSync(path.dirname(this.caKeyFile), { recursive: true, mode: 0o700 });
      writeFileAtomic(this.caKeyFile, pair.keyPem, 0o600);
      writeFileAtomic(this.caCertFile, pair.certPem, 0o644);
      this.ca = { pair, cert: loadCa(pair.certPem, pair.keyPem, this.caCertFile) };
      return { created: true };
    });
  }

  /** Issues or renews Convoy's serving certificate so it carries at least `names`. */
  ensureServer(
    names: readonly string[],
    opts: { validityMs?: number; now?: Date; forceValidity?: boolean } = {},
  ): Promise<EnsureResult> {
    const wanted: LeafWanted = {
      kind: 'server',
      uris: [],
      ...splitServerNames([...DEFAULT_SERVER_NAMES, ...names]),
    };
    return this.ensureLeaf(this.serverFiles(), 'convoy-xds', wanted, DEFAULT_SERVER_VALIDITY_MS, opts);
  }

  /** Issues or renews the client certificate of Gateway `fleet`'s Envoys. */
  ensureGateway(
    fleet: string,
    opts: { validityMs?: number; now?: Date; forceValidity?: boolean } = {},
  ): Promise<EnsureResult> {
    const wanted: LeafWanted = {
      kind: 'client',
      dnsNames: [],
      ipAddresses: [],
      uris: [gatewayIdentityUri(fleet)],
    };
    return this.ensureLeaf(this.gatewayFiles(fleet), fleet, wanted, DEFAULT_CLIENT_VALIDITY_MS, opts);
  }

  /** Issues or renews the operator's client certificate (URI SAN OPERATOR_IDENTITY_URI only). */
  ensureOperator(
    opts: { validityMs?: number; now?: Date; forceValidity?: boolean } = {},
  ): Promise<EnsureResult> {
    const wanted: LeafWanted = {
      kind: 'client',
      dnsNames: [],
      ipAddresses: [],
      uris: [OPERATOR_IDENTITY_URI],
    };
    return this.ensureLeaf(this.operatorFiles(), 'convoy-operator', wanted, DEFAULT_CLIENT_VALIDITY_MS, opts);
  }

  /**
   * Renews every certificate of this directory that is due (server, operator and all Gateways), each with
   * the lifetime it was issued with. Returns what happened, for logging and for scheduling the
   * next run at the earliest `renewAt`.
   */
  async renewDue(now = new Date()): Promise<{ subject: string; result?: EnsureResult; error?: Error }[]> {
    const out: { subject: string; result?: EnsureResult; error?: Error }[] = [];
    const run = async (subject: string, f: () => Promise<EnsureResult>) => {
      try {
        out.push({ subject, result: await f() });
      } catch (err) {
        out.push({ subject, error: err as Error });
      }
    };
    if (fs.existsSync(this.serverFiles().certFile)) await run('server', () => this.ensureServer([], { now }));
    if (fs.existsSync(this.operatorFiles().certFile))
      await run('operator', () => this.ensureOperator({ now }));
    for (const fleet of this.gateways()) await run(fleet, () => this.ensureGateway(fleet, { now }));
    return out;
  }

  private leafFiles(dir: string): LeafFiles {
    return {
      dir,
      certFile: path.join(dir, 'tls.crt'),
      keyFile: path.join(dir, 'tls.key'),
      caFile: path.join(dir, 'ca.crt'),
    };
  }

  private async ensureLeaf(
    files: LeafFiles,
    commonName: string,
    wanted: LeafWanted,
    defaultValidityMs: number,
    opts: { validityMs?: number; now?: Date; forceValidity?: boolean },
  ): Promise<EnsureResult> {
    const ca = this.requireCa();
    const check = (): EnsureResult | { reason: string; existing?: CertificateInfo } => {
      const certPem = readIfExists(files.certFile);
      const keyPem = readIfExists(files.keyFile);
      const pair = certPem !== undefined && keyPem !== undefined ? { certPem, keyPem } : undefined;
      const now = opts.now ?? new Date();
      let reason = reissueReason(pair, ca.cert, wanted, now);
      let existing: CertificateInfo | undefined;
      if (pair && reason === undefined) {
        existing = certificateInfo(pair.certPem);
        const asked = opts.validityMs;
        // An explicit lifetime that differs from the certificate's (certgen --client-validity) reissues.
        if (opts.forceValidity && asked !== undefined && Math.abs(issuedLifetimeMs(existing) - asked) > 1_000)
          reason = `lifetime differs from ${Math.round(asked / 1000)}s`;
      } else if (pair) {
        try {
          existing = certificateInfo(pair.certPem);
        } catch {
          existing = undefined;
        }
      }
      if (reason !== undefined) return { reason, existing };
      this.syncCaFile(files);
      return { action: 'current', files, info: existing!, renewAt: renewalTime(existing!) };
    };
    const first = check();
    if ('action' in first) return first;
    return this.locked(async () => {
      // Re-check under the lock: another process may have just done the same work.
      const again = check();
      if ('action' in again) return again;
      const keep = again.existing;
      const validityMs = Math.max(
        MIN_LEAF_VALIDITY_MS,
        opts.validityMs ?? (keep ? issuedLifetimeMs(keep) : defaultValidityMs),
      );
      // A renewed server certificate keeps the names it had (certgen may have added some).
      const names =
        wanted.kind === 'server' && keep
          ? splitServerNames([
              ...wanted.dnsNames,
              ...wanted.ipAddresses,
              ...keep.dnsNames,
              ...keep.ipAddresses,
            ])
          : { dnsNames: [...wanted.dnsNames], ipAddresses: [...wanted.ipAddresses] };
      const issued = await issueLeafCertificate(ca.pair, {
        commonName,
        usage: wanted.kind,
        ...names,
        uris: wanted.uris,
        validityMs,
        now: opts.now,
      });
      fs.mkdirSync(files.dir, { recursive: true, mode: 0o755 });
      // Key first, then certificate: a reader between the two renames sees a mismatched pair,
      // which Convoy's reload and Envoy both reject, and the second rename fixes it.
      writeFileAtomic(files.keyFile, issued.keyPem, 0o600);
      writeFileAtomic(files.certFile, issued.certPem, 0o644);
      this.syncCaFile(files);
      const info = certificateInfo(issued.certPem);
      return {
        action: keep || again.reason !== 'missing' ? 'renewed' : 'issued',
        reason: again.reason,
        files,
        info,
        renewAt: renewalTime(info),
      };
    });
  }

  /** Keeps a leaf folder's ca.crt equal to the CA's certificate (a CA rotated by hand propagates). */
  private syncCaFile(files: LeafFiles): void {
    const ca = this.requireCa();
    if (readIfExists(files.caFile) !== ca.pair.certPem) writeFileAtomic(files.caFile, ca.pair.certPem, 0o644);
  }

  private requireCa(): { pair: PemPair; cert: X509Certificate } {
    if (!this.ca) throw new Error('CertificateDirectory: ensureCa() first');
    return this.ca;
  }

  /**
   * Runs `f` holding DIR/.lock (O_EXCL), so `convoy serve` renewing and `convoy certgen` issuing
   * in the same folder never interleave a key of one with a certificate of the other. A lock
   * older than a minute is left over from a crash and is taken over.
   */
  private async locked<T>(f: () => Promise<T>): Promise<T> {
    fs.mkdirSync(this.root, { recursive: true, mode: 0o755 });
    const lock = path.join(this.root, '.lock');
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        fs.writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
        if (age > LOCK_STALE_MS) fs.rmSync(lock, { force: true });
        else if (Date.now() > deadline)
          throw new Error(`${lock} is held by another process (pid ${readIfExists(lock) ?? '?'})`, {
            cause: err,
          });
        else await new Promise((r) => setTimeout(r, 50));
      }
    }
    try {
      return await f();
    } finally {
      fs.rmSync(lock, { force: true });
    }
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Parses and checks the CA pair: a CA certificate whose key is `keyPem`. */
function loadCa(certPem: string, keyPem: string, where: string): X509Certificate {
  const [cert] = pemCertificates(certPem);
  if (!cert) throw new Error(`${where}: no certificate`);
  if (!cert.ca) throw new Error(`${where}: not a CA certificate`);
  if (!cert.checkPrivateKey(createPrivateKey(keyPem)))
    throw new Error(`${where}: ca.key does not match ca.crt`);
  return cert;
}
