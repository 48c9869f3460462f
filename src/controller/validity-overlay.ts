/**
 * Lays `convoy.dev/CertificateValidity` warnings over build statuses for listeners serving a
 * certificate outside its validity period (certificate-validity.ts, docs/gateway-api.md §8), and
 * calls back when the next served certificate's period starts or ends, so the warnings follow the
 * wall clock without a build.
 */
import type { ObjectStatus } from '../status/types';
import type { FleetModel } from '../model/fleet';
import {
  CertificateValidityReader,
  applyValidityProblems,
  type ValidityProblem,
} from './certificate-validity';
import { ServedCertificates } from './served-certificates';
import { parseListenerQualifiedName } from '../model/names';
import { objectKey } from '../store/objects';

/** One served listener and when its earliest certificate expires (ms since the epoch). */
export interface ListenerExpiry {
  readonly listener: string;
  readonly notAfter: number;
}

/** The longest a validity re-check waits (setTimeout's limit is about 24 days). */
const MAX_VALIDITY_WAIT_MS = 24 * 3600 * 1000;

/** The served certificates' validity warnings, re-checked at each validity boundary. */
export class ValidityOverlay {
  /** Validity periods of the certificates the fleets serve (the expiry gauge). */
  private readonly reader = new CertificateValidityReader();
  private problems = new Map<string, ValidityProblem>();
  private timer: NodeJS.Timeout | undefined;

  /**
   * `clock` is the wall clock for validity periods; `onBoundary` lays the statuses over again;
   * `served` tells what the fleets serve (served-certificates.ts; a test may give its oracle).
   */
  constructor(
    private readonly clock: () => Date,
    private readonly onBoundary: () => void,
    private readonly served: Pick<ServedCertificates, 'update'> = new ServedCertificates(),
  ) {}

  /** Per fleet model, its listeners' earliest expiries in the reader's order (models are immutable). */
  private readonly expiriesOf = new WeakMap<FleetModel, readonly ListenerExpiry[]>();
  /** The fleets of the last complete `expiries` walk and its rows, for the next scrape. */
  private lastExpiries: { fleets: readonly FleetModel[]; rows: readonly ListenerExpiry[] } | undefined;

  /**
   * Per served listener, when its earliest certificate expires (the expiry gauge): for a listener
   * two fleets serve, the first fleet's. Rows are kept per fleet model and for the last list of
   * fleets, so a scrape without a build walks nothing, and a fleet's walk after a build is lazy:
   * the gauge's reader spreads it over turns (docs/operations.md §8 "Scrape cost (session 18)").
   */
  *expiries(fleets: Iterable<FleetModel>): Iterable<ListenerExpiry> {
    const list = [...fleets];
    const last = this.lastExpiries;
    if (last && last.fleets.length === list.length && last.fleets.every((f, i) => f === list[i])) {
      yield* last.rows;
      return;
    }
    const rows: ListenerExpiry[] = [];
    const seen = new Set<string>();
    for (const fleet of list) {
      const known = this.expiriesOf.get(fleet);
      const built: ListenerExpiry[] = [];
      const ofFleet = known ?? this.walkExpiries(fleet, built);
      for (const row of ofFleet) {
        if (seen.has(row.listener)) continue;
        seen.add(row.listener);
        rows.push(row);
        yield row;
      }
      if (!known) this.expiriesOf.set(fleet, built);
    }
    this.lastExpiries = { fleets: list, rows };
  }

  /** Yields one fleet's expiry rows as the reader finds them, and keeps each in `into`. */
  private *walkExpiries(fleet: FleetModel, into: ListenerExpiry[]): Generator<ListenerExpiry> {
    for (const [listener, certs] of this.reader.servedIn(fleet)) {
      let notAfter = Infinity;
      for (const c of certs) notAfter = Math.min(notAfter, c.validity.notAfter);
      const row = { listener, notAfter };
      into.push(row);
      yield row;
    }
  }

  /**
   * Takes what `fleets` serve at the clock's now, sets the timer for the next boundary, and returns
   * the keys (statusKey) of the objects with a warning: `apply` changes those statuses only.
   */
  update(fleets: Iterable<FleetModel>): Set<string> {
    const at = this.clock().getTime();
    const { problems, next } = this.served.update(fleets, at);
    this.problems = problems;
    this.stop();
    if (next !== undefined) {
      this.timer = setTimeout(() => this.onBoundary(), Math.min(next - at, MAX_VALIDITY_WAIT_MS));
      this.timer.unref();
    }
    const keys = new Set<string>();
    for (const listener of problems.keys()) {
      const ref = parseListenerQualifiedName(listener);
      if (ref) keys.add(objectKey(ref.kind, ref.namespace, ref.name));
    }
    return keys;
  }

  /** Returns `statuses` with the warnings of the last `update`, stamped `now`. */
  apply(statuses: ObjectStatus[], now: string): ObjectStatus[] {
    return applyValidityProblems(statuses, this.problems, now);
  }

  /** Cancels the boundary timer. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
