import { createHash } from 'node:crypto';
import { lowerBoundByName } from '../util/compare';

/**
 * The set version of a type (docs/xds.md §12.1), computed so that a change of a few resources
 * costs a few blocks, not every name.
 *
 * The entries, sorted by name, are cut into blocks: a block ends after an entry whose name hashes
 * to a boundary (about one name in BLOCK_SPAN, decided by the name alone) or at the end. Each
 * block's digest is a hash of its `name version` lines; the version is a hash of the block digests
 * in order. The cuts depend only on the names, so the same set gives the same version whatever
 * changes led to it (every replica and restart agree), and a change moves the cuts only around the
 * entries it touched: the blocks of untouched entries keep their digests.
 */

/** An entry as the set version sees it. */
export interface VersionedName {
  readonly name: string;
  readonly version: string;
}

/** One block: how many consecutive sorted entries it holds, and their digest. */
export interface VersionBlock {
  readonly count: number;
  readonly digest: Buffer;
}

/** The blocks of a sorted set of entries and the version they give. */
export interface BlockedVersion {
  readonly version: string;
  readonly blocks: readonly VersionBlock[];
}

/** Expected entries per block: a name is a boundary when the low bits of its hash are all set. */
const BLOCK_SPAN = 64;

/** Whether a block ends after the entry of this name (FNV-1a of its UTF-16 code units). */
function isBoundary(name: string): boolean {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h & (BLOCK_SPAN - 1)) === BLOCK_SPAN - 1;
}

function blockDigest(sorted: readonly VersionedName[], from: number, to: number): Buffer {
  let text = '';
  for (let i = from; i < to; i++) text += sorted[i].name + '\0' + sorted[i].version + '\n';
  return createHash('sha256').update(text).digest().subarray(0, 16);
}

/** Cuts sorted[from, to) into blocks (to must be the end or follow a boundary) and appends them. */
function chunkInto(out: VersionBlock[], sorted: readonly VersionedName[], from: number, to: number): void {
  let start = from;
  for (let i = from; i < to; i++) {
    if (i === to - 1 || isBoundary(sorted[i].name)) {
      out.push({ count: i + 1 - start, digest: blockDigest(sorted, start, i + 1) });
      start = i + 1;
    }
  }
}

function versionOf(blocks: readonly VersionBlock[]): string {
  // One update of the joined digests (the same bytes as one update per block, fewer calls).
  const joined = Buffer.concat(
    blocks.map((b) => b.digest),
    blocks.length * 16,
  );
  return createHash('sha256').update(joined).digest().subarray(0, 16).toString('base64url');
}

/** The set version of entries sorted by name, computed from every entry. */
export function blockedVersion(sorted: readonly VersionedName[]): BlockedVersion {
  const blocks: VersionBlock[] = [];
  chunkInto(blocks, sorted, 0, sorted.length);
  return { version: versionOf(blocks), blocks };
}

/**
 * The set version of `sorted`, which differs from `prevSorted` (whose blocks are `prevBlocks`) only
 * in the entries named in `touched` (replaced, added or removed). Equal to blockedVersion(sorted):
 * the blocks holding or bordering a touched name, and the block after each, are cut again from
 * the new entries; every other block is the previous one. Why that is enough: a run of recut
 * blocks starts after an unchanged boundary (or at the start) and ends with a block no touched
 * name falls in, so its last entry, a boundary or the last of all, is still there and still ends
 * a block.
 */
export function patchedVersion(
  prevSorted: readonly VersionedName[],
  prevBlocks: readonly VersionBlock[],
  sorted: readonly VersionedName[],
  touched: readonly string[],
): BlockedVersion {
  if (prevBlocks.length === 0 || sorted.length === 0) return blockedVersion(sorted);
  // Block index of every previous entry position is found through the blocks' end positions.
  const ends: number[] = new Array<number>(prevBlocks.length);
  let end = 0;
  for (let b = 0; b < prevBlocks.length; b++) ends[b] = end += prevBlocks[b].count;
  const dirty = new Uint8Array(prevBlocks.length + 1);
  for (const name of touched) {
    // The first previous position whose name is not below this one: the name's own entry, or
    // where it would go (a name put first in a block leaves the block before, which ends with a
    // boundary, as it was).
    dirty[blockAt(ends, lowerBoundByName(prevSorted, name))] = 1;
  }
  for (let b = prevBlocks.length - 1; b >= 0; b--) if (dirty[b]) dirty[b + 1] = 1;
  const blocks: VersionBlock[] = [];
  let cursor = 0; // position in `sorted`
  for (let b = 0; b < prevBlocks.length;) {
    if (!dirty[b]) {
      blocks.push(prevBlocks[b]);
      cursor += prevBlocks[b].count;
      b++;
      continue;
    }
    let last = b;
    while (last + 1 < prevBlocks.length && dirty[last + 1]) last++;
    // The run's last block is untouched (or the last of all): its last entry is in `sorted` too.
    const to =
      last === prevBlocks.length - 1
        ? sorted.length
        : lowerBoundByName(sorted, prevSorted[ends[last] - 1].name) + 1;
    chunkInto(blocks, sorted, cursor, to);
    cursor = to;
    b = last + 1;
  }
  return { version: versionOf(blocks), blocks };
}

/** The index of the block holding position `at` (the last block for the end position). */
function blockAt(ends: readonly number[], at: number): number {
  let lo = 0;
  let hi = ends.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ends[mid] <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
