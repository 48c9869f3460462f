/**
 * Holds the native-memory settings a deployed `convoy serve` runs with (the Dockerfile sets them).
 *
 * Pushing a Listener of a few MiB to a fleet makes grpc-js allocate one frame Buffer of that size
 * per stream. glibc serves allocations above its mmap threshold (128 KiB) with mmap and returns
 * them on free, but each such free raises the threshold (up to 32 MiB), after which the next
 * Buffers come from its heap and their memory stays with the process. Fixing the threshold keeps
 * the first behaviour. Measured with 1,000 simulated Envoys after a ListenerSet push on Node 24:
 * RSS 907 → 671 MiB (SotW) and 1,016 → 880 MiB (delta, after the SotW run in the same process).
 *
 * glibc also gives each thread that allocates its own arena (up to 8 per core: V8's GC helpers,
 * libuv's pool, the file provider's parse workers), and each keeps the freed memory of the cold
 * start's peak. Two arenas (the main one and one shared by the other threads) hold less of it:
 * measured at 5,000 ListenerSets with 200 delta Envoys on Node 24 (medians of 3), the arenas'
 * resident memory 78 → 47 MiB, the main heap's 107 → 124 MiB, steady RSS 852 → 784 MiB
 * (docs/operations.md §11). musl (Alpine) ignores both variables.
 */
export const MALLOC_ENV: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_ARENA_MAX: '2',
};

/** Returns whether this process was started with MALLOC_ENV (glibc reads it at start only). */
export function hasMallocEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return Object.entries(MALLOC_ENV).every(([k, v]) => env[k] === v);
}
