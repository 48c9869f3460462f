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
  nextBoundary,
  validityProblems,
} from './certificate-validity';

/** The longest a validity re-check waits (setTimeout's limit is about 24 days). */
const MAX_VALIDITY_WAIT_MS = 24 * 3600 * 1000;

/** The served certificates' validity warnings, re-checked at each validity boundary. */
export class ValidityOverlay {
  /** Validity periods of the certificates the fleets serve. */
  private readonly reader = new CertificateValidityReader();
  private timer: NodeJS.Timeout | undefined;

  /** `clock` is the wall clock for validity periods; `onBoundary` lays the statuses over again. */
  constructor(
    private readonly clock: () => Date,
    private readonly onBoundary: () => void,
  ) {}

  /** Per served listener, when its earliest certificate expires (the expiry gauge). */
  *expiries(fleets: Iterable<FleetModel>): Iterable<{ listener: string; notAfter: number }> {
    for (const [listener, certs] of this.reader.served(fleets))
      yield { listener, notAfter: Math.min(...certs.map((c) => c.validity.notAfter)) };
  }

  /**
   * Returns `statuses` with the warnings for what `fleets` serve at the clock's now, stamped `now`,
   * and sets the timer for the next boundary.
   */
  apply(statuses: ObjectStatus[], fleets: Iterable<FleetModel>, now: string): ObjectStatus[] {
    const served = this.reader.served(fleets);
    const at = this.clock().getTime();
    this.stop();
    const next = nextBoundary(served, at);
    if (next !== undefined) {
      this.timer = setTimeout(() => this.onBoundary(), Math.min(next - at, MAX_VALIDITY_WAIT_MS));
      this.timer.unref();
    }
    return applyValidityProblems(statuses, validityProblems(served, at), now);
  }

  /** Cancels the boundary timer. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
