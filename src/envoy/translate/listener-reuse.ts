import type { Listener } from '../../generated/envoy/config/listener/v3/Listener';
import type { FilterChain } from '../../generated/envoy/config/listener/v3/FilterChain';
import type { FilterChainModel } from '../../model/fleet';
import { encodeMessage } from '../protos';
import { commonEnds } from '../../util/common-ends';

/**
 * Translating a TLS port's Listener from the last translation of the same port (docs/xds.md §12).
 *
 * A port of 20,000 hostnames is one PortModel; any change under it (a route edited, a ListenerSet
 * added) gives a new PortModel, and translating it from scratch walks every chain: the server-name
 * assignment puts 20,000 names into sets, every chain is looked up in its memo, and the xDS cache
 * then splices and hashes a new Listener of 20,000 chains, even when its bytes did not change.
 * Here the chain models are compared with the last list by identity: only the chains between the
 * common head and tail are translated, the server-name sets are updated for them, and a Listener
 * whose bytes would equal the last one's is the last Listener object itself.
 */

/** What a full assignment of server names gives (listeners.ts assignServerNames). */
export type ServerNameAssignment = (chains: FilterChainModel[]) => (string[] | undefined)[];

/** Above this many chain models replaced, added or removed (and this share), a port is translated anew. */
const PATCH_MAX = 64;
const PATCH_MAX_SHARE = 1 / 8;

const FILTER_CHAIN = 'envoy.config.listener.v3.FilterChain';
const LISTENER = 'envoy.config.listener.v3.Listener';

/**
 * The last translation of one port whose server names met no conflict: every chain kept all its
 * names, so chain i of the model is chain i of the output.
 */
interface LastPort {
  models: readonly FilterChainModel[];
  chains: readonly FilterChain[];
  /** Chain names, lower-cased server names claimed, and whether a chain is the catch-all. */
  names: Set<string>;
  claimed: Set<string>;
  catchAll: boolean;
  listener: Listener | undefined;
  /** The Listener's bytes without its TLS chains (its HTTP chain and other fields). */
  shell: Buffer | undefined;
}

/** The translation of a port's TLS chains, and whether it equals the last one element for element. */
interface TlsChains {
  chains: readonly FilterChain[];
  unchanged: boolean;
}

/**
 * Per fleet and port (with its translation options), the last Listener translated; the caller
 * forgets a fleet when it goes (forget).
 */
export class ListenerReuse {
  private readonly fleets = new Map<string, Map<string, LastPort>>();

  /**
   * Returns the Listener `listenerOf` gives for the port's TLS chains, which `chainOf` translates
   * from each chain model and the server names the full assignment leaves it: the same Listener
   * as a full translation, by bytes, and the very object of the last translation when the bytes
   * equal its bytes.
   *
   * Correct because (1) with no conflict among the last chains' names, server-name claims are
   * per chain: removing chains releases exactly their names, and an added chain whose name and
   * server names nobody claims keeps all of them without taking any from another chain, so every
   * other chain keeps its names and its translation (chainOf is a pure function of the model);
   * any conflict sends the port to the full assignment; (2) a chain object is reused in place of
   * a new one only when their encodings are equal, and the Listener only when its chains are those
   * very objects and the rest of it encodes to the same bytes.
   */
  translate(
    fleet: string,
    key: string,
    models: FilterChainModel[],
    assign: ServerNameAssignment,
    chainOf: (model: FilterChainModel, serverNames: string[]) => FilterChain,
    listenerOf: (tlsChains: FilterChain[]) => Listener | undefined,
  ): Listener | undefined {
    let ports = this.fleets.get(fleet);
    if (!ports) {
      ports = new Map();
      this.fleets.set(fleet, ports);
    }
    const last = ports.get(key);
    const next = (last && patchChains(last, models, chainOf)) ?? fullChains(models, assign, chainOf);
    ports.delete(key);
    const tls = next.tls.chains as FilterChain[];
    const listener = listenerOf(tls);
    const shell = listener && shellBytes(listener, tls.length);
    if (last && next.tls.unchanged && last.shell && shell && last.shell.equals(shell)) {
      if (next.state) ports.set(key, { ...next.state, listener: last.listener, shell });
      return last.listener;
    }
    if (next.state) ports.set(key, { ...next.state, listener, shell });
    return listener;
  }

  /** Drops what is remembered of a fleet. */
  forget(fleet: string): void {
    this.fleets.delete(fleet);
  }
}

type Patched = { tls: TlsChains; state: Omit<LastPort, 'listener' | 'shell'> | undefined };

/** The full translation: every chain's server names assigned, every chain translated. */
function fullChains(
  models: FilterChainModel[],
  assign: ServerNameAssignment,
  chainOf: (model: FilterChainModel, serverNames: string[]) => FilterChain,
): Patched {
  const assigned = assign(models);
  const chains: FilterChain[] = [];
  let conflictFree = true;
  models.forEach((fc, i) => {
    const names = assigned[i];
    if (names !== fc.serverNames) conflictFree = false;
    if (names) chains.push(chainOf(fc, names));
  });
  if (!conflictFree) return { tls: { chains, unchanged: false }, state: undefined };
  const state = { models, chains, names: new Set<string>(), claimed: new Set<string>(), catchAll: false };
  for (const fc of models) {
    state.names.add(fc.name);
    if (fc.serverNames.length === 0) state.catchAll = true;
    for (const sn of fc.serverNames) state.claimed.add(sn.toLowerCase());
  }
  return { tls: { chains, unchanged: false }, state };
}

/**
 * The translation patched from the last one (see ListenerReuse.translate), or undefined when
 * too much changed or a chain in between meets a conflict. Updates `last`'s sets in place: the
 * caller replaces `last` by what this returns, or by the full translation.
 */
function patchChains(
  last: LastPort,
  models: FilterChainModel[],
  chainOf: (model: FilterChainModel, serverNames: string[]) => FilterChain,
): Patched | undefined {
  const was = last.models;
  if (was === models) return { tls: { chains: last.chains, unchanged: true }, state: last };
  const { head, tail } = commonEnds(was, models);
  const gone = was.slice(head, was.length - tail);
  const added = models.slice(head, models.length - tail);
  if (gone.length + added.length > Math.max(PATCH_MAX, models.length * PATCH_MAX_SHARE)) return undefined;
  for (const fc of gone) {
    last.names.delete(fc.name);
    if (fc.serverNames.length === 0) last.catchAll = false;
    for (const sn of fc.serverNames) last.claimed.delete(sn.toLowerCase());
  }
  for (const fc of added) {
    if (last.names.has(fc.name)) return undefined;
    last.names.add(fc.name);
    if (fc.serverNames.length === 0) {
      if (last.catchAll) return undefined;
      last.catchAll = true;
    }
    for (const sn of fc.serverNames) {
      const lower = sn.toLowerCase();
      if (last.claimed.has(lower)) return undefined;
      last.claimed.add(lower);
    }
  }
  const oldMiddle = last.chains.slice(head, was.length - tail);
  let unchanged = gone.length === added.length;
  const middle = added.map((fc, i) => {
    const chain = chainOf(fc, fc.serverNames);
    const old = oldMiddle[i];
    if (gone.length === added.length && old && sameBytes(chain, old)) return old;
    unchanged = false;
    return chain;
  });
  if (unchanged) return { tls: { chains: last.chains, unchanged: true }, state: { ...last, models } };
  const chains = [...last.chains.slice(0, head), ...middle, ...last.chains.slice(last.chains.length - tail)];
  return {
    tls: { chains, unchanged: false },
    state: { models, chains, names: last.names, claimed: last.claimed, catchAll: last.catchAll },
  };
}

function sameBytes(a: FilterChain, b: FilterChain): boolean {
  return a === b || encodeMessage(FILTER_CHAIN, a).equals(encodeMessage(FILTER_CHAIN, b));
}

/** The bytes of a Listener without its last `tls` chains (the TLS chains follow the HTTP chain). */
function shellBytes(listener: Listener, tls: number): Buffer {
  const chains = listener.filter_chains ?? [];
  return encodeMessage(LISTENER, { ...listener, filter_chains: chains.slice(0, chains.length - tls) });
}
