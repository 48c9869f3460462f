import type * as X509 from '@peculiar/x509';
import { KeyObject, createPrivateKey, randomBytes, webcrypto } from 'node:crypto';

/**
 * Issues X.509 certificates for Convoy's xDS PKI (docs/security.md §2): a self-signed CA and leaf
 * certificates it signs, all with ECDSA P-256 keys and SHA-256 signatures. node:crypto can make
 * keys and sign bytes but cannot build certificates; @peculiar/x509 builds them on WebCrypto.
 */

let library: Promise<typeof X509> | undefined;

/**
 * Loads @peculiar/x509 on first use: it is a quarter of a second of module loading, and most
 * starts of `convoy serve` issue no certificate (docs/architecture.md §10.4).
 */
function x509Library(): Promise<typeof X509> {
  library ??= (async () => {
    // The library resolves its algorithm providers through tsyringe, which needs the Reflect
    // metadata API; this import must run before the library loads.
    await import('reflect-metadata');
    const x509 = await import('@peculiar/x509');
    x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
    return x509;
  })();
  return library;
}

const EC_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;
/** Certificates start this much before "now", so a peer whose clock lags a little accepts them. */
export const BACKDATE_MS = 5 * 60_000;

type Key = Parameters<typeof webcrypto.subtle.exportKey>[1];
type KeyPair = { publicKey: Key; privateKey: Key };

export interface PemPair {
  certPem: string;
  keyPem: string;
}

export interface LeafRequest {
  commonName: string;
  /** serverAuth for Convoy's serving certificate, clientAuth for an Envoy's. */
  usage: 'server' | 'client';
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  uris?: readonly string[];
  validityMs: number;
  now?: Date;
}

async function newKeyPair(): Promise<KeyPair> {
  return (await webcrypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify'])) as KeyPair;
}

async function privateKeyPem(key: Key): Promise<string> {
  return KeyObject.from(key as never)
    .export({ type: 'pkcs8', format: 'pem' })
    .toString();
}

/** A random positive 128-bit serial number (RFC 5280 §4.1.2.2: unique per CA, at most 20 bytes). */
function serialNumber(): string {
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x7f) | 0x01;
  return b.toString('hex');
}

function validity(now: Date, validityMs: number, cap?: Date): { notBefore: Date; notAfter: Date } {
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  let notAfter = new Date(now.getTime() + validityMs);
  if (cap && notAfter > cap) notAfter = cap;
  return { notBefore, notAfter };
}

/** A new self-signed CA that may sign leaf certificates only (path length 0). */
export async function createCertificateAuthority(opts: {
  commonName: string;
  validityMs: number;
  now?: Date;
}): Promise<PemPair> {
  const x509 = await x509Library();
  const keys = await newKeyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [opts.commonName] }],
    ...validity(opts.now ?? new Date(), opts.validityMs),
    keys: keys as never,
    signingAlgorithm: SIGNING,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as never),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
}

/** A leaf certificate with a fresh key, signed by `ca`; it never outlives the CA. */
export async function issueLeafCertificate(ca: PemPair, req: LeafRequest): Promise<PemPair> {
  const x509 = await x509Library();
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKeyDer = createPrivateKey(ca.keyPem).export({ type: 'pkcs8', format: 'der' });
  const signingKey = await webcrypto.subtle.importKey('pkcs8', caKeyDer, EC_KEY, false, ['sign']);
  const keys = await newKeyPair();
  const names: X509.JsonGeneralName[] = [
    ...(req.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(req.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
    ...(req.uris ?? []).map((value) => ({ type: 'url' as const, value })),
  ];
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension(
      [req.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(caCert),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as never),
  ];
  // A subject with no name other than its SANs marks the extension critical (RFC 5280 §4.2.1.6);
  // Convoy always sets a CN, so it is not.
  if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names, false));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: [req.commonName] }],
    issuer: caCert.subject,
    ...validity(req.now ?? new Date(), req.validityMs, caCert.notAfter),
    publicKey: keys.publicKey as never,
    signingKey: signingKey as never,
    signingAlgorithm: SIGNING,
    extensions,
  });
  return { certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
}
