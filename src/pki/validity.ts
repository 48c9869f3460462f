/**
 * Reads the validity period of the leaf certificate of a PEM chain.
 *
 * Pure crypto on PEM strings; src/controller/certificate-validity.ts warns about certificates
 * served outside it (docs/gateway-api.md §8).
 */
import { X509Certificate } from 'node:crypto';
import { pemBlocks } from './keypair';

/** A certificate's validity period, in milliseconds since the epoch. */
export interface ValidityPeriod {
  notBefore: number;
  notAfter: number;
}

/** Returns the validity period of the first (leaf) certificate of `chainPem`, or undefined if it does not parse. */
export function leafValidity(chainPem: string): ValidityPeriod | undefined {
  const [leaf] = pemBlocks(chainPem, 'CERTIFICATE');
  if (!leaf) return undefined;
  try {
    const cert = new X509Certificate(leaf);
    const notBefore = Date.parse(cert.validFrom);
    const notAfter = Date.parse(cert.validTo);
    return Number.isFinite(notBefore) && Number.isFinite(notAfter) ? { notBefore, notAfter } : undefined;
  } catch {
    return undefined;
  }
}
