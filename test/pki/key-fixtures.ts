import type { KeyObject } from 'node:crypto';

/** SEC1 EC key without its optional public key: SEQUENCE { 1, OCTET STRING d, [0] curve OID }. */
export function sec1WithoutPublicKey(key: KeyObject): string {
  const der = key.export({ type: 'sec1', format: 'der' });
  // Walk the top SEQUENCE: version, privateKey, [0] params, [1] publicKey.
  const tlv = (pos: number): [number, number] => {
    let len = der[pos + 1];
    let p = pos + 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + der[p++];
    }
    return [p, p + len];
  };
  const [bodyStart, bodyEnd] = tlv(0);
  const parts: Buffer[] = [];
  let p = bodyStart;
  while (p < bodyEnd) {
    const [, end] = tlv(p);
    if (der[p] !== 0xa1) parts.push(der.subarray(p, end));
    p = end;
  }
  const body = Buffer.concat(parts);
  const header =
    body.length < 128 ? Buffer.from([0x30, body.length]) : Buffer.from([0x30, 0x81, body.length]);
  const b64 = Buffer.concat([header, body]).toString('base64');
  return `-----BEGIN EC PRIVATE KEY-----\n${b64}\n-----END EC PRIVATE KEY-----\n`;
}
