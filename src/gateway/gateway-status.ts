/**
 * Builds Gateway status (conditions, addresses, listeners, attachedListenerSets) and the statuses of
 * the ListenerSets of each Gateway, from the resolved Gateways only.
 *
 * What they report was decided by resolution (gateways.ts) and recorded on the resolved objects;
 * nothing here reads the store.
 */
import { objectNamespace } from '../store/objects';
import type { Condition, ObjectStatus } from '../status/types';
import type { BuildOptions, ResolvedGateway } from './resolved';
import type { GatewayStatus } from './api';
import { GATEWAY_API_VERSION } from './api';
import { ConditionType, Reason, makeCondition } from '../status/conditions';
import { listenerSetStatus, listenerSetVerdict, listenerStatus } from './listenersets';
import { compareStrings } from '../util/compare';
import { statusKey } from '../status/types';

/** Builds the status of one resolved Gateway: conditions, addresses, own listeners, attachedListenerSets. */
export function gatewayStatus(g: ResolvedGateway, opts: BuildOptions): ObjectStatus {
  const gw = g.object;
  const gen = gw.metadata.generation;
  const own = g.listeners.filter((l) => l.owner.kind === 'Gateway');
  const cond = (type: string, status: Condition['status'], reason: string, message: string) =>
    makeCondition(type, status, reason, message, gen, opts.now);
  let conditions: Condition[];
  const problem = g.problem;
  if (problem) {
    // UnsupportedRoutability is the reason of both conditions (docs/architecture.md §13).
    const notProgrammed = problem.reason === Reason.UnsupportedRoutability ? problem.reason : Reason.Invalid;
    conditions = [
      cond(ConditionType.Accepted, 'False', problem.reason, problem.message),
      cond(ConditionType.Programmed, 'False', notProgrammed, 'the Gateway is not accepted'),
    ];
  } else if (!g.accepted) {
    const msg = own.length === 0 ? 'the Gateway has no listeners' : 'no listener is valid';
    conditions = [
      cond(ConditionType.Accepted, 'False', Reason.ListenersNotValid, msg),
      cond(ConditionType.Programmed, 'False', Reason.Invalid, 'the Gateway is not accepted'),
    ];
  } else {
    const invalid = own.filter((l) => !l.ready).map((l) => l.name);
    conditions = [
      invalid.length > 0
        ? cond(
            ConditionType.Accepted,
            'True',
            Reason.ListenersNotValid,
            `listeners not valid: ${invalid.join(', ')}`,
          )
        : cond(ConditionType.Accepted, 'True', Reason.Accepted, 'Gateway is accepted'),
      g.notProgrammed
        ? cond(ConditionType.Programmed, 'False', g.notProgrammed.reason, g.notProgrammed.message)
        : cond(
            ConditionType.Programmed,
            'True',
            Reason.Programmed,
            'Gateway is programmed on its Envoy fleet',
          ),
    ];
    if (g.managed && !g.managed.local) conditions.push(routabilityCondition(g.managed.routability, cond));
  }
  const client = g.backendClientCertificate;
  if (client) {
    // Only Gateways that name a backend client certificate report ResolvedRefs (docs/gateway-api.md §24).
    conditions.push(
      client.ok
        ? cond(
            ConditionType.ResolvedRefs,
            'True',
            Reason.ResolvedRefs,
            'every reference of the Gateway resolved',
          )
        : cond(ConditionType.ResolvedRefs, 'False', client.reason, client.message),
    );
  }
  if (g.insecureFrontendValidation) {
    conditions.push(
      cond(
        ConditionType.InsecureFrontendValidationMode,
        'True',
        Reason.ConfigurationChanged,
        'client certificate validation is AllowInsecureFallback on some port: clients without a valid certificate are accepted there',
      ),
    );
  }
  const status: GatewayStatus = {
    addresses: g.addresses.map((a) => ({ ...a })),
    conditions,
    listeners: own.map((l) => listenerStatus(l)),
    attachedListenerSets: g.listenerSets.filter((s) => s.accepted).length,
  };
  return {
    apiVersion: GATEWAY_API_VERSION,
    kind: 'Gateway',
    metadata: { namespace: objectNamespace(gw), name: gw.metadata.name, generation: gen },
    status: status as unknown as Record<string, unknown>,
  };
}

/** Returns the convoy.dev/Routability condition of a managed Gateway: the routability it obtained. */
function routabilityCondition(
  routability: string,
  cond: (type: string, status: Condition['status'], reason: string, message: string) => Condition,
): Condition {
  const builtIn = [Reason.Public, Reason.Private, Reason.Cluster] as string[];
  const reason = builtIn.includes(routability) ? routability : Reason.Vendor;
  return cond(
    ConditionType.Routability,
    'True',
    reason,
    `the Gateway's fleet has routability ${routability}`,
  );
}

/**
 * Returns the statuses of every resolved Gateway and of every ListenerSet whose parent is one of
 * them (admitted or not), sorted by kind, then namespace/name.
 *
 * Call after route attachment has filled listener.attachedRoutes.
 */
export function gatewayAndListenerSetStatuses(
  gateways: readonly ResolvedGateway[],
  opts: BuildOptions,
): ObjectStatus[] {
  const out: ObjectStatus[] = [];
  for (const g of gateways) {
    out.push(gatewayStatus(g, opts));
    for (const set of g.listenerSets)
      out.push(listenerSetStatus(set, listenerSetVerdict(set, g.accepted), opts));
  }
  return out.sort((a, b) => compareStrings(statusKey(a), statusKey(b)));
}
