import { ABSENT } from './known';
import { TypeUrl } from '../envoy/resources';
import type { CacheEntry, FleetSnapshot } from './snapshot';
import { byName } from '../util/compare';
import { encodeDeltaBody } from './encode';
import type { NodeInfo, StatusDetail } from './stream';
import { AdsStream } from './stream';
import type { Built, TypeState } from './type-state';
import { carriedRejections } from './type-state';
import { DEFERRED_REMOVAL_TYPES } from './served-types';
import { withChanges } from './names';

const INITIAL_VERSIONS = '<initial_resource_versions>';

/** The fields of envoy.service.discovery.v3.DeltaDiscoveryRequest the server reads. */
export interface DeltaRequest {
  node?: NodeInfo | null;
  type_url?: string;
  resource_names_subscribe?: string[];
  resource_names_unsubscribe?: string[];
  initial_resource_versions?: Record<string, string>;
  response_nonce?: string;
  error_detail?: StatusDetail | null;
}

/**
 * Incremental ADS stream (DeltaAggregatedResources).
 * - Subscriptions are honoured whatever the nonce; the nonce only attributes ACK/NACKs.
 * - Resources carry per-resource content versions; `initial_resource_versions` of the first
 *   request of a type is what the client already holds, and is not sent again.
 * - `removed_resources` reports deletions, and subscribed names that do not exist (once).
 * - Cluster removals are sent after the listeners and routes of the same push.
 */
export class DeltaStream extends AdsStream {
  readonly variant = 'delta' as const;

  protected requestNode(req: unknown): NodeInfo | undefined {
    return (req as DeltaRequest).node ?? undefined;
  }

  protected requestTypeUrl(req: unknown): string {
    return (req as DeltaRequest).type_url ?? '';
  }

  protected onTypedRequest(r: unknown, typeUrl: string): void {
    const req = r as DeltaRequest;
    const st = this.typeState(typeUrl);
    const nonce = req.response_nonce ?? '';
    if (nonce) {
      const sent = st.recent.get(nonce);
      if (sent) {
        this.onAnswer(st, sent, { version: req.error_detail ? '' : sent.version, error: req.error_detail });
      } else {
        this.log.debug({ type: typeUrl, nonce }, 'xds: delta request with an unknown nonce');
      }
    }
    const subscribe = req.resource_names_subscribe ?? [];
    const unsubscribe = req.resource_names_unsubscribe ?? [];
    const first = !st.requested;
    st.requested = true;
    if (first) {
      // What the client already holds (a reconnect): not sent again unless it differs.
      const initial = Object.entries(req.initial_resource_versions ?? {});
      for (const [name, version] of initial) st.client.set(name, { name, version });
      if (initial.length > 0) st.clientVersion = INITIAL_VERSIONS;
      // Legacy wildcard: a first request without names (LDS/CDS only).
      if (st.wildcardCapable && subscribe.length === 0) st.wildcard = true;
      st.markAll();
    }
    if (subscribe.length > 0 && st.legacyAllowed) {
      st.legacyAllowed = false;
      if (st.wildcard && !first) this.dropWildcard(st);
    }
    const added: string[] = [];
    for (const name of subscribe) {
      if (name === '*' && st.wildcardCapable) {
        if (!st.wildcard) {
          st.wildcard = true;
          st.markAll();
        }
        continue;
      }
      added.push(name);
      // First request: nothing is known but `initial`, and everything is re-evaluated anyway.
      if (first) continue;
      // Answer explicit subscriptions even when the client should already hold the resource.
      st.client.forget(name);
      st.addPending(name);
    }
    // Subscriptions are shared, immutable sets (names.ts): apply the change as one transition.
    st.explicit = withChanges(st.explicit, added, []);
    if (unsubscribe.length === 0) return;
    const removed: string[] = [];
    const gone = new Set<string>();
    for (const name of unsubscribe) {
      if (name === '*' && st.wildcardCapable) {
        if (st.wildcard) this.dropWildcard(st, gone);
        continue;
      }
      if (!st.explicit.has(name) || gone.has(name)) continue; // phantom unsubscribe: ignored
      gone.add(name);
      removed.push(name);
      st.client.forget(name);
      // Under a wildcard the resource is still wanted: it is sent again (or reported removed).
      if (st.isWildcard) st.addPending(name);
    }
    st.explicit = withChanges(st.explicit, [], removed);
  }

  /** Leaves the wildcard; `gone`: names unsubscribed earlier in the same request. */
  private dropWildcard(st: TypeState, gone?: ReadonlySet<string>): void {
    st.wildcard = false;
    st.client.retainOnly(gone?.size ? new Set([...st.explicit].filter((n) => !gone.has(n))) : st.explicit);
  }

  protected override noteChanged(st: TypeState, names: readonly string[], removed: boolean): void {
    if (st.isWildcard) return st.addPendingMany(names);
    for (const n of names)
      if (st.explicit.has(n) || (removed && st.client.version(n) !== undefined)) st.addPending(n);
  }

  protected build(st: TypeState, snap: FleetSnapshot, final: boolean): Built | undefined {
    const ts = snap.types[st.typeUrl as TypeUrl];
    const defer = !final && DEFERRED_REMOVAL_TYPES.includes(st.typeUrl);
    const send: CacheEntry[] = [];
    const removed: string[] = [];
    const keep: string[] = [];
    let added = 0;
    const consider = (name: string): void => {
      if (!st.interested(name)) return;
      const e = ts.entries.get(name);
      const k = st.client.get(name);
      if (e) {
        if (k === undefined || k === ABSENT) added++;
        if (k === undefined || k === ABSENT || k.version !== e.version) send.push(e);
      } else if (k !== undefined && k !== ABSENT) {
        if (defer) keep.push(name);
        else removed.push(name);
      } else if (k === undefined && st.explicit.has(name)) {
        removed.push(name); // subscribed but does not exist: tell the client instead of letting it time out
      }
    };
    if (st.pendingAll) {
      for (const n of ts.entries.keys()) consider(n);
      const extra = new Set<string>();
      for (const n of st.client.names()) if (!ts.entries.has(n)) extra.add(n);
      for (const n of st.explicit) if (!ts.entries.has(n)) extra.add(n);
      for (const n of extra) consider(n);
    } else {
      for (const n of st.pending) consider(n);
    }
    st.clearPending();
    for (const e of send) st.client.set(e.name, e);
    for (const n of removed) st.client.setAbsent(n);
    if (keep.length === 0) st.client.rebase(ts);
    else for (const n of keep) st.addPending(n);
    if (st.typeUrl === TypeUrl.Cluster) for (const e of send) this.resendClusterLoadAssignment(snap, e.name);
    if (send.length === 0 && removed.length === 0) {
      const neverAnswered = !st.sent && !st.acked && keep.length === 0;
      // A reconnect whose initial_resource_versions already match: the client is in sync.
      if (neverAnswered && st.clientVersion === INITIAL_VERSIONS) {
        st.acked = { version: ts.version, nonce: '', time: Date.now() };
        return undefined;
      }
      // A first wildcard request on an empty type still gets its (empty) answer: Envoy waits for it.
      if (!(neverAnswered && st.isWildcard)) return undefined;
    }

    send.sort(byName);
    removed.sort();
    const key =
      send.length === ts.entries.size && removed.length === 0
        ? 'D*'
        : 'D\n' + send.map((e) => e.name).join('\n') + '\n|' + removed.join('\n');
    const { body } = ts.memoize(key, () => ({
      body: encodeDeltaBody(st.typeUrl, ts.version, send, removed),
      version: ts.version,
      count: send.length,
    }));
    const carries = carriedRejections(st, send, removed);
    return {
      st,
      body,
      version: ts.version,
      resources: send.length,
      added,
      removed: removed.length,
      changed: send,
      carries,
    };
  }
}
