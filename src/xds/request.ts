import { messageType } from '../envoy/protos';
import type { NodeInfo, StatusDetail } from './stream';
import { readVarint } from './wire';

/**
 * A decoded envoy.service.discovery.v3.DiscoveryRequest whose `resource_names` stay encoded.
 *
 * Envoy repeats its whole subscription in every SotW request, ACKs included: with thousands of
 * EDS names per Envoy, decoding and hashing those strings on every ACK dominated the server's CPU.
 * The names are kept as the raw bytes of their fields; a stream compares them with the previous
 * request's bytes and decodes them only when they differ.
 */
export interface SotwRequest {
  version_info: string;
  node: NodeInfo | null;
  type_url: string;
  response_nonce: string;
  error_detail: StatusDetail | null;
  /** The encoded `resource_names` fields (tag, length, bytes for each), in request order. */
  namesRaw: Buffer;
  /** Number of names in namesRaw. */
  nameCount: number;
}

const EMPTY = Buffer.alloc(0);

export function decodeSotwRequest(buf: Buffer): SotwRequest {
  const req: SotwRequest = {
    version_info: '',
    node: null,
    type_url: '',
    response_nonce: '',
    error_detail: null,
    namesRaw: EMPTY,
    nameCount: 0,
  };
  let namesStart = -1;
  let namesEnd = -1;
  let scattered: Buffer[] | undefined;
  let pos = 0;
  while (pos < buf.length) {
    const fieldStart = pos;
    const [tag, p1] = readVarint(buf, pos);
    pos = p1;
    const field = Math.floor(tag / 8);
    const wireType = tag & 7;
    if (wireType !== 2) {
      // Not used by DiscoveryRequest; skip like any parser would.
      if (wireType === 0) pos = readVarint(buf, pos)[1];
      else if (wireType === 1) pos += 8;
      else if (wireType === 5) pos += 4;
      else throw new Error(`DiscoveryRequest: unsupported wire type ${wireType}`);
      continue;
    }
    const [len, p2] = readVarint(buf, pos);
    const start = p2;
    const end = p2 + len;
    if (end > buf.length) throw new Error('DiscoveryRequest: field overruns the message');
    pos = end;
    switch (field) {
      case 1:
        req.version_info = buf.toString('utf8', start, end);
        break;
      case 2:
        req.node = messageType('envoy.config.core.v3.Node').decode(buf.subarray(start, end)) as NodeInfo;
        break;
      case 3:
        req.nameCount++;
        if (namesStart < 0) namesStart = fieldStart;
        else if (fieldStart !== namesEnd) {
          // Names interleaved with other fields (legal, unusual): collect the pieces.
          scattered ??= [buf.subarray(namesStart, namesEnd)];
          scattered.push(buf.subarray(fieldStart, end));
        }
        if (!scattered) namesEnd = end;
        break;
      case 4:
        req.type_url = buf.toString('utf8', start, end);
        break;
      case 5:
        req.response_nonce = buf.toString('utf8', start, end);
        break;
      case 6:
        req.error_detail = messageType('google.rpc.Status').decode(buf.subarray(start, end)) as StatusDetail;
        break;
      default:
        break; // resource_locators (7) and unknown fields
    }
  }
  if (scattered) req.namesRaw = Buffer.concat(scattered);
  else if (namesStart >= 0) req.namesRaw = buf.subarray(namesStart, namesEnd); // a view: copy to keep
  return req;
}

/** Decodes the names kept in SotwRequest.namesRaw. */
export function decodeNames(raw: Buffer): string[] {
  const names: string[] = [];
  let pos = 0;
  while (pos < raw.length) {
    pos = readVarint(raw, pos)[1]; // tag: always field 3, length-delimited
    const [len, p] = readVarint(raw, pos);
    names.push(raw.toString('utf8', p, p + len));
    pos = p + len;
  }
  return names;
}
