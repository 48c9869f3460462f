/**
 * Lets every gRPC call drop the buffers of the last message it received.
 *
 * @grpc/grpc-js (1.14) assembles each incoming message in a per-call StreamDecoder, which keeps
 * views of the message it just finished (the chunk slices and the 1-byte compression flag) until
 * the next message begins. A view pins the whole buffer behind it, here the HTTP/2 socket read
 * buffers. A SotW Envoy's last request is usually an ACK naming its whole subscription (~200 KB
 * for 5,000 route configurations), and it may send nothing more for hours: measured at 1,000 SotW
 * streams, 230 MiB of ArrayBuffers stayed pinned (RSS 1,098 → 817 MiB once released).
 *
 * After a message completes, the decoder reassigns both fields before it reads them again, so
 * clearing them then changes nothing but memory. The patch is applied only if a probe decode shows
 * the decoder has exactly that shape; otherwise grpc-js is left as it is.
 */
import type { Logger } from '../observability/logger';

interface DecoderShape {
  readState: number;
  readPartialMessage: Buffer[];
  readCompressFlag: Buffer;
  write(data: Buffer): Buffer[];
}

type DecoderClass = { prototype: DecoderShape; new (maxReadMessageLength: number): DecoderShape };

const NO_DATA = 0;
const EMPTY_FLAG = Buffer.alloc(1);
const PATCHED = Symbol.for('convoy.grpcDecoderRelease');

function loadDecoder(): DecoderClass | undefined {
  try {
    // Not part of grpc-js's public API: probed below before anything is changed.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('@grpc/grpc-js/build/src/stream-decoder') as { StreamDecoder?: DecoderClass })
      .StreamDecoder;
  } catch {
    return undefined;
  }
}

/** True when a decoder behaves as described above after decoding one framed message. */
function hasExpectedShape(Decoder: DecoderClass): boolean {
  const framed = Buffer.from([0, 0, 0, 0, 2, 0x0a, 0x00]);
  const d = new Decoder(-1);
  const out = d.write(framed);
  return (
    out.length === 1 &&
    out[0].equals(framed) &&
    d.readState === NO_DATA &&
    Array.isArray(d.readPartialMessage) &&
    Buffer.isBuffer(d.readCompressFlag)
  );
}

/** Applies the release once per process; returns whether it is in effect. */
export function releaseDecodedMessageBuffers(logger?: Logger): boolean {
  const Decoder = loadDecoder();
  if (!Decoder) return false;
  const proto = Decoder.prototype as DecoderShape & { [PATCHED]?: boolean };
  if (proto[PATCHED]) return true;
  if (!hasExpectedShape(Decoder)) {
    logger?.info('xds: grpc-js StreamDecoder has an unexpected shape; last-message buffers are not released');
    return false;
  }
  const write = proto.write;
  proto.write = function (this: DecoderShape, data: Buffer): Buffer[] {
    const messages = write.call(this, data);
    if (this.readState === NO_DATA) {
      this.readPartialMessage = [];
      this.readCompressFlag = EMPTY_FLAG;
    }
    return messages;
  };
  proto[PATCHED] = true;
  return true;
}
