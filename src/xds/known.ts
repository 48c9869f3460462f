import type { TypeSnapshot } from './snapshot';

/** A resource version the client is believed to hold; `bytes` is known when we sent it. */
export interface VersionRef {
  readonly name: string;
  readonly version: string;
  readonly bytes?: Buffer;
}

/** Marker: the client was told (delta removed_resources) that this name does not exist. */
export const ABSENT = 0;
/** Marker: forget what the base snapshot says about this name. */
const FORGOTTEN = 1;

type Slot = VersionRef | typeof ABSENT | typeof FORGOTTEN;

/**
 * What one stream's client holds for one type: name → version.
 *
 * Stored as a shared, immutable base (a TypeSnapshot the stream was fully synced to) plus a small
 * per-stream overlay of differences, so a thousand streams synced to the same 5,000 clusters do
 * not each keep a 5,000-entry map. Only names the stream is interested in are meaningful; the
 * base may claim unsubscribed names, which is harmless because a (re)subscription forgets them.
 */
export class KnownSet {
  private base: TypeSnapshot | undefined;
  private overlay = new Map<string, Slot>();

  get(name: string): VersionRef | typeof ABSENT | undefined {
    const slot = this.overlay.get(name);
    if (slot === undefined) return this.base?.entries.get(name);
    return slot === FORGOTTEN ? undefined : slot;
  }

  /** The version the client holds, or undefined (unknown or absent). */
  version(name: string): string | undefined {
    const v = this.get(name);
    return v === undefined || v === ABSENT ? undefined : v.version;
  }

  set(name: string, ref: VersionRef): void {
    this.overlay.set(name, ref);
  }

  setAbsent(name: string): void {
    this.overlay.set(name, ABSENT);
  }

  forget(name: string): void {
    if (this.base?.entries.has(name)) this.overlay.set(name, FORGOTTEN);
    else this.overlay.delete(name);
  }

  /** Forget everything except the given names. */
  retainOnly(keep: ReadonlySet<string>): void {
    const next = new Map<string, Slot>();
    for (const name of keep) {
      const v = this.get(name);
      if (v !== undefined) next.set(name, v);
    }
    this.base = undefined;
    this.overlay = next;
  }

  /**
   * Declare that the client now holds exactly `snap` for every name it is interested in.
   * ABSENT markers for names missing from `snap` are kept; everything else in the overlay goes.
   */
  rebase(snap: TypeSnapshot): void {
    if (this.base === snap && this.overlay.size === 0) return;
    const next = new Map<string, Slot>();
    for (const [name, slot] of this.overlay)
      if (slot === ABSENT && !snap.entries.has(name)) next.set(name, slot);
    this.base = snap;
    this.overlay = next;
  }

  /** Names with a known version (base entries not masked, plus overlay refs). */
  *names(): Generator<string> {
    if (this.base) for (const name of this.base.entries.keys()) if (!this.overlay.has(name)) yield name;
    for (const [name, slot] of this.overlay) if (slot !== ABSENT && slot !== FORGOTTEN) yield name;
  }

  /** True when the client holds exactly `snap` (used to skip work cheaply). */
  isExactly(snap: TypeSnapshot): boolean {
    return this.base === snap && this.overlay.size === 0;
  }

  get overlaySize(): number {
    return this.overlay.size;
  }
}
