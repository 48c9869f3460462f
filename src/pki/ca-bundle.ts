/**
 * Checks a PEM bundle of CA certificates (a trust anchor for client certificates): it must hold at
 * least one certificate, and every one must parse.
 */
import { X509Certificate } from 'node:crypto';
import { pemBlocks } from './keypair';

/** The certificates of a CA bundle, each its own PEM block in bundle order, or what is wrong. */
export type CaBundleCheck = { ok: true; certificates: string[] } | { ok: false; error: string };

/** Returns the PEM certificates of `pem`, or the problem (never the content) when it has none or one does not parse. */
export function checkCaBundle(pem: string): CaBundleCheck {
  const blocks = pemBlocks(pem, 'CERTIFICATE');
  if (blocks.length === 0) return { ok: false, error: 'holds no PEM certificate' };
  for (let i = 0; i < blocks.length; i++) {
    try {
      new X509Certificate(blocks[i]);
    } catch {
      return { ok: false, error: `holds a certificate that does not parse (#${i + 1})` };
    }
  }
  return { ok: true, certificates: blocks };
}
