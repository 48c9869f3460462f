/**
 * Encoding a Listener from per-chain parts.
 *
 * An HTTPS port of a large Gateway is one Listener with thousands of filter chains (one per SNI
 * hostname, GEP-1713). Adding a ListenerSet changes that Listener, and re-encoding all of it costs
 * ~100 ms at 5,000 chains. The translator returns the same FilterChain object for an unchanged
 * chain, so each chain is encoded once and remembered by identity; a Listener is then the encoding
 * of its other fields with the cached chain bytes spliced in.
 *
 * The result is byte-identical to protobufjs encoding the whole message: protobufjs writes fields
 * in field-number order, so the chains (field 3) go right after the fields numbered below 3.
 */
import { encodeMessage } from '../envoy/protos';
import { lenHeader, readVarint } from './wire';

const LISTENER = 'envoy.config.listener.v3.Listener';
const FILTER_CHAIN = 'envoy.config.listener.v3.FilterChain';
const FILTER_CHAINS_FIELD = 3;
/** Below this many chains a plain encoding is as cheap and simpler. */
const MIN_CHAINS = 8;

const chainBytes = new WeakMap<object, Buffer>();

function encodeChain(chain: object): Buffer {
  let b = chainBytes.get(chain);
  if (!b) {
    b = encodeMessage(FILTER_CHAIN, chain);
    chainBytes.set(chain, b);
  }
  return b;
}

/** Encodes a Listener object; the translated objects passed in must not be mutated afterwards. */
export function encodeListener(listener: object): Buffer {
  const chains = (listener as { filter_chains?: object[] }).filter_chains;
  if (!chains || chains.length < MIN_CHAINS) return encodeMessage(LISTENER, listener);
  const rest: Record<string, unknown> = { ...listener };
  delete rest.filter_chains;
  const base = encodeMessage(LISTENER, rest);
  const split = offsetOfFirstFieldAbove(base, FILTER_CHAINS_FIELD);
  const parts: Buffer[] = [base.subarray(0, split)];
  let size = split;
  for (const chain of chains) {
    const b = encodeChain(chain);
    const h = lenHeader(FILTER_CHAINS_FIELD, b.length);
    parts.push(h, b);
    size += h.length + b.length;
  }
  parts.push(base.subarray(split));
  size += base.length - split;
  return Buffer.concat(parts, size);
}

/** Offset of the tag of the first top-level field numbered above `field` (or the end). */
export function offsetOfFirstFieldAbove(buf: Buffer, field: number): number {
  let pos = 0;
  while (pos < buf.length) {
    const start = pos;
    const [tag, p] = readVarint(buf, pos);
    if (Math.floor(tag / 8) > field) return start;
    pos = p;
    switch (tag & 7) {
      case 0:
        pos = readVarint(buf, pos)[1];
        break;
      case 1:
        pos += 8;
        break;
      case 2: {
        const [len, q] = readVarint(buf, pos);
        pos = q + len;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        throw new Error(`unsupported wire type ${tag & 7}`);
    }
  }
  return buf.length;
}
