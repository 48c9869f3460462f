import type { ResolvedListener } from './resolved';
import { ConditionType } from '../status/conditions';
import { listenerName } from '../model/names';

/**
 * Returns the name of the Envoy Listener of an HTTPS/TLS port: `<protocol>-<port>` after the first
 * listener of the port, in precedence order, that is Accepted, ready or not (docs/architecture.md
 * §5).
 *
 * Accepted listeners of one port share a protocol family (a listener of another family on the
 * port is Conflicted), so the name always fits the Listener. Readiness is left out on purpose: a
 * listener becomes ready or unready when its certificate is fixed or broken, and a name taken from
 * ready listeners only would then rename the Listener, which Envoy removes and re-adds, draining
 * every connection of the port, other teams' listeners' included. `firstReady` (a ready listener
 * of the port, hence Accepted) names the port if `listeners` holds no Accepted one.
 */
export function sniPortName(
  port: number,
  listeners: readonly ResolvedListener[],
  firstReady: ResolvedListener,
): string {
  const named =
    listeners.find(
      (l) =>
        l.port === port && l.conditions.some((c) => c.type === ConditionType.Accepted && c.status === 'True'),
    ) ?? firstReady;
  return listenerName(named.protocol, port);
}
