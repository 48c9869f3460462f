/**
 * The file provider's scan cache on disk (docs/architecture.md §10.2): what each file yielded
 * (its parsed and admitted documents, or its problems), kept between runs so a restart parses
 * and validates only the files whose content changed.
 *
 * Safety (never a wrong object): an entry is used only for the file it was made from and only
 * when the file's content hash (SHA-256 of its bytes, computed by the worker that reads the file
 * now) equals the recorded one; the whole cache is used only when its key matches, and the key
 * covers the cache format, the Convoy version, V8's version (the serialization format), the
 * scan limits and the code that scans (every loaded module of the parser, the API-server
 * imitation and the validation, by content). The file carries a SHA-256 of its body, so a
 * truncated or altered cache is ignored as a whole; an entry that does not decode to a scan of
 * its file is ignored alone (the file is then parsed). The cache holds Secrets' keys as the
 * files do: the directory is created private (0700) and the file written 0600, atomically.
 */
import { createHash, webcrypto } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { FileScan, ScanLimits } from './scan';
import { yamlParser } from './parse';

/** The cache's file name in its directory. */
export const CACHE_FILE_NAME = 'files-scan-cache.bin';
/** First bytes of a cache file: the format, bumped whenever the layout of an entry changes. */
const MAGIC = Buffer.from('convoy files scan cache\nformat 1\n');
const DIGEST_BYTES = 32;
/**
 * A scan whose serialized form is larger is not cached: decoding it on the main thread at once
 * would hold the event loop (a scan that large comes in slices from the workers).
 */
export const MAX_CACHED_SCAN_BYTES = 64 * 1024;

/** One file's cached scan: the content hash it was made from and the scan, serialized. */
export interface CachedScan {
  hash: string;
  bytes: Uint8Array;
}

/** What loading found, for the log. */
export interface CacheLoad {
  entries: number;
  /** Why the cache was not used (absent file, other key, corrupt); undefined when it was. */
  ignored?: string;
}

export class ScanDiskCache {
  private readonly path: string;
  /** Entries read from disk, by file name. */
  private loaded = new Map<string, CachedScan>();
  /** Entries for the next write, by file name. */
  private readonly next = new Map<string, CachedScan>();

  constructor(
    private readonly dir: string,
    private readonly key: string,
  ) {
    this.path = join(dir, CACHE_FILE_NAME);
  }

  /** Reads the cache file; anything wrong with it leaves the cache empty (never throws). */
  async load(): Promise<CacheLoad> {
    let data: Buffer;
    try {
      data = await readFile(this.path);
    } catch (err) {
      return {
        entries: 0,
        ignored: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'none yet' : 'unreadable',
      };
    }
    const body = data.subarray(MAGIC.length + DIGEST_BYTES);
    if (data.length < MAGIC.length + DIGEST_BYTES || !data.subarray(0, MAGIC.length).equals(MAGIC)) {
      return { entries: 0, ignored: 'another format' };
    }
    const digest = Buffer.from(await webcrypto.subtle.digest('SHA-256', body));
    if (!digest.equals(data.subarray(MAGIC.length, MAGIC.length + DIGEST_BYTES))) {
      return { entries: 0, ignored: 'corrupt (checksum)' };
    }
    let decoded: unknown;
    try {
      decoded = deserialize(body);
    } catch {
      return { entries: 0, ignored: 'corrupt (does not decode)' };
    }
    if (!isCacheBody(decoded)) return { entries: 0, ignored: 'corrupt (unexpected shape)' };
    if (decoded.key !== this.key)
      return { entries: 0, ignored: 'made by another version or with other limits' };
    this.loaded = new Map(decoded.files.map(([file, hash, bytes]) => [file, { hash, bytes }]));
    return { entries: this.loaded.size };
  }

  /** The cached scan of `file` read from disk, if any (its hash decides whether it applies). */
  lookup(file: string): CachedScan | undefined {
    return this.loaded.get(file);
  }

  /** Decodes a cached scan of `file`; undefined when it is not a scan of that file. */
  decode(file: string, entry: CachedScan): FileScan | undefined {
    let scan: unknown;
    try {
      scan = deserialize(entry.bytes);
    } catch {
      return undefined;
    }
    return isFileScan(scan) && scan.file === file ? scan : undefined;
  }

  /** Records `file`'s current scan for the next write. */
  keep(file: string, entry: CachedScan): void {
    this.next.set(file, entry);
  }

  /**
   * Writes the entries kept for the files in `present` (in that order), atomically, and drops
   * everything held in memory: the cache is written once per start.
   */
  async write(present: readonly string[]): Promise<number> {
    const files: [string, string, Uint8Array][] = [];
    for (const file of present) {
      const entry = this.next.get(file);
      if (entry) files.push([file, entry.hash, entry.bytes]);
    }
    this.next.clear();
    this.loaded.clear();
    const body = serialize({ key: this.key, files } satisfies CacheBody);
    const digest = Buffer.from(await webcrypto.subtle.digest('SHA-256', body));
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${process.pid}.tmp`;
    try {
      await writeFile(tmp, Buffer.concat([MAGIC, digest, body]), { mode: 0o600 });
      await chmod(tmp, 0o600);
      await rename(tmp, this.path);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    return files.length;
  }

  /** Whether the next write would differ from what was loaded (an entry missed, new or gone). */
  changedSinceLoad(): boolean {
    if (this.next.size !== this.loaded.size) return true;
    for (const [file, now] of this.next) if (this.loaded.get(file)?.hash !== now.hash) return true;
    return false;
  }

  /** Drops what is held in memory without writing. */
  discard(): void {
    this.next.clear();
    this.loaded.clear();
  }
}

interface CacheBody {
  key: string;
  files: [string, string, Uint8Array][];
}

function isCacheBody(v: unknown): v is CacheBody {
  if (v === null || typeof v !== 'object') return false;
  const b = v as Partial<CacheBody>;
  return (
    typeof b.key === 'string' &&
    Array.isArray(b.files) &&
    b.files.every(
      (f) =>
        Array.isArray(f) &&
        f.length === 3 &&
        typeof f[0] === 'string' &&
        typeof f[1] === 'string' &&
        f[2] instanceof Uint8Array,
    )
  );
}

function isFileScan(v: unknown): v is FileScan {
  if (v === null || typeof v !== 'object') return false;
  const s = v as Partial<FileScan>;
  return (
    typeof s.file === 'string' &&
    typeof s.broken === 'boolean' &&
    Array.isArray(s.problems) &&
    Array.isArray(s.entries) &&
    s.entries.every((e) => e !== null && typeof e === 'object' && typeof e.admission?.kind === 'string')
  );
}

/**
 * The key a cache must carry to be used: the format, `convoyVersion`, V8's version, the scan
 * limits, OpenSSL's version, and the content of every loaded module that takes part in a scan
 * (this folder, the validation, the store's object helpers, the utilities, generated types, the
 * key-pair check) and of the YAML parser's package. A build that changes any of them cannot read an older cache.
 */
export function scanCacheKey(convoyVersion: string, limits: ScanLimits): string {
  const h = createHash('sha256');
  h.update(MAGIC).update(`convoy ${convoyVersion}\nv8 ${process.versions.v8}\n`);
  // Scans carry Secrets' key-pair checks, made with the crypto library (secret-key-pair.ts).
  h.update(`openssl ${process.versions.openssl}\n`);
  h.update(`limits ${limits.maxFileBytes} ${limits.maxObjectBytes}\n`);
  // The yaml package is loaded on first use (parse.ts): load it here, so its modules are hashed
  // whether or not this process has parsed a file with it yet.
  yamlParser();
  const srcRoot = join(__dirname, '..', '..') + sep;
  const scanning = [
    'providers/files/',
    'validation/',
    'store/',
    'util/',
    'generated/',
    're2/',
    'pki/',
    'gateway/secret-key-pair.',
  ].map((d) => srcRoot + d.split('/').join(sep));
  const modules = Object.keys(require.cache)
    .filter(
      (m) =>
        scanning.some((d) => m.startsWith(d)) ||
        m.includes(`${sep}node_modules${sep}yaml${sep}`) ||
        m.includes(`${sep}node_modules${sep}re2-wasm${sep}`),
    )
    .sort();
  for (const m of modules) {
    h.update(
      `module ${m.startsWith(srcRoot) ? m.slice(srcRoot.length) : m.slice(m.lastIndexOf('node_modules'))}\n`,
    );
    try {
      h.update(readFileSync(m));
    } catch {
      h.update('unreadable');
    }
  }
  return h.digest('hex');
}
