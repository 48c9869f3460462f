import * as fs from 'node:fs';
import * as path from 'node:path';
import { MissingReferenceError } from './pod-env';
import type { EnvSources } from './pod-env';

/**
 * A pod's volumes for the pod runner: ConfigMap, Secret and emptyDir volumes are materialised in
 * a per-pod directory, and each container gets a shell prologue that, inside the container's
 * private mount namespace, bind-mounts them at their mountPath. A mountPath whose directory does
 * not exist (e.g. /etc/secret-volume) is created on an overlay of its nearest existing ancestor,
 * whose upper layer is in the pod directory, so nothing is ever written into the host's /etc.
 */

export interface Volume {
  name: string;
  configMap?: { name: string; items?: KeyToPath[]; optional?: boolean };
  secret?: { secretName: string; items?: KeyToPath[]; optional?: boolean };
  emptyDir?: Record<string, unknown>;
}

export interface KeyToPath {
  key: string;
  path: string;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  readOnly?: boolean;
}

/**
 * The files of a ConfigMap or Secret volume (relative path → content), or 'dir' for an empty
 * directory. Undefined for volume types the pod runner ignores (projected service-account
 * tokens, downwardAPI), which then mount nothing.
 */
export function volumeFiles(v: Volume, sources: EnvSources): Map<string, string> | 'dir' | undefined {
  if (v.emptyDir) return 'dir';
  const ref = v.configMap
    ? { ...v.configMap }
    : v.secret
      ? { ...v.secret, name: v.secret.secretName }
      : undefined;
  if (!ref) return undefined;
  const what = v.configMap ? 'configmap' : 'secret';
  const data = v.configMap ? sources.configMap(ref.name) : sources.secret(ref.name);
  if (!data) {
    if (ref.optional) return new Map();
    throw new MissingReferenceError(`${what} "${ref.name}" not found (volume ${v.name})`);
  }
  const files = new Map<string, string>();
  if (ref.items && ref.items.length > 0) {
    for (const item of ref.items) {
      if (data[item.key] === undefined) {
        if (ref.optional) continue;
        throw new MissingReferenceError(`key "${item.key}" not found in ${what} "${ref.name}"`);
      }
      files.set(safeRelative(item.path), data[item.key]);
    }
  } else {
    for (const [k, value] of Object.entries(data)) files.set(safeRelative(k), value);
  }
  return files;
}

/** `p` if it is a relative path that stays inside its volume, else throws. */
function safeRelative(p: string): string {
  const norm = path.posix.normalize(p);
  if (path.posix.isAbsolute(norm) || norm.startsWith('..')) throw new Error(`volume path escapes: ${p}`);
  return norm;
}

/** Writes each volume under `root/<volume name>`; returns the host directory of each mounted volume. */
export function materialiseVolumes(
  volumes: readonly Volume[],
  sources: EnvSources,
  root: string,
): Map<string, string> {
  const dirs = new Map<string, string>();
  for (const v of volumes) {
    const files = volumeFiles(v, sources);
    if (files === undefined) continue;
    const dir = path.join(root, v.name);
    fs.mkdirSync(dir, { recursive: true });
    if (files !== 'dir') {
      for (const [rel, content] of files) {
        fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
        fs.writeFileSync(path.join(dir, rel), content, { mode: v.secret ? 0o600 : 0o644 });
      }
    }
    dirs.set(v.name, dir);
  }
  return dirs;
}

/** Single-quotes `s` for /bin/sh. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The nearest ancestor of `target` (itself included) for which `exists` says yes. */
function nearestExisting(target: string, exists: (p: string) => boolean): string {
  let p = target;
  while (p !== '/' && !exists(p)) p = path.posix.dirname(p);
  return p;
}

export interface MountPlanInput {
  /** Host directory of each materialised volume. */
  volumeDirs: ReadonlyMap<string, string>;
  mounts: readonly VolumeMount[];
  /** Directory for overlay upper/work layers (on a file system overlayfs accepts as upper). */
  scratch: string;
  /** Whether a path exists in the host's file system (injected for tests). */
  exists: (p: string) => boolean;
  /** Whether a materialised source is a file (subPath to a key), injected for tests. */
  isFile: (p: string) => boolean;
}

/**
 * The shell commands that mount a container's volumes, to run first in its private mount
 * namespace. Overlays come first (one per distinct existing ancestor that lacks a mountPath,
 * never the root directory, which would hide /proc and /dev), then directories or files are
 * created, then bind mounts, read-only ones remounted read-only.
 */
export function mountScript(input: MountPlanInput): string {
  const lines: string[] = [];
  const overlays = new Set<string>();
  const binds: { source: string; target: string; file: boolean; readOnly: boolean }[] = [];
  for (const m of input.mounts) {
    const dir = input.volumeDirs.get(m.name);
    if (dir === undefined) continue;
    const target = path.posix.normalize(m.mountPath).replace(/(.)\/+$/, '$1');
    if (!path.posix.isAbsolute(target)) throw new Error(`mountPath must be absolute: ${m.mountPath}`);
    const source = m.subPath ? path.join(dir, safeRelative(m.subPath)) : dir;
    if (!input.exists(target)) {
      const anchor = nearestExisting(path.posix.dirname(target), input.exists);
      if (anchor === '/')
        throw new Error(`mountPath ${target}: its top-level directory does not exist on this host`);
      overlays.add(anchor);
    }
    binds.push({ source, target, file: input.isFile(source), readOnly: m.readOnly === true });
  }
  let i = 0;
  for (const anchor of [...overlays].sort()) {
    const upper = path.join(input.scratch, `overlay-${i}`, 'upper');
    const work = path.join(input.scratch, `overlay-${i++}`, 'work');
    lines.push(`mkdir -p ${shellQuote(upper)} ${shellQuote(work)}`);
    lines.push(
      `mount -t overlay convoy-pod -o ${shellQuote(`lowerdir=${anchor},upperdir=${upper},workdir=${work}`)} ${shellQuote(anchor)}`,
    );
  }
  for (const b of binds) {
    if (b.file)
      lines.push(`mkdir -p ${shellQuote(path.posix.dirname(b.target))} && touch ${shellQuote(b.target)}`);
    else lines.push(`mkdir -p ${shellQuote(b.target)}`);
    lines.push(`mount --bind ${shellQuote(b.source)} ${shellQuote(b.target)}`);
    if (b.readOnly) lines.push(`mount -o remount,bind,ro ${shellQuote(b.target)}`);
  }
  return lines.join('\n');
}
