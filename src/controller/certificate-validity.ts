/**
 * Warns about certificates served outside their validity period: a listener serving an expired or
 * not yet valid certificate gets `convoy.dev/CertificateValidity=False` (Expired or NotYetValid),
 * and every listener serving certificates has a gauge of the seconds until the earliest expires
 * (docs/gateway-api.md §8).
 *
 * Gateway API calls a certificate invalid only when its reference or data is (InvalidCertificateRef),
 * and refusing an expired certificate would turn a late renewal into an outage, so it is still
 * served: this is a warning, laid over the build's statuses like Envoy's rejections, from what the
 * fleets serve and the wall clock. It is not part of the build, so it changes as time passes
 * without a build: the Controller lays it over again at the next boundary (`nextBoundary`).
 */
import type { FleetModel, SecretModel } from '../model/fleet';
import type { Condition, ObjectStatus } from '../status/types';
import { ConditionType, Reason, makeCondition, sortConditions } from '../status/conditions';
import { leafValidity, type ValidityPeriod } from '../pki/validity';

/** One certificate a listener serves, with its leaf's validity period. */
export interface ServedCertificate {
  secret: string;
  validity: ValidityPeriod;
}

/** Reads validity periods, once per SecretModel object (models are immutable). */
export class CertificateValidityReader {
  private readonly periods = new WeakMap<SecretModel, ValidityPeriod | null>();

  /** Returns the leaf validity period of `secret`, or undefined when it cannot be read. */
  period(secret: SecretModel): ValidityPeriod | undefined {
    let p = this.periods.get(secret);
    if (p === undefined) {
      p = secret.validity ?? leafValidity(secret.certificateChain) ?? null;
      this.periods.set(secret, p);
    }
    return p ?? undefined;
  }

  /** What each fleet model serves, per listener; fleet models are immutable. */
  private readonly byFleet = new WeakMap<FleetModel, ReadonlyMap<string, ServedCertificate[]>>();

  /** Returns, per listener (qualified name) of the fleets, the certificates it serves. */
  served(fleets: Iterable<FleetModel>): Map<string, ServedCertificate[]> {
    const out = new Map<string, ServedCertificate[]>();
    for (const fleet of fleets) {
      let ofFleet = this.byFleet.get(fleet);
      if (!ofFleet) {
        ofFleet = this.servedBy(fleet);
        this.byFleet.set(fleet, ofFleet);
      }
      for (const [listener, certs] of ofFleet) if (!out.has(listener)) out.set(listener, certs);
    }
    return out;
  }

  /** Returns, per listener of one fleet, the certificates it serves. */
  private servedBy(fleet: FleetModel): Map<string, ServedCertificate[]> {
    return new Map(this.servedIn(fleet));
  }

  /**
   * Yields, per listener of one fleet in the order of its ports and chains, the certificates it
   * serves (the first Terminate chain of a name serving one decides). A generator so that a caller
   * may spread a whole fleet's walk over several turns of the event loop (docs/operations.md §8).
   */
  *servedIn(fleet: FleetModel): Generator<[string, ServedCertificate[]]> {
    const done = new Set<string>();
    const secrets = new Map(fleet.secrets.map((s) => [s.name, s]));
    for (const port of fleet.ports) {
      for (const chain of port.filterChains) {
        if (chain.mode !== 'Terminate' || done.has(chain.name)) continue;
        const certs: ServedCertificate[] = [];
        for (const name of chain.secretNames) {
          const secret = secrets.get(name);
          const validity = secret && this.period(secret);
          if (validity) certs.push({ secret: name, validity });
        }
        if (certs.length > 0) {
          done.add(chain.name);
          yield [chain.name, certs];
        }
      }
    }
  }
}

/** A listener's validity problem: which reason, and the message naming the Secrets. */
export interface ValidityProblem {
  reason: typeof Reason.Expired | typeof Reason.NotYetValid;
  message: string;
}

/** Returns the listeners serving a certificate outside its validity period at `now` (ms). */
export function validityProblems(
  served: ReadonlyMap<string, readonly ServedCertificate[]>,
  now: number,
): Map<string, ValidityProblem> {
  const out = new Map<string, ValidityProblem>();
  for (const [listener, certs] of served) {
    const problem = validityProblem(certs, now);
    if (problem) out.set(listener, problem);
  }
  return out;
}

/** Returns the problem of a listener serving `certs` at `now` (ms), or undefined when they are all valid. */
export function validityProblem(
  certs: readonly ServedCertificate[],
  now: number,
): ValidityProblem | undefined {
  const expired = certs.filter((c) => c.validity.notAfter < now);
  const early = certs.filter((c) => c.validity.notBefore > now);
  const parts = [
    ...expired.map((c) => `Secret ${c.secret} expired at ${iso(c.validity.notAfter)}`),
    ...early.map((c) => `Secret ${c.secret} is not valid before ${iso(c.validity.notBefore)}`),
  ];
  if (parts.length === 0) return undefined;
  return {
    reason: expired.length > 0 ? Reason.Expired : Reason.NotYetValid,
    message: `${parts.join('; ')}; still served`,
  };
}

/** Returns the first time (ms) after `now` at which some served certificate's validity changes. */
export function nextBoundary(
  served: ReadonlyMap<string, readonly ServedCertificate[]>,
  now: number,
): number | undefined {
  let next: number | undefined;
  for (const certs of served.values()) {
    for (const { validity } of certs) {
      for (const t of [validity.notBefore, validity.notAfter + 1])
        if (t > now && (next === undefined || t < next)) next = t;
    }
  }
  return next;
}

/**
 * Returns `statuses` with `convoy.dev/CertificateValidity=False` on the listeners of `problems`
 * (keyed `Kind/ns/name/listener`); statuses it does not change are the same objects.
 */
export function applyValidityProblems(
  statuses: ObjectStatus[],
  problems: ReadonlyMap<string, ValidityProblem>,
  now: string,
): ObjectStatus[] {
  if (problems.size === 0) return statuses;
  return statuses.map((s) => {
    if (s.kind !== 'Gateway' && s.kind !== 'ListenerSet' && s.kind !== 'XListenerSet') return s;
    const prefix = `${s.kind}/${s.metadata.namespace ?? ''}/${s.metadata.name}/`;
    const entries = s.status.listeners;
    if (!Array.isArray(entries)) return s;
    let changed = false;
    const listeners = entries.map((entry: { name: string; conditions: Condition[] }) => {
      const problem = problems.get(prefix + entry.name);
      if (!problem) return entry;
      changed = true;
      const warning = makeCondition(
        ConditionType.CertificateValidity,
        'False',
        problem.reason,
        problem.message,
        s.metadata.generation,
        now,
      );
      return { ...entry, conditions: sortConditions([...entry.conditions, warning]) };
    });
    return changed ? { ...s, status: { ...s.status, listeners } } : s;
  });
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
