import type { Listener } from '../../generated/envoy/config/listener/v3/Listener';
import type { FilterChain } from '../../generated/envoy/config/listener/v3/FilterChain';
import type { Cluster } from '../../generated/envoy/config/cluster/v3/Cluster';
import type { FilterChainModel, PortModel } from '../../model/fleet';
import { encodeMessage } from '../protos';
import { commonEnds } from '../../util/common-ends';

/**
 * Translating an SNI-dispatched port (sni-dispatch.ts) from the last translation of the same port
 * (docs/xds.md §16).
 *
 * A port of 5,000 hostnames is one PortModel; any change under it (a route edited, a ListenerSet
 * added or deleted) gives a new PortModel, and translating it from scratch assigns 5,000 chains'
 * server names, looks every chain up in its memo under a variant key made from the port's
 * options, and builds the front Listener again. Here the chain models are compared with the last
 * list by identity, as listener-reuse.ts does for the chains layout: only the chains between the
 * common head and tail are translated, and the front Listener is the last one's very object when
 * its bytes would not change.
 */

/** What one chain gives in the SNI-dispatch layout (sni-dispatch.ts). */
export interface DispatchedChain {
  listener: Listener;
  clusters: Cluster[];
  /** The front Listener's explicit `server_names` chains for this chain (wildcards, covered names). */
  explicit: FilterChain[];
}

/** The resources of one port in the SNI-dispatch layout. */
export interface DispatchedPort {
  /** The front Listener that binds the port, then the internal listeners in chain order. */
  listeners: Listener[];
  /** One cluster per served name (and one for the hostname-less listener), in chain order. */
  clusters: Cluster[];
}

/** Above this many chain models replaced, added or removed (and this share), a port is translated anew. */
const PATCH_MAX = 64;
const PATCH_MAX_SHARE = 1 / 8;

const LISTENER = 'envoy.config.listener.v3.Listener';

/**
 * The last translation of one port whose server names met no conflict and that has no
 * hostname-less chain: every chain kept all its names, so chain i of the model is part i.
 */
interface LastPort {
  port: PortModel;
  models: readonly FilterChainModel[];
  parts: readonly DispatchedChain[];
  /** Chain names and lower-cased server names claimed. */
  names: Set<string>;
  claimed: Set<string>;
  /** The lower-cased suffixes (without `*`) of the port's wildcard names, sorted. */
  wildcards: string;
  /** The front Listener's explicit chains, in chain order. */
  explicit: FilterChain[];
  front: Listener;
  frontBytes: Buffer;
  result: DispatchedPort;
}

/** How the caller translates: the full translation, one chain, and the front Listener. */
export interface DispatchTranslators {
  /** The full translation, with the parts per model chain when no server name met a conflict. */
  full(port: PortModel): { result: DispatchedPort | null; parts?: DispatchedChain[] };
  /** One chain's parts given the port's wildcards (a chain whose names all stay its own). */
  chain(fc: FilterChainModel, wildcards: readonly string[]): DispatchedChain;
  /** The front Listener around the explicit chains. */
  front(port: PortModel, explicit: FilterChain[]): Listener;
}

/** The lower-cased wildcard suffixes of chains' server names (`*.a.example` → `.a.example`). */
export function wildcardsOf(chains: readonly FilterChainModel[]): string[] {
  const out: string[] = [];
  for (const fc of chains)
    for (const sn of fc.serverNames) if (sn.startsWith('*.')) out.push(sn.slice(1).toLowerCase());
  return out;
}

/** The wildcard suffixes as one comparable key (sorted: coverage does not depend on order). */
function wildcardKey(wildcards: readonly string[]): string {
  return [...wildcards].sort().join('\n');
}

/**
 * Per fleet and port (with its translation options), the last dispatched translation; the caller
 * forgets a fleet when it goes (forget) and the ports it no longer has (retain).
 */
export class DispatchReuse {
  private readonly fleets = new Map<string, Map<string, LastPort>>();

  /**
   * Returns the port's SNI-dispatch resources, the same by bytes as `t.full(port)` and made of the
   * very same objects except where a chain changed.
   *
   * Correct because (1) with no conflict among the last chains' names and no hostname-less chain,
   * removing chains releases exactly their names, and an added chain whose name and server names
   * nobody claims keeps all of them, so every other chain keeps its names; (2) a chain's parts
   * depend only on the chain, its names and the port's wildcards (which exact names need an
   * explicit front chain), so with the wildcards unchanged every other chain's parts are the same;
   * any conflict, hostname-less chain or change of wildcards sends the port to the full
   * translation; (3) the front Listener is rebuilt from the explicit chains and the port, and the
   * last one kept when the bytes are equal.
   */
  translate(fleet: string, key: string, port: PortModel, t: DispatchTranslators): DispatchedPort | null {
    let ports = this.fleets.get(fleet);
    if (!ports) {
      ports = new Map();
      this.fleets.set(fleet, ports);
    }
    const last = ports.get(key);
    if (last && last.port === port) return last.result;
    ports.delete(key);
    const patched = last && patch(last, port, t);
    if (patched) {
      ports.set(key, patched);
      return patched.result;
    }
    const { result, parts } = t.full(port);
    if (result && parts) {
      const state = stateOf(port, parts, result);
      if (state) ports.set(key, state);
    }
    return result;
  }

  /** Keeps only the given ports of a fleet (those its last translation dispatched). */
  retain(fleet: string, keys: ReadonlySet<string>): void {
    const ports = this.fleets.get(fleet);
    if (!ports) return;
    for (const key of [...ports.keys()]) if (!keys.has(key)) ports.delete(key);
  }

  /** Drops what is remembered of a fleet. */
  forget(fleet: string): void {
    this.fleets.delete(fleet);
  }
}

/** The remembered state of a full translation, or undefined when a chain has no name of its own. */
function stateOf(port: PortModel, parts: DispatchedChain[], result: DispatchedPort): LastPort | undefined {
  const names = new Set<string>();
  const claimed = new Set<string>();
  for (const fc of port.filterChains) {
    if (fc.serverNames.length === 0 || names.has(fc.name)) return undefined;
    names.add(fc.name);
    for (const sn of fc.serverNames) claimed.add(sn.toLowerCase());
  }
  const front = result.listeners[0]!;
  return {
    port,
    models: port.filterChains,
    parts,
    names,
    claimed,
    wildcards: wildcardKey(wildcardsOf(port.filterChains)),
    explicit: parts.flatMap((p) => p.explicit),
    front,
    frontBytes: encodeMessage(LISTENER, front),
    result,
  };
}

/**
 * The translation patched from the last one, or undefined when too much changed, a chain meets a
 * conflict or has no server name, or the wildcards changed. Updates `last`'s sets in place: the
 * caller replaces `last` by what this returns, or drops it.
 */
function patch(last: LastPort, port: PortModel, t: DispatchTranslators): LastPort | undefined {
  const was = last.models;
  const models = port.filterChains;
  const { head, tail } = commonEnds(was, models);
  const gone = was.slice(head, was.length - tail);
  const added = models.slice(head, models.length - tail);
  if (gone.length + added.length > Math.max(PATCH_MAX, models.length * PATCH_MAX_SHARE)) return undefined;
  if (added.length === 0 && gone.length === was.length) return undefined;
  // The port's wildcards stay as they were when the chains gone and added carry the same ones.
  if (wildcardKey(wildcardsOf(gone)) !== wildcardKey(wildcardsOf(added))) return undefined;
  const wildcards = last.wildcards;
  for (const fc of gone) {
    last.names.delete(fc.name);
    for (const sn of fc.serverNames) last.claimed.delete(sn.toLowerCase());
  }
  for (const fc of added) {
    if (fc.serverNames.length === 0 || last.names.has(fc.name)) return undefined;
    last.names.add(fc.name);
    for (const sn of fc.serverNames) {
      const lower = sn.toLowerCase();
      if (last.claimed.has(lower)) return undefined;
      last.claimed.add(lower);
    }
  }
  const wildcardList = wildcards === '' ? [] : wildcards.split('\n').map((w) => '*' + w);
  const middle = added.map((fc) => t.chain(fc, wildcardList));
  const parts = last.parts.slice();
  parts.splice(head, gone.length, ...middle);
  // The lists are the last ones with the middle replaced: spliced, not rebuilt (5,000 parts).
  const listeners = last.result.listeners.slice();
  listeners.splice(head + 1, gone.length, ...middle.map((p) => p.listener));
  let clusterHead = 0;
  for (let i = 0; i < head; i++) clusterHead += last.parts[i]!.clusters.length;
  let goneClusters = 0;
  for (let i = head; i < head + gone.length; i++) goneClusters += last.parts[i]!.clusters.length;
  const clusters = last.result.clusters.slice();
  clusters.splice(clusterHead, goneClusters, ...middle.flatMap((p) => p.clusters));
  const explicitChanged =
    middle.some((p) => p.explicit.length > 0) ||
    last.parts.slice(head, head + gone.length).some((p) => p.explicit.length > 0);
  const explicit = explicitChanged ? parts.flatMap((p) => p.explicit) : last.explicit;
  let front = t.front(port, explicit);
  const frontBytes = encodeMessage(LISTENER, front);
  if (frontBytes.equals(last.frontBytes)) front = last.front;
  listeners[0] = front;
  return {
    port,
    models,
    parts,
    names: last.names,
    claimed: last.claimed,
    wildcards,
    explicit,
    front,
    frontBytes,
    result: { listeners, clusters },
  };
}
