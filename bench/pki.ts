/**
 * Benchmark PKI: one CA and many leaf certificates, fast.
 *
 * node:crypto cannot build X.509 certificates, but it can generate keys and sign arbitrary bytes.
 * So this file writes the DER of a small TBSCertificate itself (ECDSA P-256, SHA-256, SAN, EKU)
 * and signs it with the CA key: ~0.3 ms per certificate instead of three openssl processes.
 * Every certificate parses with X509Certificate, is issued by the CA, and matches its key, which
 * is what Convoy validates. The key pairs and certificates are cached under bench/.cache so
 * repeated runs start at once.
 */
import {
  X509Certificate,
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
} from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

// ------------------------------------------------------------------------------------------------
// Minimal DER writer

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const seq = (...c: Buffer[]): Buffer => tlv(0x30, ...c);
const set = (...c: Buffer[]): Buffer => tlv(0x31, ...c);
const octets = (b: Buffer): Buffer => tlv(0x04, b);
const bitString = (b: Buffer, unused = 0): Buffer => tlv(0x03, Buffer.from([unused]), b);
const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [parts[0] * 40 + parts[1]];
  for (const p of parts.slice(2)) {
    const chunk: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** A positive INTEGER from big-endian bytes (leading zeros stripped, sign byte added). */
function integer(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  let b = bytes.subarray(i);
  if (b[0] & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(0x02, b);
}

function utcTime(d: Date): Buffer {
  const p = (n: number) => String(n).padStart(2, '0');
  const s =
    p(d.getUTCFullYear() % 100) +
    p(d.getUTCMonth() + 1) +
    p(d.getUTCDate()) +
    p(d.getUTCHours()) +
    p(d.getUTCMinutes()) +
    p(d.getUTCSeconds()) +
    'Z';
  return tlv(0x17, Buffer.from(s, 'ascii'));
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyId: '2.5.29.14',
  authorityKeyId: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

function name(cn: string): Buffer {
  return seq(set(seq(oid(OID.organization), utf8('Convoy bench'))), set(seq(oid(OID.commonName), utf8(cn))));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));
}

function keyId(spki: Buffer): Buffer {
  return createHash('sha1').update(spki).digest();
}

interface CertSpec {
  serial: Buffer;
  subject: string;
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  spki: Buffer;
  issuerSpki: Buffer;
  ca: boolean;
  dnsNames?: string[];
}

function certificateDer(spec: CertSpec, issuerKey: KeyObject): Buffer {
  const alg = seq(oid(OID.ecdsaWithSha256));
  const exts: Buffer[] = [];
  if (spec.ca) {
    exts.push(extension(OID.basicConstraints, true, seq(bool(true))));
    // keyCertSign (bit 5) + cRLSign (bit 6): 0b00000110, 1 unused bit.
    exts.push(extension(OID.keyUsage, true, bitString(Buffer.from([0x06]), 1)));
  } else {
    exts.push(extension(OID.basicConstraints, true, seq()));
    // digitalSignature (bit 0): 0b10000000, 7 unused bits.
    exts.push(extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)));
    exts.push(extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))));
    const sans = (spec.dnsNames ?? []).map((d) => tlv(0x82, Buffer.from(d, 'ascii')));
    exts.push(extension(OID.subjectAltName, false, seq(...sans)));
  }
  exts.push(extension(OID.subjectKeyId, false, octets(keyId(spec.spki))));
  exts.push(extension(OID.authorityKeyId, false, seq(tlv(0x80, keyId(spec.issuerSpki)))));
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(spec.serial),
    alg,
    name(spec.issuer),
    seq(utcTime(spec.notBefore), utcTime(spec.notAfter)),
    name(spec.subject),
    spec.spki,
    explicit(3, seq(...exts)),
  );
  const signature = sign('sha256', tbs, issuerKey); // DER ECDSA-Sig-Value, as X.509 wants
  return seq(tbs, alg, bitString(signature));
}

function pem(der: Buffer): string {
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`;
}

// ------------------------------------------------------------------------------------------------
// CA and leaves

export interface KeyPairPem {
  cert: string;
  key: string;
}

export interface Ca extends KeyPairPem {
  readonly subject: string;
  readonly privateKey: KeyObject;
  readonly spki: Buffer;
}

const DAY = 24 * 3600 * 1000;
/** Fixed validity window: cached certificates stay valid for years, and stay byte-stable. */
const NOT_BEFORE = new Date(Date.UTC(2025, 0, 1));
const NOT_AFTER = new Date(Date.UTC(2035, 0, 1));

function newKey(): { privateKey: KeyObject; spki: Buffer; keyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    privateKey,
    spki: publicKey.export({ type: 'spki', format: 'der' }),
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

function serialBytes(): Buffer {
  const b = randomBytes(16);
  b[0] &= 0x7f;
  return b;
}

export function createCa(subject = 'Convoy bench CA'): Ca {
  const k = newKey();
  const der = certificateDer(
    {
      serial: serialBytes(),
      subject,
      issuer: subject,
      notBefore: NOT_BEFORE,
      notAfter: NOT_AFTER,
      spki: k.spki,
      issuerSpki: k.spki,
      ca: true,
    },
    k.privateKey,
  );
  return { cert: pem(der), key: k.keyPem, subject, privateKey: k.privateKey, spki: k.spki };
}

/** Issues a server certificate for `hostname`. With `keyPem`, reuses that key (a rotation). */
export function issueLeaf(ca: Ca, hostname: string, keyPem?: string): KeyPairPem {
  let spki: Buffer;
  let key: string;
  if (keyPem) {
    const priv = createPrivateKey(keyPem);
    spki = createPublicKey(priv).export({ type: 'spki', format: 'der' });
    key = keyPem;
  } else {
    const k = newKey();
    spki = k.spki;
    key = k.keyPem;
  }
  const der = certificateDer(
    {
      serial: serialBytes(),
      subject: hostname,
      issuer: ca.subject,
      notBefore: keyPem ? new Date(Date.now() - DAY) : NOT_BEFORE,
      notAfter: NOT_AFTER,
      spki,
      issuerSpki: ca.spki,
      ca: false,
      dnsNames: [hostname],
    },
    ca.privateKey,
  );
  return { cert: pem(der), key };
}

/** Serial number (upper-case hex, as X509Certificate reports it) of a PEM certificate. */
export function serialOf(certPem: string): string {
  return new X509Certificate(certPem).serialNumber;
}

// ------------------------------------------------------------------------------------------------
// Cached set of leaves

export interface Pki {
  ca: Ca;
  /** leaves[i] is the certificate of `hostnameOf(i)`. */
  leaves: KeyPairPem[];
}

interface PkiCacheFile {
  version: 1;
  ca: KeyPairPem & { subject: string };
  leaves: KeyPairPem[];
}

export function repoRoot(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'bench'))) return dir;
  }
  throw new Error('repository root (package.json + bench/) not found above ' + __dirname);
}

export function cacheDir(): string {
  const dir = path.join(repoRoot(), 'bench', '.cache');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

function caFromPem(c: PkiCacheFile['ca']): Ca {
  const privateKey = createPrivateKey(c.key);
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  return { ...c, privateKey, spki };
}

/**
 * `count` leaf certificates for hostnames `hostnameOf(0..count-1)`, from bench/.cache when a
 * cached set with at least that many exists (the cache only grows), otherwise generated now.
 */
export function loadPki(count: number, hostnameOf: (i: number) => string): Pki {
  const file = path.join(cacheDir(), 'pki-v1.dat');
  let cached: PkiCacheFile | undefined;
  try {
    cached = JSON.parse(fs.readFileSync(file, 'utf8')) as PkiCacheFile;
    if (cached.version !== 1) cached = undefined;
  } catch {
    cached = undefined;
  }
  const ca = cached ? caFromPem(cached.ca) : createCa();
  const leaves = cached ? cached.leaves.slice(0, count) : [];
  const had = leaves.length;
  for (let i = leaves.length; i < count; i++) leaves.push(issueLeaf(ca, hostnameOf(i)));
  if (leaves.length > had || !cached) {
    const out: PkiCacheFile = {
      version: 1,
      ca: { cert: ca.cert, key: ca.key, subject: ca.subject },
      leaves: cached && cached.leaves.length > leaves.length ? cached.leaves : leaves,
    };
    fs.writeFileSync(file + '.tmp', JSON.stringify(out));
    fs.renameSync(file + '.tmp', file);
  }
  return { ca, leaves };
}
