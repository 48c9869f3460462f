/**
 * Remembers, per listener, the certificates it has served, and the last version of each Secret
 * that validated, so that a Secret rotated to an invalid key pair does not take a serving
 * listener down (docs/gateway-api.md §8).
 *
 * Unlike the other parts of BuildMemo this is history, not a cache: it changes what a build
 * returns. It is state its owner passes in (the Controller keeps one; an oracle build gets a copy
 * of the same memory), never a module-level cache.
 *
 * The rule, applied each time a listener is validated (`record`):
 *  - a ready listener now remembers exactly the Secrets it serves (valid ones, and remembered ones
 *    whose Secret still exists but is invalid), and each valid Secret's version becomes its last
 *    good one;
 *  - a listener that is not ready keeps only the Secrets that still exist with invalid content;
 *  - so a Secret that is deleted, no longer permitted, or no longer referenced is forgotten, and a
 *    listener that never served a Secret never gets its last good version.
 * A full build forgets listeners it did not validate (`beginFullBuild`/`endFullBuild`), which keeps
 * the memory bounded by the listeners and Secrets that exist.
 */
import type { SecretModel } from '../model/fleet';

export class LastGoodCertificates {
  /** Listener qualified name → names (`ns/name`) of the Secrets it has served. */
  private readonly served = new Map<string, ReadonlySet<string>>();
  /** Secret name → the last version of it that validated while a listener served it. */
  private readonly secrets = new Map<string, SecretModel>();
  /** Listeners validated since beginFullBuild, or undefined outside a full build. */
  private validated: Set<string> | undefined;

  /** Returns a copy with the same memory (what an oracle build must start from). */
  clone(): LastGoodCertificates {
    const copy = new LastGoodCertificates();
    for (const [listener, names] of this.served) copy.served.set(listener, names);
    for (const [name, secret] of this.secrets) copy.secrets.set(name, secret);
    return copy;
  }

  /** Returns the last good version of Secret `name` if `listener` has served it, else undefined. */
  recall(listener: string, name: string): SecretModel | undefined {
    return this.served.get(listener)?.has(name) ? this.secrets.get(name) : undefined;
  }

  /**
   * Records the outcome of validating `listener` (see the file comment): `fresh` are the valid
   * Secrets it serves now, `invalid` the names of referenced Secrets that exist but are invalid.
   */
  record(listener: string, ready: boolean, fresh: readonly SecretModel[], invalid: readonly string[]): void {
    this.validated?.add(listener);
    const before = this.served.get(listener);
    const kept = invalid.filter((name) => before?.has(name) && this.secrets.has(name));
    const names = ready ? [...fresh.map((s) => s.name), ...kept] : kept;
    if (ready) for (const s of fresh) this.secrets.set(s.name, s);
    if (names.length > 0) this.served.set(listener, new Set(names));
    else this.served.delete(listener);
  }

  /** Makes `secret` the last good version of its Secret, if any listener remembers that Secret. */
  refresh(secret: SecretModel): void {
    if (this.secrets.has(secret.name)) this.secrets.set(secret.name, secret);
  }

  /**
   * Forgets listeners that no longer exist (a fast path removed them), as the next full build
   * would; their Secrets' versions go with the next full build (no listener can recall them).
   */
  forget(listeners: Iterable<string>): void {
    for (const listener of listeners) this.served.delete(listener);
  }

  /** Starts a full build: listeners it does not validate are forgotten by endFullBuild. */
  beginFullBuild(): void {
    this.validated = new Set();
  }

  /** Ends a full build: forgets listeners it did not validate and Secrets no listener remembers. */
  endFullBuild(): void {
    const validated = this.validated;
    this.validated = undefined;
    if (!validated) return;
    for (const listener of [...this.served.keys()])
      if (!validated.has(listener)) this.served.delete(listener);
    const live = new Set<string>();
    for (const names of this.served.values()) for (const n of names) live.add(n);
    for (const name of [...this.secrets.keys()]) if (!live.has(name)) this.secrets.delete(name);
  }

  /** The number of listeners and Secrets remembered (tests: the memory stays bounded). */
  size(): { listeners: number; secrets: number } {
    return { listeners: this.served.size, secrets: this.secrets.size };
  }
}
