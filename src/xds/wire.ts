/**
 * Minimal protobuf wire-format helpers for the xDS envelopes.
 *
 * Resources are encoded once (by protobufjs) and cached as bytes; the DiscoveryResponse /
 * DeltaDiscoveryResponse around them is assembled here by concatenation, so a response never
 * re-encodes its resources. Fields are written in field-number order, like protobufjs does,
 * so the result is byte-identical to a protobufjs encoding of the same message.
 */

const WIRE_LEN = 2;

export function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

export function writeVarint(buf: Buffer, offset: number, n: number): number {
  while (n >= 0x80) {
    buf[offset++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[offset++] = n;
  return offset;
}

/** The tag of a length-delimited field: its number with wire type 2, as protobuf writes it. */
function lenTag(field: number): number {
  return (field << 3) | WIRE_LEN;
}

/** Bytes a length-delimited field takes whose payload is `length` bytes: tag, length, payload. */
export function lenFieldSize(field: number, length: number): number {
  return varintSize(lenTag(field)) + varintSize(length) + length;
}

/**
 * Writes a length-delimited field's header (tag, then length) into `buf` at `offset` and returns
 * the offset after it, so a caller assembling a message in one buffer needs no header Buffer.
 */
export function writeLenHeader(buf: Buffer, offset: number, field: number, length: number): number {
  return writeVarint(buf, writeVarint(buf, offset, lenTag(field)), length);
}

/** Encodes one length-delimited field header: tag and length. */
export function lenHeader(field: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(varintSize(lenTag(field)) + varintSize(length));
  writeLenHeader(buf, 0, field, length);
  return buf;
}

/** A whole length-delimited field (tag, length, payload) as one Buffer. */
export function lenField(field: number, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const header = lenHeader(field, body.length);
  return Buffer.concat([header, body], header.length + body.length);
}

/**
 * Collects the parts of a message and joins them with a single copy at the end.
 * Parts are referenced, not copied, until `finish()`.
 */
export class PartsWriter {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  /** Appends a length-delimited field whose payload is the concatenation of `payload`. */
  field(field: number, ...payload: Buffer[]): this {
    let len = 0;
    for (const p of payload) len += p.length;
    this.raw(lenHeader(field, len));
    for (const p of payload) this.raw(p);
    return this;
  }

  stringField(field: number, value: string): this {
    if (value.length === 0) return this; // proto3 default: omitted
    return this.field(field, Buffer.from(value, 'utf8'));
  }

  raw(part: Buffer): this {
    this.chunks.push(part);
    this.size += part.length;
    return this;
  }

  get length(): number {
    return this.size;
  }

  /** The parts so far, without joining them. */
  parts(): readonly Buffer[] {
    return this.chunks;
  }

  finish(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }

  /**
   * The message as a response body: joined into one Buffer below CHUNKED_MIN_BYTES, else a
   * ChunkedBody that references its large parts (a cached Listener of thousands of chains) instead
   * of copying them once more, and joins only the runs of small parts between them. The bytes are
   * finish()'s either way (docs/xds.md §12.2).
   */
  finishBody(): BodyBytes {
    if (this.size < CHUNKED_MIN_BYTES) return this.finish();
    const parts: Buffer[] = [];
    let run: Buffer[] = [];
    let runBytes = 0;
    const endRun = (): void => {
      if (run.length === 1) parts.push(run[0]);
      else if (run.length > 1) parts.push(Buffer.concat(run, runBytes));
      run = [];
      runBytes = 0;
    };
    for (const chunk of this.chunks) {
      if (chunk.length >= SHARED_PART_BYTES) {
        endRun();
        parts.push(chunk);
      } else {
        run.push(chunk);
        runBytes += chunk.length;
      }
    }
    endRun();
    return new ChunkedBody(parts, this.size);
  }
}

/** From this size on, a response body references its large parts (finishBody). */
export const CHUNKED_MIN_BYTES = 1024 * 1024;
/** Parts of at least this size are referenced by a chunked body; smaller ones are joined. */
const SHARED_PART_BYTES = 64 * 1024;

/**
 * Response body bytes as grpc-js reads them through SplicedMessage: a length, and a copy into its
 * frame. A Buffer is one; a ChunkedBody is another.
 */
export interface BodyBytes {
  readonly length: number;
  copy(target: Uint8Array, targetStart?: number): number;
}

/** A body made of parts copied in order: the bytes of their concatenation, never joined. */
export class ChunkedBody implements BodyBytes {
  constructor(
    readonly parts: readonly Buffer[],
    readonly length: number,
  ) {}

  copy(target: Uint8Array, targetStart = 0): number {
    let at = targetStart;
    for (const part of this.parts) at += part.copy(target, at);
    return at - targetStart;
  }
}

/** The bytes of a body as one Buffer (a Buffer as is). */
export function bodyBuffer(body: BodyBytes): Buffer {
  if (Buffer.isBuffer(body)) return body;
  const out = Buffer.allocUnsafe(body.length);
  body.copy(out, 0);
  return out;
}

/**
 * A response body shared by many streams plus a small per-stream trailer (the nonce field).
 *
 * @grpc/grpc-js frames a response by calling the method's serializer and then copying its result
 * into a fresh `length + 5` buffer using only `.byteLength` and `.copy(target, 5)`. Returning this
 * object from an identity serializer lets grpc-js assemble body + nonce straight into its own
 * frame buffer, so a push to N streams makes no per-stream copy of the body in our code.
 * `toBuffer()` gives the same bytes for anything that needs a real Buffer.
 */
export class SplicedMessage {
  constructor(
    readonly body: BodyBytes,
    readonly trailer: Buffer,
  ) {}

  get byteLength(): number {
    return this.body.length + this.trailer.length;
  }

  get length(): number {
    return this.byteLength;
  }

  copy(target: Uint8Array, targetStart = 0): number {
    const n = this.body.copy(target, targetStart);
    return n + this.trailer.copy(target, targetStart + n);
  }

  toBuffer(): Buffer {
    const out = Buffer.allocUnsafe(this.byteLength);
    this.copy(out, 0);
    return out;
  }
}

/** The `nonce` field of (Delta)DiscoveryResponse: field 5, a string (one small allocation). */
export function nonceTrailer(nonce: string): Buffer {
  const len = Buffer.byteLength(nonce, 'utf8');
  const buf = Buffer.allocUnsafe(1 + varintSize(len) + len);
  buf[0] = (5 << 3) | WIRE_LEN;
  buf.write(nonce, writeVarint(buf, 1, len), 'utf8');
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Reading (used by the test client and for cheap inspection of encoded responses)

export interface WireField {
  field: number;
  wireType: number;
  /** Varint value (wire type 0) */
  value?: number;
  /** Payload range of a length-delimited field (wire type 2) */
  start?: number;
  end?: number;
}

/** Reads a varint at `pos`: its value and the position after it. Throws when truncated. */
export function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let result = 0;
  let mul = 1;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++];
    result += (b & 0x7f) * mul;
    if ((b & 0x80) === 0) return [result, pos];
    mul *= 128;
  }
}

/** Iterates the top-level fields of an encoded message without decoding nested ones. */
export function* fields(buf: Uint8Array, start = 0, end = buf.length): Generator<WireField> {
  let pos = start;
  while (pos < end) {
    const [tag, p1] = readVarint(buf, pos);
    pos = p1;
    const field = Math.floor(tag / 8);
    const wireType = tag & 7;
    switch (wireType) {
      case 0: {
        const [v, p2] = readVarint(buf, pos);
        pos = p2;
        yield { field, wireType, value: v };
        break;
      }
      case 1:
        pos += 8;
        yield { field, wireType };
        break;
      case 2: {
        const [len, p2] = readVarint(buf, pos);
        yield { field, wireType, start: p2, end: p2 + len };
        pos = p2 + len;
        break;
      }
      case 5:
        pos += 4;
        yield { field, wireType };
        break;
      default:
        throw new Error(`unsupported wire type ${wireType}`);
    }
  }
  if (pos !== end) throw new Error('message overruns its end');
}

/** The first occurrence of a string field, or '' when absent. */
export function readStringField(buf: Uint8Array, field: number, start = 0, end = buf.length): string {
  for (const f of fields(buf, start, end)) {
    if (f.field === field && f.wireType === 2)
      return Buffer.from(buf.buffer, buf.byteOffset + f.start!, f.end! - f.start!).toString('utf8');
  }
  return '';
}
