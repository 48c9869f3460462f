import { X509Certificate } from 'node:crypto';

/**
 * What Convoy reads from an X.509 certificate (node:crypto parses it): validity, subject
 * alternative names and extended key usage, for the CA directory's renewal decisions and for
 * the xDS server's client identities (docs/security.md §2).
 */

export const EKU_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
export const EKU_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

export interface SubjectAltNames {
  dnsNames: string[];
  ipAddresses: string[];
  uris: string[];
}

export interface CertificateInfo extends SubjectAltNames {
  subject: string;
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  /** Extended key usage OIDs; undefined when the certificate has no such extension. */
  extendedKeyUsage: string[] | undefined;
  fingerprint256: string;
}

/**
 * Splits Node's `subjectAltName` text (`DNS:a, IP Address:1.2.3.4, URI:spiffe://x`) into its
 * names. Node writes a value that contains a comma, quote or control character as a JSON
 * string (`URI:"a,b"`), so quoted values are decoded with JSON.parse and a comma inside one
 * never splits it: a crafted name cannot smuggle a second one in.
 */
export function parseSubjectAltName(text: string | undefined): SubjectAltNames {
  const out: SubjectAltNames = { dnsNames: [], ipAddresses: [], uris: [] };
  if (!text) return out;
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(':', i);
    if (colon < 0) break;
    const kind = text.slice(i, colon);
    let value: string;
    let next: number;
    if (text[colon + 1] === '"') {
      // A JSON string: find its closing quote, skipping escaped characters.
      let j = colon + 2;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      try {
        value = JSON.parse(text.slice(colon + 1, j + 1)) as string;
      } catch {
        value = '';
      }
      next = text.indexOf(', ', j + 1);
    } else {
      next = text.indexOf(', ', colon + 1);
      value = text.slice(colon + 1, next < 0 ? text.length : next);
    }
    if (kind === 'DNS') out.dnsNames.push(value);
    else if (kind === 'IP Address') out.ipAddresses.push(value);
    else if (kind === 'URI') out.uris.push(value);
    if (next < 0) break;
    i = next + 2;
  }
  return out;
}

/** Parses one certificate (PEM, DER or an X509Certificate). Throws when it does not parse. */
export function certificateInfo(cert: string | Buffer | X509Certificate): CertificateInfo {
  const x = cert instanceof X509Certificate ? cert : new X509Certificate(cert);
  return {
    subject: x.subject,
    serialNumber: x.serialNumber,
    notBefore: new Date(x.validFrom),
    notAfter: new Date(x.validTo),
    extendedKeyUsage: x.keyUsage,
    fingerprint256: x.fingerprint256,
    ...parseSubjectAltName(x.subjectAltName),
  };
}

/** Every certificate of a PEM bundle, in order. */
export function pemCertificates(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}
