/**
 * The four single-object changes of issue 15, made to the bench world as a user would, each
 * with what the simulated Envoys must receive and what the real Envoy must show for it. Every
 * effect is visible without a backend: a new redirect rule (Envoy answers 302 itself), a new
 * certificate serial, a new SNI, a new endpoint address in Envoy's admin config dump.
 */
import { TypeUrl } from '../../src/envoy/resources';
import type { KubeObject } from '../../src/store/objects';
import type { Expectation } from '../sim-envoy';
import { serialOf } from '../pki';
import { hostnameOf } from '../world';
import type { World } from '../world';
import { answersRedirect, hasEndpoint, servesSerial } from './probes';

export type ChangeKind = 'route' | 'cert' | 'listenerset' | 'endpoints';
export const CHANGE_KINDS: readonly ChangeKind[] = ['route', 'cert', 'listenerset', 'endpoints'];

export const CHANGE_LABELS: Record<ChangeKind, string> = {
  route: 'HTTPRoute edited (redirect rule added)',
  cert: 'certificate Secret rotated',
  listenerset: 'ListenerSet added with Secret and route',
  endpoints: 'EndpointSlice changed',
};

/** Where the real Envoy is reached: its HTTPS listener port and its admin port (loopback). */
export interface EnvoyPorts {
  https: number;
  admin: number;
}

export interface Change {
  kind: ChangeKind;
  /** The objects to write, in order. */
  objects: KubeObject[];
  /** xDS resources every simulated Envoy must receive. */
  expect: Expectation[];
  /** Whether the real Envoy serves the change yet. */
  served(envoy: EnvoyPorts): Promise<boolean>;
}

/** Services some route of the world sends traffic to (only those have endpoints in Envoy). */
export function routedServices(world: World): number[] {
  const used = new Set<number>();
  for (let r = 0; r < world.size.routes; r++) {
    const spec = world.route(r).spec as { rules: { backendRefs?: { name: string }[] }[] };
    for (const rule of spec.rules)
      for (const b of rule.backendRefs ?? []) used.add(Number(b.name.slice('svc-'.length)));
  }
  return [...used].sort((a, b) => a - b);
}

/**
 * Adds to route `route` (an HTTPRoute object of the world) a rule matching exactly `path` whose
 * RequestRedirect filter sends clients to `hostname`: Envoy answers it with 302 by itself.
 */
export function withRedirectRule(route: KubeObject, path: string, hostname: string): KubeObject {
  const spec = route.spec as { rules: unknown[] };
  return {
    ...route,
    spec: {
      ...spec,
      rules: [
        ...spec.rules,
        {
          matches: [{ path: { type: 'Exact', value: path } }],
          filters: [{ type: 'RequestRedirect', requestRedirect: { hostname, statusCode: 302 } }],
        },
      ],
    },
  };
}

/** Generates changes of each kind, each on a different object than the previous one. */
export class ChangeMaker {
  private counter = 0;
  private readonly services: number[];

  /**
   * `portDispatchedBySni`: the world's HTTPS port is translated with SNI dispatch, so a ListenerSet
   * added leaves the port's Listener as it was (docs/xds.md §16) and only its own resources change.
   */
  constructor(
    private readonly world: World,
    private readonly portDispatchedBySni = false,
  ) {
    this.services = routedServices(world);
  }

  next(kind: ChangeKind): Change {
    const k = this.counter++;
    const w = this.world;
    const n = w.size;
    switch (kind) {
      case 'route': {
        const r = (k * 7919 + 13) % n.routes;
        const l = w.listenerOfRoute(r);
        const edited = w.editRoute(r)[0]!;
        const gen = edited.metadata.generation ?? k;
        const path = `/r${r}/e2e-redirect-${gen}`;
        const target = `moved-${r}-${gen}.bench.example.com`;
        return {
          kind,
          objects: [withRedirectRule(edited, path, target)],
          expect: [{ typeUrl: TypeUrl.Route, name: w.routeConfigName(l) }],
          served: (e) => answersRedirect(e.https, hostnameOf(l), path, target),
        };
      }
      case 'cert': {
        const i = (k * 104729 + 7) % n.listenerSets;
        const rot = w.rotateCertificate(i);
        return {
          kind,
          objects: rot.objects,
          expect: [{ typeUrl: TypeUrl.Secret, name: w.secretResourceName(i) }],
          served: (e) => servesSerial(e.https, hostnameOf(i), rot.serial),
        };
      }
      case 'listenerset': {
        const add = w.addListenerSet();
        const serial = serialOf(w.certs[add.index]!.cert);
        return {
          kind,
          objects: add.objects,
          expect: [
            ...(this.portDispatchedBySni ? [] : [{ typeUrl: TypeUrl.Listener, name: w.listenerName() }]),
            { typeUrl: TypeUrl.Route, name: w.routeConfigName(add.index) },
            { typeUrl: TypeUrl.Secret, name: w.secretResourceName(add.index) },
          ],
          served: (e) => servesSerial(e.https, hostnameOf(add.index), serial),
        };
      }
      case 'endpoints': {
        const s = this.services[(k * 6151 + 3) % this.services.length]!;
        const slice = w.changeEndpoints(s)[0]!;
        const address = (slice as unknown as { endpoints: { addresses: string[] }[] }).endpoints[0]!
          .addresses[0]!;
        return {
          kind,
          objects: [slice],
          expect: [{ typeUrl: TypeUrl.Endpoint, name: w.clusterName(s) }],
          served: (e) => hasEndpoint(e.admin, w.clusterName(s), address),
        };
      }
    }
  }
}
