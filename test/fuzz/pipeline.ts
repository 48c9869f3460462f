/**
 * The pipeline the fuzz tests drive, cut where Convoy's own seams are (docs/architecture.md §1, §2):
 * file-mode validation, the gateway build the controller runs, the Envoy translation, and the
 * encoding the xDS cache stores. Nothing here is a stand-in: each step calls the production entry.
 */
import type { KubeObject } from '../../src/store/objects';
import type { FleetModel } from '../../src/model/fleet';
import type { EnvoyResources } from '../../src/envoy/resources';
import { validateObject } from '../../src/validation';
import { buildGateways } from '../../src/gateway/build';
import { translateFleet } from '../../src/envoy/translate';
import { encodeMessage } from '../../src/envoy/protos';
import { KIND_TYPE, KINDS } from '../envoy/helpers';
import { OPTS, storeOf } from '../support/objects';
import { keyOfObject } from '../support/worlds';

export interface Refusal {
  key: string;
  errors: string[];
}

/** The objects file mode would load (validateObject finds no problem) and those it would refuse. */
export function admit(objects: KubeObject[]): { admitted: KubeObject[]; refused: Refusal[] } {
  const admitted: KubeObject[] = [];
  const refused: Refusal[] = [];
  for (const o of objects) {
    const errors = validateObject(o);
    if (errors.length === 0) admitted.push(o);
    else refused.push({ key: keyOfObject(o), errors });
  }
  return { admitted, refused };
}

export interface BuiltFleet {
  fleet: string;
  model: FleetModel;
  resources: EnvoyResources;
}

/** Builds every fleet of a store holding `objects`, as the controller's full build does, and translates it. */
export function buildFleets(objects: KubeObject[]): BuiltFleet[] {
  const result = buildGateways(storeOf(...objects), OPTS);
  return result.fleets.map((model) => ({ fleet: model.fleet, model, resources: translateFleet(model) }));
}

const FILTER_CHAIN = 'envoy.config.listener.v3.FilterChain';

/** What one fleet serves, as bytes: every resource, and every Listener split into its parts. */
export interface EncodedFleet {
  /** `<kind>/<name>` (kind as in EnvoyResources: listeners, routes, clusters, endpoints, secrets) → bytes. */
  resources: Map<string, Buffer>;
  /**
   * Per Listener name: the Listener without its filter chains (key ""), and each filter chain by
   * name (key "chain:<name>"; the plain-HTTP chain has no name: "chain:").
   */
  listenerParts: Map<string, Map<string, Buffer>>;
  /** The typed messages, by the same keys as `resources` (for reading names inside them). */
  messages: Map<string, Record<string, unknown>>;
}

function nameOf(kind: keyof EnvoyResources, r: Record<string, unknown>): string {
  return (kind === 'endpoints' ? r.cluster_name : r.name) as string;
}

/** Encodes a fleet's resources as the xDS cache does (one protobuf encoding per resource). */
export function encodeFleet(res: EnvoyResources): EncodedFleet {
  const resources = new Map<string, Buffer>();
  const messages = new Map<string, Record<string, unknown>>();
  const listenerParts = new Map<string, Map<string, Buffer>>();
  for (const kind of KINDS) {
    for (const r of res[kind] as unknown as Record<string, unknown>[]) {
      const key = `${kind}/${nameOf(kind, r)}`;
      resources.set(key, encodeMessage(KIND_TYPE[kind], r));
      messages.set(key, r);
    }
  }
  for (const l of res.listeners) {
    const parts = new Map<string, Buffer>();
    parts.set('', encodeMessage(KIND_TYPE.listeners, { ...l, filter_chains: [] }));
    for (const chain of l.filter_chains ?? [])
      parts.set(`chain:${chain.name ?? ''}`, encodeMessage(FILTER_CHAIN, chain));
    listenerParts.set(l.name!, parts);
  }
  return { resources, listenerParts, messages };
}
