/**
 * Assigns ports to XListenerSet listeners that leave theirs unset or 0 (docs/gateway-api.md §29),
 * from the `--dynamic-port-range` pool, so that every replica and every restart gives the same
 * listener the same port.
 */
import { createHash } from 'node:crypto';

/** One listener that asks for a port, in the merged precedence order of its Gateway. */
export interface PortRequest {
  /** The listener's qualified name (`XListenerSet/ns/name/listener`): its identity. */
  identity: string;
  /** The port the XListenerSet's status reports for it, if any (recorded by an earlier build). */
  recorded?: number;
}

/** An inclusive port range. */
export interface PortPool {
  first: number;
  last: number;
}

/** Returns the slot (0 ≤ slot < size) a listener identity hashes to: the first 32 bits of its SHA-256. */
export function preferredSlot(identity: string, size: number): number {
  return createHash('sha256').update(identity).digest().readUInt32BE(0) % size;
}

/**
 * Returns the port of each request (same index), or undefined when the pool has none left (or
 * there is no pool).
 *
 * `taken` holds the ports the Gateway's other listeners declare. Two passes, each in request
 * order (the Gateway's precedence order): first every request keeps the port its status records
 * when that port is still in the pool and free, so a port once reported never moves because a
 * listener was added elsewhere; then each remaining request takes the first free port probing
 * upwards (wrapping) from the slot its identity hashes to. The result depends only on the
 * requests, their recorded ports and `taken`, never on time or on the replica, so a restart or
 * another replica computes the same ports; and no two requests share a port.
 */
export function assignDynamicPorts(
  requests: readonly PortRequest[],
  taken: ReadonlySet<number>,
  pool: PortPool | undefined,
): (number | undefined)[] {
  const out: (number | undefined)[] = requests.map(() => undefined);
  if (!pool || pool.last < pool.first) return out;
  const size = pool.last - pool.first + 1;
  const used = new Set<number>();
  const free = (port: number) => !taken.has(port) && !used.has(port);
  requests.forEach((r, i) => {
    const p = r.recorded;
    if (p !== undefined && Number.isInteger(p) && p >= pool.first && p <= pool.last && free(p)) {
      out[i] = p;
      used.add(p);
    }
  });
  let left = size - used.size;
  for (const p of taken) if (p >= pool.first && p <= pool.last) left--;
  requests.forEach((r, i) => {
    if (out[i] !== undefined || left <= 0) return;
    const start = preferredSlot(r.identity, size);
    for (let k = 0; k < size; k++) {
      const port = pool.first + ((start + k) % size);
      if (!free(port)) continue;
      out[i] = port;
      used.add(port);
      left--;
      return;
    }
  });
  return out;
}

/**
 * Parses `A-B` (`--dynamic-port-range`) into an inclusive pool; throws with a message saying what
 * is wrong. Both ends are ports (1–65535) and A ≤ B.
 */
export function parsePortPool(text: string): PortPool {
  const m = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  if (!m) throw new Error(`expected FIRST-LAST (e.g. 30000-30999), got ${JSON.stringify(text)}`);
  const first = Number(m[1]);
  const last = Number(m[2]);
  if (first < 1 || last > 65535) throw new Error(`ports must be within 1-65535, got ${text}`);
  if (first > last) throw new Error(`the first port must not exceed the last, got ${text}`);
  return { first, last };
}
