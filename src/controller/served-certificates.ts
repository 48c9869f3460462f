/**
 * Keeps, per fleet, which certificates each listener serves and which listeners serve one outside
 * its validity period, updated from one fleet model to the next by what changed between them, so a
 * fast path's new model costs its change, not the fleet (docs/architecture.md §8).
 *
 * The answers are those of certificate-validity.ts's functions over `CertificateValidityReader`'s
 * `served` (the oracle the unit tests compare against): per listener, the first Terminate chain of
 * that name; across fleets, the first fleet serving a listener.
 */
import type { FilterChainModel, FleetModel, SecretModel } from '../model/fleet';
import {
  CertificateValidityReader,
  nextBoundary,
  validityProblem,
  type ServedCertificate,
  type ValidityProblem,
} from './certificate-validity';

/** What one fleet model serves, indexed so that the next model of the fleet updates it by its differences. */
interface FleetEntry {
  model: FleetModel;
  /** Terminate chains by listener name (unique in the fleet, else the entry is rebuilt every time). */
  chains: Map<string, FilterChainModel>;
  secrets: Map<string, SecretModel>;
  /** Per listener, the certificates it serves (only listeners serving a readable one). */
  served: Map<string, ServedCertificate[]>;
  /** Secret name → the listeners whose chains name it. */
  listenersBySecret: Map<string, Set<string>>;
  /** Listeners serving a certificate outside its validity period at `at`. */
  problems: Map<string, ValidityProblem>;
  at: number;
  /** No served certificate's validity changes in (`at`, `next`); undefined: none ever does. */
  next: number | undefined;
  /** False when chain or secret names repeat: the entry is rebuilt for every model. */
  incremental: boolean;
}

/** The validity problems of what the fleets serve at a time, and when they next change. */
export interface ServedValidity {
  /** Listener (qualified name) → its problem. */
  problems: Map<string, ValidityProblem>;
  /** The first time (ms) after now at which some served certificate's validity may change. */
  next: number | undefined;
}

/** Per-fleet index of served certificates' validity, updated by each model's differences. */
export class ServedCertificates {
  private readonly reader = new CertificateValidityReader();
  private readonly entries = new Map<string, FleetEntry>();

  /**
   * Returns the listeners serving a certificate outside its validity period at `at` (ms), and the
   * next boundary, for `fleets` (in order: a listener two fleets serve counts for the first).
   */
  update(fleets: Iterable<FleetModel>, at: number): ServedValidity {
    const live: FleetEntry[] = [];
    const names = new Set<string>();
    for (const model of fleets) {
      names.add(model.fleet);
      const before = this.entries.get(model.fleet);
      const entry = before && this.advance(before, model, at) ? before : this.fresh(model, at);
      this.entries.set(model.fleet, entry);
      live.push(entry);
    }
    for (const name of [...this.entries.keys()]) if (!names.has(name)) this.entries.delete(name);
    const problems = new Map<string, ValidityProblem>();
    let next: number | undefined;
    live.forEach((entry, i) => {
      if (entry.next !== undefined && (next === undefined || entry.next < next)) next = entry.next;
      for (const [listener, problem] of entry.problems) {
        if (problems.has(listener)) continue;
        // An earlier fleet serving the same listener without a problem decides it.
        if (live.slice(0, i).some((e) => e.served.has(listener))) continue;
        problems.set(listener, problem);
      }
    });
    return { problems, next };
  }

  /** Builds a fleet's entry from its model alone (O(fleet)). */
  private fresh(model: FleetModel, at: number): FleetEntry {
    const entry: FleetEntry = {
      model,
      chains: new Map(),
      secrets: new Map(),
      served: new Map(),
      listenersBySecret: new Map(),
      problems: new Map(),
      at,
      next: undefined,
      incremental: true,
    };
    for (const s of model.secrets) {
      if (entry.secrets.has(s.name)) entry.incremental = false;
      entry.secrets.set(s.name, s);
    }
    for (const port of model.ports) {
      for (const chain of port.filterChains) {
        if (chain.mode !== 'Terminate') continue;
        if (entry.chains.has(chain.name)) {
          entry.incremental = false;
          continue;
        }
        this.addChain(entry, chain);
      }
    }
    if (!entry.incremental) {
      // Repeated names: the reader's rules (first chain serving something wins) decide.
      entry.served = new Map(this.reader.served([model]));
      entry.chains.clear();
      entry.listenersBySecret.clear();
    } else for (const listener of entry.chains.keys()) this.serve(entry, listener);
    this.recheck(entry, at);
    return entry;
  }

  /**
   * Moves `entry` to `model`, the fleet's next model, by the chains and secrets that differ; false
   * when the entry must be built afresh (names repeat, or the ports are not the same list).
   */
  private advance(entry: FleetEntry, model: FleetModel, at: number): boolean {
    if (!entry.incremental) {
      if (entry.model !== model) return false;
      this.recheckIfDue(entry, at);
      return true;
    }
    const before = entry.model;
    const touched = new Set<string>();
    if (model !== before) {
      if (model.ports.length !== before.ports.length) return false;
      for (let i = 0; i < model.ports.length; i++) {
        const [was, now] = [before.ports[i].filterChains, model.ports[i].filterChains];
        if (was === now) continue;
        const [gone, added] = differing(was, now);
        for (const chain of gone) {
          if (chain.mode !== 'Terminate' || entry.chains.get(chain.name) !== chain) continue;
          this.removeChain(entry, chain);
          touched.add(chain.name);
        }
        for (const chain of added) {
          if (chain.mode !== 'Terminate') continue;
          if (entry.chains.has(chain.name)) return false;
          this.addChain(entry, chain);
          touched.add(chain.name);
        }
      }
      if (model.secrets !== before.secrets) {
        const [gone, added] = differing(before.secrets, model.secrets);
        for (const s of gone) if (entry.secrets.get(s.name) === s) entry.secrets.delete(s.name);
        for (const s of added) {
          if (entry.secrets.has(s.name)) return false;
          entry.secrets.set(s.name, s);
        }
        for (const s of [...gone, ...added])
          for (const listener of entry.listenersBySecret.get(s.name) ?? []) touched.add(listener);
      }
      entry.model = model;
    }
    for (const listener of touched) this.serve(entry, listener);
    if (this.recheckIfDue(entry, at)) return true;
    for (const listener of touched) {
      const certs = entry.served.get(listener);
      const problem = certs && validityProblem(certs, at);
      if (problem) entry.problems.set(listener, problem);
      else entry.problems.delete(listener);
      const next = certs && nextBoundary(new Map([[listener, certs]]), at);
      if (next !== undefined && (entry.next === undefined || next < entry.next)) entry.next = next;
    }
    entry.at = at;
    return true;
  }

  /** Rechecks every listener of the entry when a validity boundary passed since its last check; true then. */
  private recheckIfDue(entry: FleetEntry, at: number): boolean {
    if (entry.next === undefined || at < entry.next) return false;
    this.recheck(entry, at);
    return true;
  }

  /** Computes every listener's problem and the next boundary at `at` (O(fleet); at boundaries only). */
  private recheck(entry: FleetEntry, at: number): void {
    entry.problems = new Map();
    for (const [listener, certs] of entry.served) {
      const problem = validityProblem(certs, at);
      if (problem) entry.problems.set(listener, problem);
    }
    entry.next = nextBoundary(entry.served, at);
    entry.at = at;
  }

  private addChain(entry: FleetEntry, chain: FilterChainModel): void {
    entry.chains.set(chain.name, chain);
    for (const name of chain.secretNames) {
      const set = entry.listenersBySecret.get(name) ?? new Set<string>();
      set.add(chain.name);
      entry.listenersBySecret.set(name, set);
    }
  }

  private removeChain(entry: FleetEntry, chain: FilterChainModel): void {
    entry.chains.delete(chain.name);
    for (const name of chain.secretNames) {
      const set = entry.listenersBySecret.get(name);
      set?.delete(chain.name);
      if (set?.size === 0) entry.listenersBySecret.delete(name);
    }
  }

  /** Sets what `listener` serves now, from its chain and the fleet's secrets (as servedBy does). */
  private serve(entry: FleetEntry, listener: string): void {
    const chain = entry.chains.get(listener);
    const certs: ServedCertificate[] = [];
    for (const name of chain?.secretNames ?? []) {
      const secret = entry.secrets.get(name);
      const validity = secret && this.reader.period(secret);
      if (validity) certs.push({ secret: name, validity });
    }
    if (certs.length > 0) entry.served.set(listener, certs);
    else entry.served.delete(listener);
  }
}

/**
 * Returns the items of `was` that are not in `now` and those of `now` that are not in `was`, by
 * identity, after skipping the common prefix and suffix: O(list) pointer comparisons, and the
 * set work only over the part that differs (one item for a single change).
 */
function differing<T>(was: readonly T[], now: readonly T[]): [T[], T[]] {
  let start = 0;
  while (start < was.length && start < now.length && was[start] === now[start]) start++;
  let endWas = was.length;
  let endNow = now.length;
  while (endWas > start && endNow > start && was[endWas - 1] === now[endNow - 1]) {
    endWas--;
    endNow--;
  }
  const oldPart = was.slice(start, endWas);
  const newPart = now.slice(start, endNow);
  const oldSet = new Set(oldPart);
  const newSet = new Set(newPart);
  return [oldPart.filter((x) => !newSet.has(x)), newPart.filter((x) => !oldSet.has(x))];
}
