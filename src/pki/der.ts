/**
 * Reads DER, minimally: the few structures Convoy inspects itself (private keys, a certificate's
 * public key) need only TLVs with definite lengths, OIDs and unsigned INTEGERs.
 */

/** Locates one DER tag-length-value: its tag and the byte range of its contents. */
export interface Tlv {
  tag: number;
  start: number;
  end: number;
}

/** Reads one DER TLV at `pos`; undefined if malformed. */
export function readTlv(buf: Buffer, pos: number, limit = buf.length): Tlv | undefined {
  if (pos + 2 > limit) return undefined;
  const tag = buf[pos];
  let len = buf[pos + 1];
  let p = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || p + n > limit) return undefined;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p++];
  }
  if (p + len > limit) return undefined;
  return { tag, start: p, end: p + len };
}

/** Returns the TLVs directly inside a constructed TLV; undefined if one is malformed. */
export function children(buf: Buffer, t: Tlv): Tlv[] | undefined {
  const out: Tlv[] = [];
  let p = t.start;
  while (p < t.end) {
    const c = readTlv(buf, p, t.end);
    if (!c) return undefined;
    out.push(c);
    p = c.end;
  }
  return out;
}

/** Returns an OBJECT IDENTIFIER in dotted form, or undefined if `t` is not a non-empty OID. */
export function oidOf(buf: Buffer, t: Tlv): string | undefined {
  if (t.tag !== 0x06 || t.end <= t.start) return undefined;
  const parts: number[] = [];
  const first = buf[t.start];
  parts.push(Math.floor(first / 40), first % 40);
  let v = 0;
  for (let i = t.start + 1; i < t.end; i++) {
    v = v * 128 + (buf[i] & 0x7f);
    if ((buf[i] & 0x80) === 0) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

/** Returns the bytes of a non-negative INTEGER without leading zeros; undefined for anything else. */
export function uint(buf: Buffer, t: Tlv): Buffer | undefined {
  if (t.tag !== 0x02 || t.end <= t.start || buf[t.start] & 0x80) return undefined;
  let s = t.start;
  while (s < t.end - 1 && buf[s] === 0) s++;
  return buf.subarray(s, t.end);
}
