import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { releaseDecodedMessageBuffers } from '../../src/xds/grpc-decoder-release';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { StreamDecoder } = require('@grpc/grpc-js/build/src/stream-decoder') as {
  StreamDecoder: new (max: number) => {
    write(data: Buffer): Buffer[];
    readPartialMessage: Buffer[];
    readCompressFlag: Buffer;
  };
};

/** gRPC framing: compression flag, big-endian length, message. */
function frame(message: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}

describe('releaseDecodedMessageBuffers', () => {
  test('applies to this grpc-js', () => {
    assert.equal(releaseDecodedMessageBuffers(), true);
    assert.equal(releaseDecodedMessageBuffers(), true, 'idempotent');
  });

  test('after a message, the decoder keeps no view of the buffers it was given', () => {
    releaseDecodedMessageBuffers();
    const message = randomBytes(300_000);
    const wire = frame(message);
    const chunks: Buffer[] = [];
    for (let i = 0; i < wire.length; i += 16_384) chunks.push(Buffer.from(wire.subarray(i, i + 16_384)));
    const d = new StreamDecoder(-1);
    const out = chunks.flatMap((c) => d.write(c));
    assert.equal(out.length, 1);
    assert.ok(out[0].equals(wire));
    assert.deepEqual(d.readPartialMessage, []);
    for (const c of chunks) assert.notEqual(d.readCompressFlag.buffer, c.buffer);
  });

  test('messages still decode exactly, however the stream is cut (random chunkings)', () => {
    releaseDecodedMessageBuffers();
    for (let seed = 0; seed < 50; seed++) {
      const messages = Array.from({ length: 1 + (seed % 7) }, (_, i) =>
        randomBytes((seed * 997 + i * 131) % 5000),
      );
      const wire = Buffer.concat(messages.map(frame));
      const d = new StreamDecoder(-1);
      const out: Buffer[] = [];
      for (let pos = 0; pos < wire.length;) {
        const n = 1 + Math.floor(Math.random() * 700);
        out.push(...d.write(wire.subarray(pos, pos + n)));
        pos += n;
      }
      assert.deepEqual(
        out.map((b) => b.subarray(5).toString('hex')),
        messages.map((m) => m.toString('hex')),
        `seed ${seed}`,
      );
    }
  });
});
