/**
 * Returns the lengths of the longest common head and tail of two lists, compared by identity,
 * which never overlap. The incremental paths use it to find the few nodes a change replaced
 * between two lists that share every other node (docs/architecture.md §8).
 */
export function commonEnds<T>(was: readonly T[], now: readonly T[]): { head: number; tail: number } {
  const shorter = Math.min(was.length, now.length);
  let head = 0;
  while (head < shorter && was[head] === now[head]) head++;
  let tail = 0;
  while (tail < shorter - head && was[was.length - 1 - tail] === now[now.length - 1 - tail]) tail++;
  return { head, tail };
}
