/**
 * Validates key pairs: does a PEM certificate chain parse, is it in issuer order, and does the
 * private key belong to the leaf.
 *
 * Pure crypto on PEM strings; src/gateway/certificates.ts resolves Secrets to them.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { loadPrivateKey } from './keys';
import { keyMatchesCertificate } from './key-match';
import type { ValidityPeriod } from './validity';

/** What checking a key pair found: the problem, or the leaf's validity period when usable. */
export type KeyPairCheck = { ok: false; error: string } | { ok: true; validity: ValidityPeriod | undefined };

/** Returns the PEM blocks of the given label (e.g. CERTIFICATE) in a bundle, in order. */
export function pemBlocks(pem: string, label: string): string[] {
  const re = new RegExp(`-----BEGIN ${label}-----[\\s\\S]*?-----END ${label}-----`, 'g');
  return pem.match(re) ?? [];
}

/**
 * Validates a PEM certificate chain and private key: returns an error message, or undefined when
 * the pair is usable.
 *
 * Usable means every block parses, certs[i] is issued (and signed) by certs[i+1], and the key
 * matches the leaf.
 */
export function validateKeyPair(certPem: string, keyPem: string): string | undefined {
  const check = checkKeyPair(certPem, keyPem);
  return check.ok ? undefined : check.error;
}

/**
 * Checks a PEM certificate chain and private key as validateKeyPair does, and returns the leaf's
 * validity period with a usable pair.
 *
 * The period comes from the certificate already parsed for the check, so whoever needs it later
 * (the validity warnings, docs/gateway-api.md §8) does not parse every served certificate again.
 */
export function checkKeyPair(certPem: string, keyPem: string): KeyPairCheck {
  const usable = (leaf: X509Certificate): KeyPairCheck => ({ ok: true, validity: periodOf(leaf) });
  const fail = (error: string): KeyPairCheck => ({ ok: false, error });
  const blocks = pemBlocks(certPem, 'CERTIFICATE');
  if (blocks.length === 0) return fail('tls.crt holds no PEM certificate');
  const certs: X509Certificate[] = [];
  for (let i = 0; i < blocks.length; i++) {
    try {
      certs.push(new X509Certificate(blocks[i]));
    } catch {
      return fail(`tls.crt: certificate ${i + 1} does not parse`);
    }
  }
  for (let i = 0; i + 1 < certs.length; i++) {
    let signed: boolean;
    try {
      signed = certs[i].checkIssued(certs[i + 1]) && certs[i].verify(certs[i + 1].publicKey);
    } catch {
      signed = false;
    }
    if (!signed)
      return fail(`tls.crt: certificate ${i + 1} is not issued by certificate ${i + 2} (chain out of order)`);
  }
  // The same comparison checkPrivateKey makes, without building a KeyObject (key-match.ts);
  // anything it cannot show to match goes to OpenSSL below.
  if (keyMatchesCertificate(keyPem, certs[0].raw)) return usable(certs[0]);
  let key;
  try {
    // Same result as createPrivateKey(keyPem), several times faster for common keys (keys.ts).
    key = loadPrivateKey(keyPem);
  } catch {
    return fail('tls.key does not hold a valid private key');
  }
  let matches: boolean;
  try {
    matches = certs[0].checkPrivateKey(key);
  } catch {
    matches = false;
  }
  if (!matches) {
    // Refusals are rare: confirm with OpenSSL's own decoding of the PEM.
    try {
      key = createPrivateKey(keyPem);
    } catch {
      return fail('tls.key does not hold a valid private key');
    }
    try {
      matches = certs[0].checkPrivateKey(key);
    } catch {
      matches = false;
    }
  }
  if (!matches) return fail('tls.key does not match the certificate');
  return usable(certs[0]);
}

/** Returns a parsed certificate's validity period, or undefined when its dates do not parse. */
function periodOf(cert: X509Certificate): ValidityPeriod | undefined {
  const notBefore = Date.parse(cert.validFrom);
  const notAfter = Date.parse(cert.validTo);
  return Number.isFinite(notBefore) && Number.isFinite(notAfter) ? { notBefore, notAfter } : undefined;
}
