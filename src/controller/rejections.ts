/**
 * From what the fleets' Envoys rejected (the ADS server's RejectionFeed) to the objects to tell:
 * each rejected resource is traced to its owners in the fleet model (model/owners.ts) and becomes
 * a note on their statuses (status/rejections.ts). The same owners are the objects whose change
 * makes Convoy offer the resource again.
 */
import { TypeUrl } from '../envoy/resources';
import type { FleetModel } from '../model/fleet';
import { parseListenerQualifiedName } from '../model/names';
import { ownersOf } from '../model/owners';
import type { EnvoyResourceKind } from '../model/owners';
import { emptyRejections } from '../status/rejections';
import type { ObjectRejections, RejectionNote, RouteRejections } from '../status/rejections';
import { objectKey } from '../store/objects';
import type { FleetRejections } from '../xds/rejections';

const KIND_OF_TYPE: Readonly<Record<string, EnvoyResourceKind>> = {
  [TypeUrl.Listener]: 'Listener',
  [TypeUrl.Route]: 'RouteConfiguration',
  [TypeUrl.Cluster]: 'Cluster',
  [TypeUrl.Endpoint]: 'ClusterLoadAssignment',
  [TypeUrl.Secret]: 'Secret',
};

/** A rejected resource of a fleet, as the ADS server's reoffer() takes it. */
export interface FleetResource {
  fleet: string;
  typeUrl: string;
  name: string;
}

export interface RejectionMapping {
  /** The notes to lay over the statuses. */
  notes: ObjectRejections;
  /**
   * objectKey of each object a rejected resource comes from (its listeners' owners, its routes,
   * and the fleet's Gateway) → the resources to offer again when that object changes.
   */
  reofferOn: Map<string, FleetResource[]>;
}

/**
 * Maps the fleets' rejections to notes on objects. `fleets` are the models being served;
 * `portListeners(fleet)` the qualified names of each port's programmed listeners (ownersOf). A
 * rejection of a fleet no longer served is dropped: there is no object left to tell.
 */
export function mapRejections(
  views: Iterable<FleetRejections>,
  fleets: ReadonlyMap<string, FleetModel>,
  portListeners: (fleet: string) => ReadonlyMap<number, readonly string[]>,
): RejectionMapping {
  const notes = emptyRejections();
  const reofferOn = new Map<string, FleetResource[]>();
  const reoffer = (key: string, r: FleetResource) => {
    const list = reofferOn.get(key) ?? [];
    if (!list.some((x) => x.fleet === r.fleet && x.typeUrl === r.typeUrl && x.name === r.name)) list.push(r);
    reofferOn.set(key, list);
  };
  for (const view of views) {
    const model = fleets.get(view.fleet);
    if (!model || view.resources.length === 0) continue;
    const byPort = portListeners(view.fleet);
    const gatewayKey = objectKey('Gateway', model.gateway.namespace, model.gateway.name);
    const parents = fleetParents(model, byPort, gatewayKey);
    let routeGroups: Map<string, RouteRejections> | undefined;
    for (const r of view.resources) {
      const kind = KIND_OF_TYPE[r.typeUrl];
      if (!kind) continue;
      const note: RejectionNote = {
        resource: `${kind} ${r.name}`,
        rejectedBy: r.nodes.length,
        envoys: view.envoys,
        message: r.message,
      };
      const resource: FleetResource = { fleet: view.fleet, typeUrl: r.typeUrl, name: r.name };
      const owners = ownersOf(model, byPort, kind, r.name, r.message);
      for (const l of owners.listeners) {
        const key = objectKey(l.kind, l.namespace, l.name);
        const bySection = notes.listeners.get(key) ?? new Map<string, RejectionNote[]>();
        bySection.set(l.listener, [...(bySection.get(l.listener) ?? []), note]);
        notes.listeners.set(key, bySection);
        reoffer(key, resource);
      }
      for (const route of owners.routes) {
        const key = objectKey(route.kind, route.namespace, route.name);
        routeGroups ??= new Map();
        let group = routeGroups.get(key);
        if (!group) {
          group = { parents, notes: [] };
          routeGroups.set(key, group);
          notes.routes.set(key, [...(notes.routes.get(key) ?? []), group]);
        }
        group.notes.push(note);
        reoffer(key, resource);
      }
      if (owners.listeners.length === 0 && owners.routes.length === 0)
        notes.objects.set(gatewayKey, [...(notes.objects.get(gatewayKey) ?? []), note]);
      // The Gateway is the fleet's root: changing it offers everything its Envoys rejected again.
      reoffer(gatewayKey, resource);
    }
  }
  return { notes, reofferOn };
}

/** Keys of the Gateway and of every ListenerSet with a listener in the fleet: a route's parents. */
function fleetParents(
  model: FleetModel,
  byPort: ReadonlyMap<number, readonly string[]>,
  gatewayKey: string,
): Set<string> {
  const keys = new Set([gatewayKey]);
  const add = (qualifiedName: string) => {
    const ref = parseListenerQualifiedName(qualifiedName);
    if (ref) keys.add(objectKey(ref.kind, ref.namespace, ref.name));
  };
  for (const names of byPort.values()) for (const qn of names) add(qn);
  for (const port of model.ports) for (const chain of port.filterChains) add(chain.name);
  return keys;
}

/** The qualified names of a Gateway's programmed listeners, by port (for ownersOf). */
export function listenersByPort(
  listeners: Iterable<{ qualifiedName: string; port: number; ready: boolean }>,
): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const l of listeners) {
    if (l.ready) out.set(l.port, [...(out.get(l.port) ?? []), l.qualifiedName]);
  }
  return out;
}
