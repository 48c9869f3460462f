/**
 * How the fleet page colours an object from its conditions: `error` (red) when a condition says
 * the object does not work as declared, `warning` (amber) when it works but something needs
 * attention, `ok` (green) otherwise, `unknown` while Convoy has not reported on it yet.
 */
import { ConditionType } from '../status/conditions';

export type Health = 'ok' | 'warning' | 'error' | 'unknown';

const RANK: Record<Health, number> = { ok: 0, unknown: 1, warning: 2, error: 3 };

/** The worse of the given healths (`ok` for none). */
export function worst(healths: readonly Health[]): Health {
  let out: Health = 'ok';
  for (const h of healths) if (RANK[h] > RANK[out]) out = h;
  return out;
}

/** Conditions whose False means the object is broken. */
const MUST_BE_TRUE: ReadonlySet<string> = new Set([
  ConditionType.Accepted,
  ConditionType.Programmed,
  ConditionType.ResolvedRefs,
  ConditionType.CertificateValidity,
]);
/** Conditions whose True means the object is broken. */
const MUST_BE_FALSE: ReadonlySet<string> = new Set([ConditionType.Conflicted, ConditionType.EnvoyRejected]);
/** Conditions whose True means the object works but needs attention. */
const WARN_WHEN_TRUE: ReadonlySet<string> = new Set([
  ConditionType.OverlappingTLSConfig,
  ConditionType.PartiallyInvalid,
  ConditionType.ServingLastGoodCertificate,
]);

/** Health of an object (or listener, or route parent entry) from its conditions. */
export function conditionsHealth(conditions: readonly { type: string; status: string }[]): Health {
  let out: Health = 'ok';
  for (const c of conditions) {
    if (MUST_BE_TRUE.has(c.type) && c.status === 'False') return 'error';
    if (MUST_BE_FALSE.has(c.type) && c.status === 'True') return 'error';
    if (WARN_WHEN_TRUE.has(c.type) && c.status === 'True') out = 'warning';
    if (c.status === 'Unknown') out = worst([out, 'warning']);
  }
  return out;
}
