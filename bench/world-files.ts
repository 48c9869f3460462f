/**
 * Writes a benchmark world (world.ts) to a directory the way a user of file mode would keep it:
 * one object per file, one folder per namespace, cluster-scoped objects in `_cluster/` (an
 * underscore cannot start a namespace name, so the folder never collides with one). Every file
 * is written atomically (a temporary file beside it, then a rename), so a running Convoy never
 * reads one half-written.
 *
 *   node dist/bench/world-files.js --size large --dir /tmp/world [--format yaml|json]
 *
 * The layout, for the large world (24,000 files in 21 folders, plus `_cluster/`):
 *   _cluster/gatewayclass-convoy-bench.yaml, _cluster/namespace-tenant-0.yaml, …
 *   bench-gateway/gateway-knative.yaml
 *   tenant-3/listenerset-ls-3.yaml, tenant-3/secret-cert-3.yaml, tenant-3/httproute-route-3.yaml, …
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import type { KubeObject } from '../src/store/objects';
import { SIZES, World } from './world';

export type WorldFileFormat = 'yaml' | 'json';

/** Folder of cluster-scoped objects (no namespace can be named so). */
export const CLUSTER_FOLDER = '_cluster';

/**
 * The path of `obj`'s file relative to the world's directory: `<namespace>/<kind>-<name>.<ext>`,
 * or `_cluster/<kind>-<name>.<ext>` for an object without a namespace; kind in lower case.
 */
export function objectFileName(obj: KubeObject, format: WorldFileFormat = 'yaml'): string {
  const folder = obj.metadata.namespace || CLUSTER_FOLDER;
  return `${folder}/${obj.kind.toLowerCase()}-${obj.metadata.name}.${format}`;
}

/** The text of one object's file in `format`. */
export function objectFileText(obj: KubeObject, format: WorldFileFormat = 'yaml'): string {
  return format === 'json' ? JSON.stringify(obj, null, 2) + '\n' : stringify(obj, { lineWidth: 0 });
}

/**
 * Writes `text` to `path` atomically: into a temporary dot-file in the same folder (the file
 * provider skips names starting with "."), then renamed over `path`. Creates the folder.
 */
export function writeFileAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** Writes one object's file below `dir` atomically; returns its absolute path. */
export function writeObjectFile(dir: string, obj: KubeObject, format: WorldFileFormat = 'yaml'): string {
  const path = join(dir, objectFileName(obj, format));
  writeFileAtomic(path, objectFileText(obj, format));
  return path;
}

/** Removes one object's file below `dir` (a deletion, as a user would make it). */
export function removeObjectFile(dir: string, obj: KubeObject, format: WorldFileFormat = 'yaml'): void {
  rmSync(join(dir, objectFileName(obj, format)), { force: true });
}

export interface WriteWorldOptions {
  format?: WorldFileFormat;
  /** Empty the directory first. Default false. */
  clean?: boolean;
}

/** Writes every object of `world` below `dir`, one file each; returns how many files. */
export function writeWorldFiles(world: World, dir: string, opts: WriteWorldOptions = {}): number {
  const format = opts.format ?? 'yaml';
  if (opts.clean) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let n = 0;
  for (const obj of world.objects()) {
    writeObjectFile(dir, obj, format);
    n++;
  }
  return n;
}

function main(): void {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const size = SIZES[arg('size') ?? 'small'];
  const dir = arg('dir');
  const format = (arg('format') ?? 'yaml') as WorldFileFormat;
  if (!size || !dir || (format !== 'yaml' && format !== 'json')) {
    throw new Error(
      `usage: world-files --dir DIR [--size ${Object.keys(SIZES).join('|')}] [--format yaml|json]`,
    );
  }
  const started = Date.now();
  const files = writeWorldFiles(new World({ size }), dir, { format, clean: true });
  console.log(`${files} files (${size.name}, ${format}) written to ${dir} in ${Date.now() - started} ms`);
}

if (require.main === module) main();
