/**
 * Keeps a Gateway that turns invalid serving (docs/gateway-api.md §3, docs/architecture.md §13):
 * when a Gateway that was accepted is not accepted any more (an invalid edit of it, of its class
 * or of its parameters), its fleet keeps the model it served last, so Envoy keeps the last good
 * configuration and a managed fleet keeps its objects; its status says so. Only a Gateway that
 * is no longer Convoy's (deleted, or moved to another controller's class) lets its fleet go.
 *
 * The memory is the controller's only: after a restart an invalid Gateway has nothing to hold.
 * Such a Gateway gets no snapshot at all (its connected Envoys keep what they have and receive
 * nothing) and its managed objects are left alone, neither applied nor pruned.
 */
import type { ClusterModel, FleetModel } from '../model/fleet';
import type { ResolvedGateway } from '../gateway/resolved';
import type { Condition, ObjectStatus } from '../status/types';
import { statusKey } from '../status/types';
import { objectKey, objectNamespace } from '../store/objects';
import { ConditionType, Reason, makeCondition, sortConditions } from '../status/conditions';
import type { GatewayStatusAddress } from '../gateway/api';
import type { BuildOptions, StoreView } from '../gateway/resolved';
import { managedAddresses } from '../gateway/managed-gateway';
import { localAddresses } from '../gateway/gateways';

/** What a full build publishes once holds are applied. */
export interface HoldOutcome {
  /** Models to publish: accepted Gateways' new ones, held Gateways' last served ones. */
  fleets: FleetModel[];
  /** Gateways that are Convoy's and not accepted with nothing to hold: no snapshot, objects untouched. */
  untouched: string[];
}

interface Accepted {
  uid: string;
  generation: number | undefined;
}

interface Held extends Accepted {
  fleet: string;
  /** Gateway status key, for the overlay. */
  key: string;
}

export class FleetHold {
  /** Fleet → the Gateway object (uid) and generation its last accepted build came from. */
  private readonly accepted = new Map<string, Accepted>();
  /** Fleets served from their last accepted model, by fleet. */
  private readonly held = new Map<string, Held>();
  private untouchedFleets: string[] = [];

  /**
   * Decides, after a full build, what each Gateway's fleet publishes: the built model of an
   * accepted Gateway; for one not accepted, the model `served` last (its endpoints recomputed by
   * `refresh`, as the endpoint fast path would) when the same Gateway object was accepted earlier,
   * else nothing. `gateways` and `built` are the build's, fleet for fleet.
   */
  decide(
    gateways: readonly ResolvedGateway[],
    built: readonly FleetModel[],
    served: ReadonlyMap<string, FleetModel>,
    refresh: (clusters: readonly ClusterModel[]) => ClusterModel[],
  ): HoldOutcome {
    const byFleet = new Map(built.map((f) => [f.fleet, f]));
    const fleets: FleetModel[] = [];
    const untouched: string[] = [];
    const live = new Set<string>();
    for (const g of gateways) {
      const fleet = g.fleet;
      live.add(fleet);
      const uid = g.object.metadata.uid ?? '';
      const model = byFleet.get(fleet);
      if (g.accepted) {
        this.accepted.set(fleet, { uid, generation: g.object.metadata.generation });
        this.held.delete(fleet);
        if (model) fleets.push(model);
        continue;
      }
      const last = this.accepted.get(fleet);
      const previous = served.get(fleet);
      if (last && last.uid === uid && previous) {
        const key = objectKey('Gateway', objectNamespace(g.object), g.object.metadata.name);
        this.held.set(fleet, { ...last, fleet, key });
        fleets.push({ ...previous, clusters: refresh(previous.clusters) });
        continue;
      }
      this.accepted.delete(fleet);
      this.held.delete(fleet);
      untouched.push(fleet);
    }
    for (const fleet of [...this.accepted.keys()]) if (!live.has(fleet)) this.accepted.delete(fleet);
    for (const fleet of [...this.held.keys()]) if (!live.has(fleet)) this.held.delete(fleet);
    this.untouchedFleets = untouched.sort();
    return { fleets, untouched: this.untouchedFleets };
  }

  /** True when the fleet serves a held model (fast paths must not replace it). */
  isHeld(fleet: string): boolean {
    return this.held.has(fleet);
  }

  /** The keys (statusKey) of the held Gateways: `apply` changes those statuses only. */
  heldKeys(): string[] {
    return [...this.held.values()].map((h) => h.key);
  }

  /** Gateways left alone by the last full build (sorted). */
  untouched(): readonly string[] {
    return this.untouchedFleets;
  }

  /**
   * Lays the hold over held Gateways' statuses: `convoy.dev/ServingLastGoodConfiguration=True`
   * naming the generation served, Programmed's message saying the same, and status.addresses
   * from `addresses` of the fleet (where it serves; undefined keeps the built ones). Other
   * statuses are returned as they are.
   */
  apply(
    statuses: ObjectStatus[],
    now: string,
    addresses: (fleet: string) => GatewayStatusAddress[] | undefined,
  ): ObjectStatus[] {
    if (this.held.size === 0) return statuses;
    const byKey = new Map([...this.held.values()].map((h) => [h.key, h]));
    return statuses.map((s) => {
      const h = s.kind === 'Gateway' ? byKey.get(statusKey(s)) : undefined;
      return h ? heldStatus(s, h, now, addresses(h.fleet)) : s;
    });
  }
}

/** Returns a held Gateway's status: the hold condition added, Programmed's message, addresses. */
function heldStatus(
  s: ObjectStatus,
  h: Held,
  now: string,
  addresses: GatewayStatusAddress[] | undefined,
): ObjectStatus {
  const status = s.status as { conditions?: Condition[]; addresses?: GatewayStatusAddress[] };
  const served = h.generation === undefined ? 'its last accepted generation' : `generation ${h.generation}`;
  const note = `its fleet keeps serving the configuration of ${served} until the Gateway is accepted again or deleted`;
  const conditions = (status.conditions ?? []).map((c) =>
    c.type === ConditionType.Programmed && c.status !== 'True'
      ? { ...c, message: `${c.message}; ${note}` }
      : c,
  );
  conditions.push(
    makeCondition(
      ConditionType.ServingLastGoodConfiguration,
      'True',
      Reason.LastGoodConfiguration,
      `the Gateway is not accepted: ${note}`,
      s.metadata.generation,
      now,
    ),
  );
  return {
    ...s,
    status: {
      ...s.status,
      conditions: sortConditions(conditions),
      ...(addresses ? { addresses } : {}),
    },
  };
}

/**
 * Returns where a held managed fleet serves, for its Gateway's status.addresses: its Service's
 * addresses, or a local fleet's bind address; undefined (keep the built ones) for an unmanaged one.
 */
export function heldAddresses(
  view: StoreView,
  model: FleetModel | undefined,
  opts: BuildOptions,
): GatewayStatusAddress[] | undefined {
  const gw = model && view.get('Gateway', model.gateway.namespace, model.gateway.name);
  const managed = model?.managed;
  if (!gw || !managed) return undefined;
  if (managed.local) return localAddresses(gw, view, opts, managed.local);
  return managedAddresses(view, gw, managed).addresses;
}
