/**
 * An IPv4 address pool over one /24 of a documentation range (192.0.2.0/24 for pods,
 * 198.51.100.0/24 for load balancers): hands out the lowest free host address, keeps the ones
 * listed as reserved (the bridge's own address), and takes addresses back. Pure, so the pod
 * runner and the load-balancer controller share it and it is unit-tested on its own.
 */
export class AddressPool {
  private readonly prefix: string;
  private readonly used = new Map<string, string>();

  /** `cidr` must be an IPv4 /24 such as 192.0.2.0/24; `first`..`last` bound the host part. */
  constructor(
    cidr: string,
    private readonly first = 1,
    private readonly last = 254,
    reserved: readonly string[] = [],
  ) {
    const m = /^(\d{1,3}\.\d{1,3}\.\d{1,3})\.0\/24$/.exec(cidr);
    if (!m) throw new Error(`AddressPool needs an IPv4 /24 like 192.0.2.0/24, got ${cidr}`);
    if (first < 1 || last > 254 || first > last) throw new Error(`bad host range ${first}..${last}`);
    this.prefix = m[1];
    for (const r of reserved) this.used.set(r, '(reserved)');
  }

  /** Gives `owner` an address: the one it already holds, else the lowest free one; throws when full. */
  allocate(owner: string): string {
    for (const [ip, o] of this.used) if (o === owner) return ip;
    for (let h = this.first; h <= this.last; h++) {
      const ip = `${this.prefix}.${h}`;
      if (!this.used.has(ip)) {
        this.used.set(ip, owner);
        return ip;
      }
    }
    throw new Error(`address pool ${this.prefix}.0/24 is exhausted`);
  }

  /**
   * Gives `owner` exactly `ip` when it lies in the pool's host range and nobody else holds it
   * (dropping any other address `owner` held); returns undefined, changing nothing, otherwise.
   */
  claim(owner: string, ip: string): string | undefined {
    if (!this.contains(ip)) return undefined;
    const host = Number(ip.slice(this.prefix.length + 1));
    if (!/^\d{1,3}$/.test(ip.slice(this.prefix.length + 1)) || host < this.first || host > this.last)
      return undefined;
    const holder = this.used.get(ip);
    if (holder !== undefined && holder !== owner) return undefined;
    this.release(owner);
    this.used.set(ip, owner);
    return ip;
  }

  /** Returns `owner`'s address to the pool (no-op when it holds none). */
  release(owner: string): void {
    for (const [ip, o] of this.used) if (o === owner) this.used.delete(ip);
  }

  /** The address `owner` holds, if any. */
  addressOf(owner: string): string | undefined {
    for (const [ip, o] of this.used) if (o === owner) return ip;
    return undefined;
  }

  /** Whether `ip` lies in this pool's /24. */
  contains(ip: string): boolean {
    return ip.startsWith(`${this.prefix}.`);
  }
}
