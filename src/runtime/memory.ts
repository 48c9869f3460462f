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

/**
 * The V8 options the image starts `convoy serve` with (its NODE_OPTIONS; V8 sizes the heap when
 * the process starts, so Convoy cannot set them for itself).
 *
 * `--max-semi-space-size=16` caps V8's young generation at 2 × 16 MiB instead of the 2 × 64 MiB
 * V8 grows it to on a large machine during a cold start and then keeps, resident, for good: at
 * 5,000 ListenerSets with 200 delta Envoys the steady RSS was ~100 MiB lower
 * (bench/README.md, "Steady RSS, session 16"; docs/operations.md §11).
 */
export const LAUNCH_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=16'];

/** The option's name: `--max-semi-space-size` for `--max-semi-space-size=16`. */
function optionName(option: string): string {
  return option.replace(/=.*$/, '').replace(/_/g, '-');
}

/**
 * Returns the environment to start `convoy serve` with as the image does: MALLOC_ENV, and
 * `base`'s NODE_OPTIONS followed by each of LAUNCH_NODE_OPTIONS that it does not set itself (an
 * option already there wins), for benchmarks and tools that start Convoy as deployed.
 */
export function launchEnv(base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const own = (base.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
  const named = new Set(own.map(optionName));
  const added = LAUNCH_NODE_OPTIONS.filter((o) => !named.has(optionName(o)));
  return { ...MALLOC_ENV, NODE_OPTIONS: [...own, ...added].join(' ') };
}
