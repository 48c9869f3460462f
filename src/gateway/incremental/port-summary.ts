import { ConditionType } from '../../status/conditions';
import { PortClaims } from '../conflicts';
import type { ResolvedListener } from '../resolved';

/**
 * What the ListenerSet fast path needs to know of the listeners a Gateway already has on a port:
 * the claims a new listener is checked against, and whether any of them may overlap a TLS
 * listener. Remembered per list of listeners (lists are never changed once built) and carried to
 * the list with a new set's listeners appended, so adding a ListenerSet does not go through the
 * port's thousands of listeners again (docs/architecture.md §8).
 */
export interface PortSummary {
  /** The claims of the port's listeners that hold it (Gateway listeners, non-conflicted others). */
  readonly claims: PortClaims;
  /** Whether any listener on the port is an accepted HTTPS one without hostname or with a wildcard. */
  readonly mayOverlap: boolean;
}

const summaries = new WeakMap<readonly ResolvedListener[], Map<number, PortSummary>>();

/** The summary of `port` among `listeners`: built once per list and port (O(listeners)). */
export function portSummary(listeners: readonly ResolvedListener[], port: number): PortSummary {
  let perPort = summaries.get(listeners);
  if (!perPort) {
    perPort = new Map();
    summaries.set(listeners, perPort);
  }
  let summary = perPort.get(port);
  if (!summary) {
    summary = summarize(
      { claims: PortClaims.empty(), mayOverlap: false },
      listeners.filter((l) => l.port === port),
    );
    perPort.set(port, summary);
  }
  return summary;
}

/**
 * Records the summaries of `appended`, which is `listeners` followed by `added`, from those known
 * of `listeners`: each port's claims get a layer with the added listeners on it (the base claims
 * stay as they are), so the next set added to the Gateway finds them.
 */
export function rememberAppendedListeners(
  listeners: readonly ResolvedListener[],
  appended: readonly ResolvedListener[],
  added: readonly ResolvedListener[],
): void {
  const perPort = summaries.get(listeners);
  if (!perPort) return;
  const next = new Map<number, PortSummary>();
  for (const [port, summary] of perPort) {
    const mine = added.filter((l) => l.port === port);
    next.set(
      port,
      mine.length === 0
        ? summary
        : summarize({ claims: PortClaims.over(summary.claims), mayOverlap: summary.mayOverlap }, mine),
    );
  }
  summaries.set(appended, next);
}

/** An accepted HTTPS listener without hostname or with a wildcard one (markOverlappingTLS's input). */
export function mayOverlap(l: ResolvedListener): boolean {
  return (
    l.protocol === 'HTTPS' &&
    l.conditions.some((c) => c.type === ConditionType.Accepted && c.status === 'True') &&
    (!l.hostname || l.hostname.startsWith('*.'))
  );
}

/** `into` (whose claims it adds to) with `listeners` of its port added. */
function summarize(
  into: { claims: PortClaims; mayOverlap: boolean },
  listeners: readonly ResolvedListener[],
): PortSummary {
  let overlap = into.mayOverlap;
  for (const l of listeners) {
    overlap ||= mayOverlap(l);
    const conflicted = l.conditions.some((c) => c.type === ConditionType.Conflicted && c.status === 'True');
    if (l.owner.kind !== 'Gateway' && conflicted) continue;
    into.claims.add({ port: l.port, protocol: l.protocol, hostname: l.hostname, tlsMode: l.tlsMode });
  }
  return { claims: into.claims, mayOverlap: overlap };
}
