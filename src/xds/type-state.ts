/**
 * The per-stream, per-type xDS protocol state (docs/xds.md §2): what a client subscribed to, holds,
 * was sent, ACKed, NACKed and rejected, and what must be re-evaluated for it; plus the shape of a
 * response built from it.
 */
import { KnownSet } from './known';
import { NO_NAMES } from './names';
import type { NameSet } from './names';
import { FULL_STATE_TYPES, PUSH_ORDER } from './served-types';
import type { TypeDebug } from './debug-state';
import { SUBSCRIBED_NAMES_SHOWN } from './debug-state';
import type { ResourceVersion } from './nack-attribution';
import type { StreamRejection } from './rejections';
import type { TypeSnapshot } from './snapshot';
import { ABSENT } from './known';
import type { TypeStatusInput } from './csds-state';
import type { BodyBytes } from './wire';

const SERVED_TYPES: ReadonlySet<string> = new Set(PUSH_ORDER);
/** Above this many changed names, a wildcard stream re-evaluates the whole type. */
const PENDING_ALL_THRESHOLD = 64;
/** How many recently sent responses a type keeps by nonce. */
const RECENT_NONCES = 8;

export interface SentInfo {
  version: string;
  nonce: string;
  time: number;
  hr: bigint;
  resources: number;
  /** Resources the client did not hold before this response. */
  added: number;
  removed: number;
  bytes: number;
  answered: boolean;
  /**
   * The resources whose content this response brought to the client (new, or a version it did
   * not hold); undefined when there were more than CHANGED_KEPT.
   */
  changed: readonly ResourceVersion[] | undefined;
  /** Resources the client had rejected that this response sends again, changes or removes. */
  carries: readonly string[];
}

export interface NackInfo {
  version: string;
  nonce: string;
  message: string;
  code: number;
  acceptedVersion: string;
  time: number;
}

/** Per-stream, per-type protocol state (docs/xds.md §2). */
export class TypeState {
  readonly served: boolean;
  readonly wildcardCapable: boolean;
  readonly fullState: boolean;
  /** At least one request for this type arrived. */
  requested = false;
  wildcard = false;
  /** Legacy wildcard (empty names) is still possible: no explicit name was ever subscribed. */
  legacyAllowed = true;
  /** Explicitly subscribed names: an immutable set, shared with other streams (names.ts). */
  explicit: NameSet = NO_NAMES;
  /** SotW: the encoded resource_names of the last request that changed them. */
  namesRaw: Buffer = Buffer.alloc(0);
  /** What the client holds (or, for NACKed content, was sent: never resent until it changes). */
  readonly client = new KnownSet();
  /** Names to re-evaluate; `pendingAll` re-evaluates everything of interest. */
  pending = new Set<string>();
  pendingAll = false;
  /** Send a (full-state) response even if no resource differs (SotW subscription change). */
  force = false;
  /** SotW: version_info of the first request (the version the client already applied). */
  clientVersion = '';
  sent?: SentInfo;
  /** Recently sent responses by nonce, to attribute delta ACK/NACKs of older nonces. */
  readonly recent = new Map<string, SentInfo>();
  acked?: { version: string; nonce: string; time: number };
  nack?: NackInfo;
  /** Resources of this type the client rejected and has not accepted since: name → rejection. */
  readonly rejected = new Map<string, StreamRejection>();

  constructor(readonly typeUrl: string) {
    this.served = SERVED_TYPES.has(typeUrl);
    this.wildcardCapable = FULL_STATE_TYPES.has(typeUrl);
    this.fullState = FULL_STATE_TYPES.has(typeUrl);
  }

  interested(name: string): boolean {
    return this.explicit.has(name) || (this.wildcard && this.wildcardCapable);
  }

  /** True when interest covers every resource of the type. */
  get isWildcard(): boolean {
    return this.wildcard && this.wildcardCapable;
  }

  hasWork(): boolean {
    return this.requested && this.served && (this.pendingAll || this.force || this.pending.size > 0);
  }

  markAll(): void {
    this.pendingAll = true;
    this.pending = new Set();
  }

  /**
   * Marks one name for re-evaluation. A wildcard stream switches to re-evaluating everything once
   * more than PENDING_ALL_THRESHOLD names wait, so a stream that cannot send (its Envoy stopped
   * reading, docs/xds.md §11) holds a bounded set however many names change meanwhile; the other
   * streams' sets are bounded by what they subscribed to.
   */
  addPending(name: string): void {
    if (this.pendingAll) return;
    this.pending.add(name);
    if (this.isWildcard && this.pending.size > PENDING_ALL_THRESHOLD) this.markAll();
  }

  addPendingMany(names: readonly string[]): void {
    if (this.pendingAll) return;
    if (names.length > PENDING_ALL_THRESHOLD && this.isWildcard) this.markAll();
    else for (const n of names) this.addPending(n);
  }

  clearPending(): void {
    this.pending = new Set();
    this.pendingAll = false;
    this.force = false;
  }

  recordSent(info: SentInfo): void {
    this.sent = info;
    this.recent.set(info.nonce, info);
    if (this.recent.size > RECENT_NONCES) this.recent.delete(this.recent.keys().next().value!);
  }

  state(): TypeDebug['state'] {
    if (this.nack && this.sent && this.nack.nonce === this.sent.nonce) return 'nacked';
    if (!this.sent && !this.acked) return 'not_sent';
    if (this.hasWork()) return 'stale';
    if (this.sent && this.acked?.nonce !== this.sent.nonce) return 'stale';
    return 'synced';
  }

  /**
   * What the CSDS mapping (csds-state.ts) reads of this type, against the fleet's current
   * snapshot of it: the names of interest are the explicit subscriptions, or for a wildcard the
   * snapshot's names and whatever the client still holds; rejections always count.
   */
  statusInput(current: TypeSnapshot | undefined): TypeStatusInput {
    const names = new Set<string>(this.explicit);
    if (this.isWildcard) {
      for (const n of current?.entries.keys() ?? []) names.add(n);
      for (const n of this.client.names()) names.add(n);
    }
    for (const n of this.rejected.keys()) if (this.interested(n)) names.add(n);
    let unansweredAll = false;
    const unanswered = new Set<string>();
    for (const sent of this.recent.values()) {
      if (sent.answered) continue;
      if (sent.changed === undefined) unansweredAll = true;
      else for (const r of sent.changed) unanswered.add(r.name);
    }
    return {
      names,
      held: (name) => {
        const v = this.client.get(name);
        return v === ABSENT ? 'absent' : v;
      },
      rejected: (name) => this.rejected.get(name),
      current: (name) => current?.entries.get(name),
      unanswered: (name) => unansweredAll || unanswered.has(name),
      ...(this.acked ? { ackedAt: this.acked.time } : {}),
    };
  }

  debug(): TypeDebug {
    const iso = (t: number) => new Date(t).toISOString();
    return {
      state: this.state(),
      wildcard: this.isWildcard,
      subscribed: this.explicit.size,
      subscribedNames: [...this.explicit].sort().slice(0, SUBSCRIBED_NAMES_SHOWN),
      ...(this.sent && {
        sent: {
          version: this.sent.version,
          nonce: this.sent.nonce,
          time: iso(this.sent.time),
          resources: this.sent.resources,
          removed: this.sent.removed,
          bytes: this.sent.bytes,
        },
      }),
      ...(this.acked && { ackedVersion: this.acked.version, ackedTime: iso(this.acked.time) }),
      ...(this.nack && {
        lastNack: {
          version: this.nack.version,
          nonce: this.nack.nonce,
          message: this.nack.message,
          acceptedVersion: this.nack.acceptedVersion,
          time: iso(this.nack.time),
        },
      }),
    };
  }
}

/** A response built for one stream, not yet sent. */
export interface Built {
  st: TypeState;
  body: BodyBytes;
  version: string;
  resources: number;
  /** Resources the client did not hold before (new clusters must warm before routes name them). */
  added: number;
  removed: number;
  /** SentInfo.changed: the resources new to the client (any length; trimmed when recorded). */
  changed: readonly ResourceVersion[];
  /** SentInfo.carries. */
  carries: readonly string[];
}

/**
 * The names of `entries` and `removed` that the client rejected earlier (SentInfo.carries).
 * Nothing is allocated for a stream without rejections, the common case.
 */
export function carriedRejections(
  st: TypeState,
  entries: readonly { name: string }[],
  removed: readonly string[] = [],
): readonly string[] {
  if (st.rejected.size === 0) return NO_NAMES_CARRIED;
  const out: string[] = [];
  for (const e of entries) if (st.rejected.has(e.name)) out.push(e.name);
  for (const n of removed) if (st.rejected.has(n)) out.push(n);
  return out;
}
const NO_NAMES_CARRIED: readonly string[] = [];
