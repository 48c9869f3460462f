/**
 * Loads private keys fast, for certificate validation.
 *
 * `crypto.createPrivateKey(pem)` costs ~0.3 ms with OpenSSL 3 (its decoder framework tries
 * several decoders), which makes a cold build of 5,000 listener certificates spend ~1.5 s there.
 * Importing the same key as a JWK takes ~0.04 ms. This module reads the common unencrypted PEM
 * forms (PKCS#8 and SEC1 EC keys on P-256/P-384/P-521, PKCS#8 and PKCS#1 two-prime RSA keys) with a
 * minimal DER reader, turns them into a JWK and imports that. Anything else, and anything that does
 * not parse or import, goes through `createPrivateKey(pem)`, so errors are exactly OpenSSL's.
 *
 * Like OpenSSL when it loads an EC key, the public point stored in the key is used when present
 * (and computed from the private scalar otherwise).
 */
import { createECDH, createPrivateKey } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';
import { children, oidOf, readTlv, uint } from './der';
import type { Tlv } from './der';

const b64u = (b: Buffer): string => b.toString('base64url');

/** Returns `b` left-padded with zeros to `size` bytes; undefined if it is longer. */
function padTo(b: Buffer, size: number): Buffer | undefined {
  if (b.length > size) return undefined;
  return b.length === size ? b : Buffer.concat([Buffer.alloc(size - b.length), b]);
}

const CURVES: Record<string, { crv: 'P-256' | 'P-384' | 'P-521'; ecdh: string; size: number }> = {
  '1.2.840.10045.3.1.7': { crv: 'P-256', ecdh: 'prime256v1', size: 32 },
  '1.3.132.0.34': { crv: 'P-384', ecdh: 'secp384r1', size: 48 },
  '1.3.132.0.35': { crv: 'P-521', ecdh: 'secp521r1', size: 66 },
};
const OID_EC_PUBLIC_KEY = '1.2.840.10045.2.1';
const OID_RSA = '1.2.840.113549.1.1.1';

/** The fields of an unencrypted EC or two-prime RSA private key, as read from its DER. */
export type ParsedPrivateKey =
  | {
      kind: 'ec';
      curve: 'P-256' | 'P-384' | 'P-521';
      /** The private scalar, left-padded to the curve size. */
      d: Buffer;
      /** Uncompressed public point (0x04 || x || y): the stored one, else computed from d. */
      publicPoint: Buffer;
    }
  | {
      kind: 'rsa';
      n: Buffer;
      e: Buffer;
      d: Buffer;
      p: Buffer;
      q: Buffer;
      dp: Buffer;
      dq: Buffer;
      qi: Buffer;
    };

/** Parses an ECPrivateKey (SEC1); `curveOid` comes from the PKCS#8 wrapper when the key omits it. */
function parseEcKey(buf: Buffer, key: Tlv, curveOid: string | undefined): ParsedPrivateKey | undefined {
  const f = key.tag === 0x30 ? children(buf, key) : undefined;
  if (!f || f.length < 2 || f[1].tag !== 0x04) return undefined;
  let oid = curveOid;
  let pub: Buffer | undefined;
  for (const t of f.slice(2)) {
    if (t.tag === 0xa0) {
      const inner = readTlv(buf, t.start, t.end);
      if (inner) oid = oidOf(buf, inner) ?? oid;
    } else if (t.tag === 0xa1) {
      const bits = readTlv(buf, t.start, t.end);
      if (bits && bits.tag === 0x03 && buf[bits.start] === 0) pub = buf.subarray(bits.start + 1, bits.end);
    }
  }
  const curve = oid ? CURVES[oid] : undefined;
  if (!curve) return undefined;
  const d = padTo(buf.subarray(f[1].start, f[1].end), curve.size);
  if (!d) return undefined;
  if (!pub) {
    const ecdh = createECDH(curve.ecdh);
    ecdh.setPrivateKey(d);
    pub = ecdh.getPublicKey();
  }
  if (pub.length !== 1 + 2 * curve.size || pub[0] !== 0x04) return undefined;
  return { kind: 'ec', curve: curve.crv, d, publicPoint: pub };
}

/** Parses an RSAPrivateKey (PKCS#1, two primes). */
function parseRsaKey(buf: Buffer, key: Tlv): ParsedPrivateKey | undefined {
  const f = key.tag === 0x30 ? children(buf, key) : undefined;
  if (!f || f.length !== 9) return undefined;
  const ints = f.map((t) => uint(buf, t));
  if (ints.some((i) => i === undefined) || ints[0]!.length !== 1 || ints[0]![0] !== 0) return undefined;
  const [, n, e, d, p, q, dp, dq, qi] = ints as Buffer[];
  return { kind: 'rsa', n, e, d, p, q, dp, dq, qi };
}

/** Returns the JWK of a parsed EC or RSA private key. */
function toJwk(key: ParsedPrivateKey): JsonWebKey {
  if (key.kind === 'ec') {
    const size = (key.publicPoint.length - 1) / 2;
    return {
      kty: 'EC',
      crv: key.curve,
      d: b64u(key.d),
      x: b64u(key.publicPoint.subarray(1, 1 + size)),
      y: b64u(key.publicPoint.subarray(1 + size)),
    };
  }
  const { n, e, d, p, q, dp, dq, qi } = key;
  return {
    kty: 'RSA',
    n: b64u(n),
    e: b64u(e),
    d: b64u(d),
    p: b64u(p),
    q: b64u(q),
    dp: b64u(dp),
    dq: b64u(dq),
    qi: b64u(qi),
  };
}

/** Returns the DER of the first PEM block with `label`; undefined if absent or not base64. */
function pemBody(pem: string, label: string): Buffer | undefined {
  const begin = `-----BEGIN ${label}-----`;
  const i = pem.indexOf(begin);
  if (i < 0) return undefined;
  const j = pem.indexOf(`-----END ${label}-----`, i);
  if (j < 0) return undefined;
  const body = pem.slice(i + begin.length, j);
  if (!/^[\sA-Za-z0-9+/=]*$/.test(body)) return undefined;
  return Buffer.from(body.replace(/\s+/g, ''), 'base64');
}

/** Parses an unencrypted PEM private key of a supported form with the DER reader; undefined otherwise. */
export function parsePrivateKeyPem(pem: string): ParsedPrivateKey | undefined {
  let der = pemBody(pem, 'PRIVATE KEY');
  if (der) {
    const top = readTlv(der, 0);
    const f = top && top.tag === 0x30 && top.end === der.length ? children(der, top) : undefined;
    if (!f || f.length < 3 || f[1].tag !== 0x30 || f[2].tag !== 0x04) return undefined;
    const alg = children(der, f[1]);
    const algOid = alg?.[0] ? oidOf(der, alg[0]) : undefined;
    const inner = readTlv(der, f[2].start, f[2].end);
    if (!inner || inner.end !== f[2].end) return undefined;
    if (algOid === OID_EC_PUBLIC_KEY)
      return parseEcKey(der, inner, alg?.[1] ? oidOf(der, alg[1]) : undefined);
    if (algOid === OID_RSA) return parseRsaKey(der, inner);
    return undefined;
  }
  der = pemBody(pem, 'EC PRIVATE KEY');
  if (der) {
    const top = readTlv(der, 0);
    return top && top.end === der.length ? parseEcKey(der, top, undefined) : undefined;
  }
  der = pemBody(pem, 'RSA PRIVATE KEY');
  if (der) {
    if (/Proc-Type:/.test(pem)) return undefined; // legacy encrypted PEM
    const top = readTlv(der, 0);
    return top && top.end === der.length ? parseRsaKey(der, top) : undefined;
  }
  return undefined;
}

/** Returns the JWK of an unencrypted PEM private key of a supported form, or undefined. */
export function jwkFromPem(pem: string): JsonWebKey | undefined {
  const key = parsePrivateKeyPem(pem);
  return key && toJwk(key);
}

/** Returns `createPrivateKey(pem)`, faster for common unencrypted EC and RSA keys (see the file comment). */
export function loadPrivateKey(pem: string): KeyObject {
  let jwk: JsonWebKey | undefined;
  try {
    jwk = jwkFromPem(pem);
  } catch {
    jwk = undefined;
  }
  if (jwk) {
    try {
      return createPrivateKey({ key: jwk, format: 'jwk' });
    } catch {
      // Fall through: OpenSSL decides (and reports the error).
    }
  }
  return createPrivateKey(pem);
}
