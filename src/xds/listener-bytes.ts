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
import { createHash } from 'node:crypto';
import { encodeMessage } from '../envoy/protos';
import { lenFieldSize, readVarint, writeLenHeader } from './wire';
import { contentHash } from './snapshot';

const LISTENER = 'envoy.config.listener.v3.Listener';
const FILTER_CHAIN = 'envoy.config.listener.v3.FilterChain';
const FILTER_CHAINS_FIELD = 3;
/** Below this many chains a plain encoding is as cheap and simpler. */
const MIN_CHAINS = 8;

/** Tags the chain-digest form of a Listener's version, so it never equals a plain content hash. */
const CHAINED_VERSION_TAG = 'convoy.listener.chains.v1\0';

/** One filter chain's bytes and their sha256, computed once per chain object. */
interface EncodedChain {
  readonly bytes: Buffer;
  readonly digest: Buffer;
}

const chainBytes = new WeakMap<object, EncodedChain>();

function encodeChain(chain: object): EncodedChain {
  let c = chainBytes.get(chain);
  if (!c) {
    const bytes = encodeMessage(FILTER_CHAIN, chain);
    c = { bytes, digest: createHash('sha256').update(bytes).digest() };
    chainBytes.set(chain, c);
  }
  return c;
}

const DIGEST_BYTES = 32;

/**
 * Where each filter chain of an encoded Listener lies in its bytes: chain i's field (tag, length,
 * value) spans `starts[i]` to `starts[i + 1]`, and its sha256 is `digests[32i, 32i + 32)`. Kept
 * per Listener encoding (keyed by its bytes, so it lives as long as the cache entry holding them),
 * it lets the next encoding of that Listener copy every run of unchanged chains as one slice
 * instead of looking up and splicing each of thousands of chains (docs/xds.md §12.3).
 */
interface ChainLayout {
  readonly chains: readonly object[];
  readonly starts: Uint32Array;
  readonly digests: Buffer;
}

const layouts = new WeakMap<Buffer, ChainLayout>();

/**
 * How far past the previous encoding's next chain the walk looks for the current chain: a chain
 * inserted, removed or replaced costs one step; a larger reordering falls back to the per-chain
 * cache, which is as correct and only slower.
 */
const LOOKAHEAD = 4;

/** A Listener's encoding and its version (CacheEntry.version). */
export interface EncodedListener {
  readonly bytes: Buffer;
  readonly version: string;
}

/** A run of the output: chains [from, to) of the previous encoding, or one chain encoded apart. */
type Piece = { from: number; to: number } | { chain: EncodedChain };

/**
 * Encodes a Listener object and gives its version; the translated objects passed in must not be
 * mutated afterwards. `previous` is the bytes of this Listener's previous encoding, if any: runs
 * of chains it shares with that encoding (the same objects, in the same order) are copied from it.
 *
 * The version of a Listener of at least MIN_CHAINS chains hashes its chains' digests instead of
 * all its bytes (listenerVersion), so a change of one chain of 20,000 hashes 20,000 cached 32-byte
 * digests (640 KB) instead of the whole Listener (tens of MB); smaller Listeners get contentHash.
 * The result depends on the Listener alone, never on `previous` (docs/xds.md §12.3).
 */
export function encodeListener(listener: object, previous?: Buffer): EncodedListener {
  const chains = (listener as { filter_chains?: object[] }).filter_chains;
  if (!chains || chains.length < MIN_CHAINS) {
    const bytes = encodeMessage(LISTENER, listener);
    return { bytes, version: contentHash(bytes) };
  }
  const rest: Record<string, unknown> = { ...listener };
  delete rest.filter_chains;
  const base = encodeMessage(LISTENER, rest);
  const split = offsetOfFirstFieldAbove(base, FILTER_CHAINS_FIELD);
  const prev = previous && layouts.get(previous);
  const pieces = prev ? piecesAfter(chains, prev) : chains.map((c) => ({ chain: encodeChain(c) }));

  let size = base.length;
  for (const p of pieces)
    size +=
      'chain' in p
        ? lenFieldSize(FILTER_CHAINS_FIELD, p.chain.bytes.length)
        : prev!.starts[p.to] - prev!.starts[p.from];
  const bytes = Buffer.allocUnsafe(size);
  const starts = new Uint32Array(chains.length + 1);
  const digests = Buffer.allocUnsafe(chains.length * DIGEST_BYTES);
  let at = base.copy(bytes, 0, 0, split);
  let i = 0;
  for (const p of pieces) {
    if ('chain' in p) {
      starts[i] = at;
      digests.set(p.chain.digest, i * DIGEST_BYTES);
      at = writeLenHeader(bytes, at, FILTER_CHAINS_FIELD, p.chain.bytes.length);
      at += p.chain.bytes.copy(bytes, at);
      i++;
    } else {
      const { starts: from, digests: digestsFrom } = prev!;
      digestsFrom.copy(digests, i * DIGEST_BYTES, p.from * DIGEST_BYTES, p.to * DIGEST_BYTES);
      const shift = at - from[p.from];
      for (let j = p.from; j < p.to; j++) starts[i++] = from[j] + shift;
      at += previous!.copy(bytes, at, from[p.from], from[p.to]);
    }
  }
  starts[i] = at;
  base.copy(bytes, at, split);
  layouts.set(bytes, { chains, starts, digests });
  return { bytes, version: chainedVersion(base.subarray(0, split), digests, base.subarray(split)) };
}

/**
 * The pieces of `chains` against a previous encoding's layout: each maximal run of chains that
 * follow one another there too becomes one piece copied from its bytes; any other chain is
 * encoded apart (through the per-chain cache). Pointer comparisons only, O(chains).
 */
function piecesAfter(chains: readonly object[], prev: ChainLayout): Piece[] {
  const pieces: Piece[] = [];
  const old = prev.chains;
  let j = 0;
  let run: { from: number; to: number } | undefined;
  for (const chain of chains) {
    let k = j;
    const stop = Math.min(old.length, j + 1 + LOOKAHEAD);
    while (k < stop && old[k] !== chain) k++;
    if (k < stop) {
      if (run && run.to === k) run.to = k + 1;
      else pieces.push((run = { from: k, to: k + 1 }));
      j = k + 1;
    } else {
      run = undefined;
      pieces.push({ chain: encodeChain(chain) });
    }
  }
  return pieces;
}

/**
 * The version of an encoded Listener, computed from its bytes alone: what encodeListener gives,
 * and the oracle its tests compare against. A Listener whose top level holds at least MIN_CHAINS
 * filter chains (field 3) is hashed as its bytes before the chains, the sha256 of each chain's
 * bytes in order, and its bytes after them; any other as contentHash(bytes). Equal bytes give equal
 * versions, and different bytes differ unless sha256 collides (the prefix length is hashed too,
 * and the digests have a fixed length, so the parts cannot be shifted against each other).
 */
export function listenerVersion(bytes: Buffer): string {
  const fields = topLevelFields(bytes);
  const chains = fields.filter((f) => f.field === FILTER_CHAINS_FIELD);
  if (chains.length < MIN_CHAINS) return contentHash(bytes);
  const first = chains[0];
  const last = chains[chains.length - 1];
  const digests = chains.map((c) =>
    createHash('sha256').update(bytes.subarray(c.valueStart, c.end)).digest(),
  );
  return chainedVersion(bytes.subarray(0, first.start), Buffer.concat(digests), bytes.subarray(last.end));
}

function chainedVersion(prefix: Buffer, digests: Buffer, suffix: Buffer): string {
  const h = createHash('sha256').update(CHAINED_VERSION_TAG);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(prefix.length);
  h.update(len).update(prefix);
  h.update(digests);
  h.update(suffix);
  return h.digest().subarray(0, 16).toString('base64url');
}

/**
 * Returns where the value of a field whose tag (`tag`) ended at `pos` starts and where the field
 * ends, by its wire type; shared by every walk over top-level fields so they skip alike.
 */
function fieldValue(buf: Buffer, tag: number, pos: number): { valueStart: number; end: number } {
  switch (tag & 7) {
    case 0:
      return { valueStart: pos, end: readVarint(buf, pos)[1] };
    case 1:
      return { valueStart: pos, end: pos + 8 };
    case 2: {
      const [len, q] = readVarint(buf, pos);
      return { valueStart: q, end: q + len };
    }
    case 5:
      return { valueStart: pos, end: pos + 4 };
    default:
      throw new Error(`unsupported wire type ${tag & 7}`);
  }
}

/** The top-level fields of a message: field number, where its tag starts and its value ends. */
function topLevelFields(buf: Buffer): { field: number; start: number; valueStart: number; end: number }[] {
  const out: { field: number; start: number; valueStart: number; end: number }[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const start = pos;
    const [tag, p] = readVarint(buf, pos);
    const { valueStart, end } = fieldValue(buf, tag, p);
    out.push({ field: Math.floor(tag / 8), start, valueStart, end });
    pos = end;
  }
  return out;
}

/** Offset of the tag of the first top-level field numbered above `field` (or the end). */
export function offsetOfFirstFieldAbove(buf: Buffer, field: number): number {
  let pos = 0;
  while (pos < buf.length) {
    const [tag, p] = readVarint(buf, pos);
    if (Math.floor(tag / 8) > field) return pos;
    pos = fieldValue(buf, tag, p).end;
  }
  return buf.length;
}
