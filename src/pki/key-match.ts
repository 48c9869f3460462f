/**
 * Decides whether a private key belongs to a certificate without OpenSSL, for the common key types.
 *
 * `X509Certificate.checkPrivateKey(key)` compares the public half of the key with the
 * certificate's public key (EVP_PKEY_eq: the EC point, or the RSA modulus and exponent). Getting
 * there costs a KeyObject per key: ~45 µs with Node 20's OpenSSL 3.0 (its decoder framework) and
 * still ~16 µs on Node 24, times thousands of listener certificates on a cold build. The same
 * comparison is a few byte compares once the key's DER (keys.ts) and the certificate's
 * SubjectPublicKeyInfo are read, so this module does that for unencrypted EC (P-256/384/521, point
 * stored or computed) and two-prime RSA keys.
 *
 * It only ever answers "matches": anything it does not fully understand or that differs returns
 * false, and the caller asks OpenSSL, so every refusal (and its message) is still OpenSSL's.
 * An EC key is accepted only if its scalar is in [1, n-1] and its point lies on the curve, which
 * OpenSSL checks when it imports the key.
 */
import { parsePrivateKeyPem } from './keys';
import type { ParsedPrivateKey } from './keys';
import { children, oidOf, readTlv, uint } from './der';

const OID_EC_PUBLIC_KEY = '1.2.840.10045.2.1';
const OID_RSA = '1.2.840.113549.1.1.1';

/** Holds a short Weierstrass curve y² = x³ + ax + b over p, with group order n (SEC 2 / FIPS 186). */
interface CurveParams {
  p: bigint;
  a: bigint;
  b: bigint;
  n: bigint;
}

const CURVE_PARAMS: Record<string, CurveParams> = {
  'P-256': {
    p: 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn,
    a: 0xffffffff00000001000000000000000000000000fffffffffffffffffffffffcn,
    b: 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn,
    n: 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n,
  },
  'P-384': {
    p: 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000ffffffffn,
    a: 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000fffffffcn,
    b: 0xb3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aefn,
    n: 0xffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973n,
  },
  'P-521': {
    p: (1n << 521n) - 1n,
    a: (1n << 521n) - 4n,
    b: 0x0051953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef109e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00n,
    n: 0x1fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409n,
  },
};

const CURVE_OIDS: Record<string, string> = {
  '1.2.840.10045.3.1.7': 'P-256',
  '1.3.132.0.34': 'P-384',
  '1.3.132.0.35': 'P-521',
};

const toBig = (b: Buffer): bigint => (b.length === 0 ? 0n : BigInt('0x' + b.toString('hex')));

/** Returns whether the point (x, y) lies on curve `c`. */
function onCurve(c: CurveParams, x: bigint, y: bigint): boolean {
  if (x >= c.p || y >= c.p) return false;
  const lhs = (y * y) % c.p;
  const rhs = (((x * x) % c.p) * x + c.a * x + c.b) % c.p;
  return lhs === rhs;
}

/** Reads a DER certificate's SubjectPublicKeyInfo: algorithm OID, its parameter OID, and the key bits. */
function certificatePublicKey(der: Buffer): { alg: string; param?: string; key: Buffer } | undefined {
  const cert = readTlv(der, 0);
  const top = cert && cert.tag === 0x30 ? children(der, cert) : undefined;
  const tbs = top?.[0] && top[0].tag === 0x30 ? children(der, top[0]) : undefined;
  if (!tbs) return undefined;
  // tbsCertificate: [0] version (optional), serial, signature, issuer, validity, subject, SPKI.
  const spkiTlv = tbs[tbs[0]?.tag === 0xa0 ? 6 : 5];
  const spki = spkiTlv?.tag === 0x30 ? children(der, spkiTlv) : undefined;
  if (!spki || spki.length !== 2 || spki[0].tag !== 0x30 || spki[1].tag !== 0x03) return undefined;
  const algParts = children(der, spki[0]);
  const alg = algParts?.[0] ? oidOf(der, algParts[0]) : undefined;
  if (!alg) return undefined;
  const param = algParts?.[1]?.tag === 0x06 ? oidOf(der, algParts[1]) : undefined;
  // BIT STRING: first byte is the count of unused bits, always 0 for keys.
  if (der[spki[1].start] !== 0) return undefined;
  return { alg, param, key: der.subarray(spki[1].start + 1, spki[1].end) };
}

/**
 * Returns whether an EC key is the certificate's: same curve and public point, scalar in [1, n-1],
 * point on the curve.
 */
function ecMatches(key: Extract<ParsedPrivateKey, { kind: 'ec' }>, pub: Buffer, curveOid?: string): boolean {
  if (!curveOid || CURVE_OIDS[curveOid] !== key.curve) return false;
  if (!pub.equals(key.publicPoint)) return false;
  const c = CURVE_PARAMS[key.curve];
  const size = (pub.length - 1) / 2;
  const d = toBig(key.d);
  if (d < 1n || d >= c.n) return false;
  return onCurve(c, toBig(pub.subarray(1, 1 + size)), toBig(pub.subarray(1 + size)));
}

/** Returns whether an RSA key has the modulus and exponent of the certificate's RSAPublicKey. */
function rsaMatches(key: Extract<ParsedPrivateKey, { kind: 'rsa' }>, bits: Buffer): boolean {
  const seq = readTlv(bits, 0);
  const f = seq && seq.tag === 0x30 && seq.end === bits.length ? children(bits, seq) : undefined;
  if (!f || f.length !== 2) return false;
  const n = uint(bits, f[0]);
  const e = uint(bits, f[1]);
  return n !== undefined && e !== undefined && n.equals(key.n) && e.equals(key.e);
}

/**
 * Returns whether `keyPem` is an unencrypted EC or RSA private key whose public half equals the
 * public key of the DER certificate `certDer`.
 *
 * False means "not shown here": ask OpenSSL.
 */
export function keyMatchesCertificate(keyPem: string, certDer: Buffer): boolean {
  try {
    const key = parsePrivateKeyPem(keyPem);
    const pub = key && certificatePublicKey(certDer);
    if (!key || !pub) return false;
    if (key.kind === 'ec') return pub.alg === OID_EC_PUBLIC_KEY && ecMatches(key, pub.key, pub.param);
    return pub.alg === OID_RSA && rsaMatches(key, pub.key);
  } catch {
    return false;
  }
}
