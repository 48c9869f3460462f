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

  /** Per served listener, when its earliest certificate expires (the expiry gauge). */
  *expiries(fleets: Iterable<FleetModel>): Iterable<{ listener: string; notAfter: number }> {
    for (const [listener, certs] of this.reader.served(fleets))
      yield { listener, notAfter: Math.min(...certs.map((c) => c.validity.notAfter)) };
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
