import { PartsWriter, lenHeader, lenField } from './wire';
import type { BodyBytes } from './wire';
import type { CacheEntry } from './snapshot';

/**
 * Encoders for nonce-less (Delta)DiscoveryResponse bodies around cached resource bytes.
 * The per-stream nonce (field 5) is appended at send time (see wire.ts SplicedMessage).
 *
 * DiscoveryResponse: version_info = 1, resources = 2 (Any), type_url = 4, nonce = 5. Fields are
 * written in number order, so body + nonce is byte-identical to protobufjs encoding the message.
 * DeltaDiscoveryResponse: system_version_info = 1, resources = 2 (Resource{version = 1,
 * resource = 2, name = 3}), type_url = 4, removed_resources = 6, nonce = 5 (written last; field
 * order on the wire does not matter to parsers).
 */

const anyTypeUrlFields = new Map<string, Buffer>();

/** `Any.type_url` (field 1) for a type, encoded once. */
function anyTypeUrlField(typeUrl: string): Buffer {
  let f = anyTypeUrlFields.get(typeUrl);
  if (!f) {
    f = lenField(1, typeUrl);
    anyTypeUrlFields.set(typeUrl, f);
  }
  return f;
}

/** Appends `field: Any{type_url, value: bytes}` to w. */
function writeAny(w: PartsWriter, field: number, typeUrl: string, bytes: Buffer): void {
  const prefix = anyTypeUrlField(typeUrl);
  const valueHeader = lenHeader(2, bytes.length);
  w.raw(lenHeader(field, prefix.length + valueHeader.length + bytes.length));
  w.raw(prefix).raw(valueHeader).raw(bytes);
}

export function encodeSotwBody(typeUrl: string, version: string, entries: readonly CacheEntry[]): BodyBytes {
  const w = new PartsWriter();
  w.stringField(1, version);
  for (const e of entries) writeAny(w, 2, typeUrl, e.bytes);
  w.stringField(4, typeUrl);
  return w.finishBody();
}

export function encodeDeltaBody(
  typeUrl: string,
  systemVersion: string,
  entries: readonly CacheEntry[],
  removed: readonly string[],
): BodyBytes {
  const w = new PartsWriter();
  w.stringField(1, systemVersion);
  for (const e of entries) {
    const inner = new PartsWriter();
    inner.stringField(1, e.version);
    writeAny(inner, 2, typeUrl, e.bytes);
    inner.stringField(3, e.name);
    w.raw(lenHeader(2, inner.length));
    // Referencing the inner parts avoids copying the resource bytes twice.
    for (const part of inner.parts()) w.raw(part);
  }
  w.stringField(4, typeUrl);
  for (const name of removed) w.field(6, Buffer.from(name, 'utf8'));
  return w.finishBody();
}
