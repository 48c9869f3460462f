import * as path from 'node:path';
import * as fs from 'node:fs';
import type * as protobuf from 'protobufjs';
import { addCommonProtos, loadProtosWithOptionsSync } from '@grpc/proto-loader/build/src/util';

/**
 * Loads the Envoy API protos named in protos/envoy-manifest.json from the installed
 * @grpc/grpc-js-xds package (never copied into this repository) into one protobufjs Root.
 * The Root is loaded once per process; every encoder and decoder shares it.
 */

interface Manifest {
  package: string;
  includeDirs: string[];
  files: string[];
}

let cachedRoot: protobuf.Root | undefined;

/** Returns the path of protos/envoy-manifest.json, searched upwards from this module's folder. */
function findManifest(): string {
  // Works from src/ (ts-node) and from dist/src/ (compiled).
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'protos', 'envoy-manifest.json');
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error('protos/envoy-manifest.json not found above ' + __dirname);
}

/** Returns the protobufjs Root of the Envoy protos, loading it on the first call. */
export function envoyRoot(): protobuf.Root {
  if (cachedRoot) return cachedRoot;
  // Registers descriptor.proto and friends with protobufjs; the Envoy annotations import them.
  addCommonProtos();
  const manifestPath = findManifest();
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as Manifest;
  const pkgDir = path.dirname(require.resolve(`${manifest.package}/package.json`));
  const root = loadProtosWithOptionsSync(manifest.files, {
    keepCase: true,
    includeDirs: manifest.includeDirs.map((d) => path.join(pkgDir, d)),
  });
  root.resolveAll();
  cachedRoot = root;
  return root;
}

const typeCache = new Map<string, protobuf.Type>();

/** Looks up a message type by its full name, e.g. "envoy.config.listener.v3.Listener". */
export function messageType(fullName: string): protobuf.Type {
  let t = typeCache.get(fullName);
  if (!t) {
    t = envoyRoot().lookupType(fullName);
    typeCache.set(fullName, t);
  }
  return t;
}

/**
 * Holds whether encodeMessage checks each message against its schema first (protobufjs `verify`).
 *
 * The translator's output is typed by the message types generated from these protos, so the
 * compiler already rejects unknown fields and wrong types; `verify` re-checked that at run time
 * and cost a quarter of encoding a large fleet (~0.15 s of a 5,000-listener cold build). Tests keep
 * it on (CONVOY_VERIFY_XDS=1, set by the test scripts) so a translator bug still fails loudly there.
 */
let verifyEncoding = process.env.CONVOY_VERIFY_XDS === '1';

/** Turns schema verification in encodeMessage on or off (see verifyEncoding). */
export function setVerifyEncoding(on: boolean): void {
  verifyEncoding = on;
}

/**
 * Encodes a plain message object to protobuf bytes.
 *
 * Nested google.protobuf.Any fields may be given as `{ '@type': 'type.googleapis.com/…', ...fields }`;
 * protobufjs packs them using this Root. With verification on, throws on fields of the wrong type
 * (see verifyEncoding).
 */
export function encodeMessage(fullName: string, message: object): Buffer {
  const type = messageType(fullName);
  if (verifyEncoding) {
    const err = type.verify(message);
    if (err && !err.includes('@type')) throw new Error(`${fullName}: ${err}`);
  }
  const out = type.encode(type.fromObject(message)).finish();
  // protobufjs returns a Buffer under Node; copy only if it did not.
  return Buffer.isBuffer(out) ? out : Buffer.from(out);
}

/** Decodes protobuf bytes to a plain object in proto3 JSON form (enums and 64-bit integers as strings). */
export function decodeMessage<T = Record<string, unknown>>(fullName: string, bytes: Uint8Array): T {
  const type = messageType(fullName);
  return type.toObject(type.decode(bytes), {
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
    json: true,
  }) as T;
}

/** Wraps a message as an Any object for embedding in another message. */
export function toAny(typeUrlSuffix: string, message: object): { '@type': string } & Record<string, unknown> {
  return { '@type': `type.googleapis.com/${typeUrlSuffix}`, ...(message as Record<string, unknown>) };
}
