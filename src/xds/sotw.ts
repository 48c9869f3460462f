import { ABSENT } from './known';
import type { VersionRef } from './known';
import { TypeUrl } from '../envoy/resources';
import type { CacheEntry, FleetSnapshot, MemoResponse, TypeSnapshot } from './snapshot';
import { setVersion } from './snapshot';
import { byName } from '../util/compare';
import { encodeSotwBody } from './encode';
import type { NodeInfo } from './stream';
import type { Built, TypeState } from './type-state';
import { carriedRejections } from './type-state';
import { decodeNames } from './request';
import type { SotwRequest } from './request';
import { AdsStream } from './stream';
import { diffNameSets, explicitNamesOf, internEncodedNames, starCount } from './names';

/**
 * State-of-the-world ADS stream (StreamAggregatedResources).
 * - A request whose response_nonce is set but is not the latest sent for its type is ignored.
 * - LDS/CDS responses carry the full set of interest; RDS/EDS/SDS carry the subscribed resources
 *   the client does not hold yet (new subscriptions, changed content).
 * - Removing clusters waits until the listeners and routes of the same push were sent: CDS is first
 *   sent with the stale clusters still included, and once more without them at the end.
 */
export class SotwStream extends AdsStream {
  readonly variant = 'sotw' as const;

  protected requestNode(req: unknown): NodeInfo | undefined {
    return (req as SotwRequest).node ?? undefined;
  }

  protected requestTypeUrl(req: unknown): string {
    return (req as SotwRequest).type_url ?? '';
  }

  protected onTypedRequest(r: unknown, typeUrl: string): void {
    const req = r as SotwRequest;
    const st = this.typeState(typeUrl);
    const nonce = req.response_nonce ?? '';
    if (nonce) {
      if (!st.sent || nonce !== st.sent.nonce) {
        this.log.debug(
          { type: typeUrl, nonce, latest: st.sent?.nonce },
          'xds: ignoring request with a stale nonce',
        );
        return;
      }
      this.onAnswer(st, st.sent, { version: req.version_info ?? '', error: req.error_detail });
    } else if (!st.requested) {
      st.clientVersion = req.version_info ?? '';
    }
    const first = !st.requested;
    st.requested = true;
    // Envoy repeats the whole subscription in every request: decode it only when its bytes changed.
    if (!first && st.namesRaw.equals(req.namesRaw)) return;
    // Interned: streams sending the same names share the bytes, the names and the set (names.ts).
    const shared = internEncodedNames(req.namesRaw, decodeNames);
    st.namesRaw = shared.raw;
    this.updateSubscription(st, shared.names, first);
  }

  /** True when `names` is exactly the current subscription (the common case: an ACK). */
  private sameSubscription(st: TypeState, names: readonly string[]): boolean {
    if (names.length === 0)
      return st.explicit.size === 0 && (st.isWildcard ? st.legacyAllowed : !st.legacyAllowed);
    if (explicitNamesOf(names, st.wildcardCapable) === st.explicit) {
      // The same shared set: every name but `*` is in it, which is what the loop below checks.
      const star = st.wildcardCapable ? starCount(names) : 0;
      return (
        star <= 1 && st.wildcard === star > 0 && names.length - star === st.explicit.size && !st.legacyAllowed
      );
    }
    let star = 0;
    for (const n of names) {
      if (n === '*' && st.wildcardCapable) star++;
      else if (!st.explicit.has(n)) return false;
    }
    // Duplicate names would make the count differ; such a request takes the slow path.
    return (
      star <= 1 && st.wildcard === star > 0 && names.length - star === st.explicit.size && !st.legacyAllowed
    );
  }

  private updateSubscription(st: TypeState, names: readonly string[], first: boolean): void {
    if (!first && this.sameSubscription(st, names)) return;
    const explicit = explicitNamesOf(names, st.wildcardCapable);
    const star = st.wildcardCapable && names.includes('*');
    let wildcard = false;
    if (st.wildcardCapable) {
      if (names.length === 0 && st.legacyAllowed) wildcard = true;
      else {
        st.legacyAllowed = false;
        wildcard = star;
      }
    } else if (names.length > 0) st.legacyAllowed = false;

    let changed = false;
    if (wildcard !== st.wildcard) {
      st.wildcard = wildcard;
      if (!wildcard) st.client.retainOnly(explicit);
      st.markAll();
      changed = true;
    }
    if (first) {
      // Nothing is known yet, and everything of interest is evaluated.
      st.explicit = explicit;
      st.markAll();
      return;
    }
    // Streams moving between the same shared sets share the comparison (names.ts).
    const { added, removed } = diffNameSets(st.explicit, explicit);
    for (const n of added) {
      st.client.forget(n); // a (re)subscribed name is always answered
      st.addPending(n);
      changed = true;
    }
    for (const n of removed) {
      if (!st.isWildcard) st.client.forget(n);
      changed = true;
    }
    st.explicit = explicit;
    // A full-state type answers any subscription change: the response tells the client which of
    // the names exist.
    if (changed && st.fullState && (st.isWildcard || st.explicit.size > 0)) st.force = true;
  }

  protected build(st: TypeState, snap: FleetSnapshot, final: boolean): Built | undefined {
    const ts = snap.types[st.typeUrl as TypeUrl];
    if (st.fullState) return this.buildFull(st, ts, snap, !final && st.typeUrl === TypeUrl.Cluster);
    return this.buildNamed(st, ts);
  }

  private buildNamed(st: TypeState, ts: TypeSnapshot): Built | undefined {
    const out: CacheEntry[] = [];
    for (const n of st.pendingAll ? st.explicit : st.pending) {
      if (!st.explicit.has(n)) continue;
      const e = ts.entries.get(n);
      if (e && st.client.version(n) !== e.version) out.push(e);
    }
    st.clearPending();
    st.client.rebase(ts);
    if (out.length === 0) return undefined;
    out.sort(byName);
    const carries = carriedRejections(st, out);
    const key = 'S\n' + out.map((e) => e.name).join('\n');
    const { body } = ts.memoize(key, () => ({
      body: encodeSotwBody(st.typeUrl, ts.version, out),
      version: ts.version,
      count: out.length,
    }));
    return {
      st,
      body,
      version: ts.version,
      resources: out.length,
      added: 0,
      removed: 0,
      changed: out,
      carries,
    };
  }

  private buildFull(st: TypeState, ts: TypeSnapshot, snap: FleetSnapshot, defer: boolean): Built | undefined {
    // Reconnect of a pure wildcard client that already applied exactly this content: nothing to send.
    if (
      !st.sent &&
      st.pendingAll &&
      !st.force &&
      st.isWildcard &&
      st.explicit.size === 0 &&
      st.clientVersion === ts.version
    ) {
      st.client.rebase(ts);
      st.clearPending();
      st.acked = { version: ts.version, nonce: '', time: Date.now() };
      return undefined;
    }

    // The first answer is always sent, even an empty one: it is the state, and Envoy waits for it.
    let changed = st.force || (!st.sent && !st.acked);
    let added = 0;
    const stale: VersionRef[] = [];
    const changedEntries: CacheEntry[] = [];
    const consider = (name: string): void => {
      if (!st.interested(name)) return;
      const e = ts.entries.get(name);
      const k = st.client.get(name);
      const held = k === undefined || k === ABSENT ? undefined : k;
      if (e) {
        if (held?.version !== e.version) {
          changed = true;
          changedEntries.push(e);
          if (!held) added++;
        }
      } else if (held) {
        if (defer && held.bytes) stale.push(held);
        else changed = true;
      }
    };
    if (st.pendingAll) {
      for (const n of ts.entries.keys()) consider(n);
      for (const n of st.client.names()) if (!ts.entries.has(n)) consider(n);
    } else {
      for (const n of st.pending) consider(n);
    }
    st.clearPending();

    if (!changed) {
      // Nothing but removals, which wait for the end of the push.
      if (stale.length === 0) st.client.rebase(ts);
      else for (const s of stale) st.addPending(s.name);
      return undefined;
    }

    if (st.typeUrl === TypeUrl.Cluster) {
      for (const e of changedEntries) this.resendClusterLoadAssignment(snap, e.name);
    }
    stale.sort(byName);
    const response = this.fullResponse(st, ts, stale);
    st.client.rebase(ts);
    for (const s of stale) {
      st.client.set(s.name, s);
      st.addPending(s.name);
    }
    return {
      st,
      body: response.body,
      version: response.version,
      resources: response.count,
      added,
      removed: 0,
      changed: changedEntries,
      // A full-state response lists everything of interest: it carries (or removes) every
      // resource the client rejected.
      carries: st.rejected.size > 0 ? [...st.rejected.keys()] : [],
    };
  }

  /** The full-state response for the stream's interest, plus stale entries kept until later. */
  private fullResponse(st: TypeState, ts: TypeSnapshot, stale: readonly VersionRef[]): MemoResponse {
    const staleKey = stale.map((s) => `${s.name}\0${s.version}`).join('\n');
    const interestKey = st.isWildcard ? '*' : [...st.explicit].sort().join('\n');
    return ts.memoize(`F\n${interestKey}\n|${staleKey}`, () => {
      let entries: readonly VersionRef[] = st.isWildcard
        ? ts.sorted
        : ts.sorted.filter((e) => st.explicit.has(e.name));
      if (stale.length) entries = [...entries, ...stale].sort(byName);
      const version = st.isWildcard && stale.length === 0 ? ts.version : setVersion(entries);
      return {
        body: encodeSotwBody(st.typeUrl, version, entries as CacheEntry[]),
        version,
        count: entries.length,
      };
    });
  }
}
