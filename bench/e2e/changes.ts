/**
 * The single-object changes of issue 15, made to the bench world as a user would, each with what
 * the simulated Envoys must receive and what the real Envoy must show for it. Every effect is
 * visible without a backend: a new redirect rule (Envoy answers 302 itself), a new certificate
 * serial, a new SNI, a new endpoint address in Envoy's admin config dump; and for deletions, an
 * SNI no longer served (while another still is) and a route's match gone from Envoy's admin
 * config dump.
 */
import { TypeUrl } from '../../src/envoy/resources';
import type { KubeObject } from '../../src/store/objects';
import type { Expectation } from '../sim-envoy';
import { serialOf } from '../pki';
import { hostnameOf } from '../world';
import type { World } from '../world';
import { internalListenerName } from '../../src/envoy/translate/sni-dispatch';
import { answersRedirect, hasEndpoint, hasRouteMatch, servesSerial, stoppedServing } from './probes';

/** The kinds of change the bench makes, in the order it makes them by default. */
export const CHANGE_KINDS = [
  'route',
  'cert',
  'listenerset',
  'endpoints',
  'listenerset-removed',
  'route-removed',
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export const CHANGE_LABELS: Record<ChangeKind, string> = {
  route: 'HTTPRoute edited (redirect rule added)',
  cert: 'certificate Secret rotated',
  listenerset: 'ListenerSet added with Secret and route',
  endpoints: 'EndpointSlice changed',
  'listenerset-removed': 'ListenerSet deleted with its Secret and routes',
  'route-removed': 'HTTPRoute deleted',
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
  /** The objects to delete instead (files removed, or `kubectl delete`). */
  deleted?: KubeObject[];
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
  /** Routes deleted so far (a ListenerSet deleted later takes only the routes it still has). */
  private readonly deletedRoutes = new Set<number>();

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
      case 'listenerset-removed': {
        // The original sets from the last one down: none of them is an earlier change's object.
        const i = n.listenerSets - 1 - (k % n.listenerSets);
        const other = (i + n.listenerSets / 2) % n.listenerSets;
        const serial = serialOf(w.certs[i]!.cert);
        const otherSerial = serialOf(w.certs[other]!.cert);
        const routes: KubeObject[] = [];
        for (let r = i; r < n.routes; r += n.listenerSets) {
          if (this.deletedRoutes.has(r)) continue;
          this.deletedRoutes.add(r);
          routes.push(w.route(r));
        }
        const chain = `ListenerSet/${w.namespaceOf(i)}/${w.listenerSetName(i)}/https`;
        return {
          kind,
          objects: [],
          deleted: [...routes, w.listenerSet(i), w.secret(i)],
          expect: [
            this.portDispatchedBySni
              ? {
                  typeUrl: TypeUrl.Listener,
                  name: internalListenerName(w.listenerName(), chain),
                  removed: true,
                }
              : { typeUrl: TypeUrl.Listener, name: w.listenerName() },
          ],
          // Gone for its SNI while another hostname's certificate is still served.
          served: async (e) =>
            (await stoppedServing(e.https, hostnameOf(i), serial)) &&
            (await servesSerial(e.https, hostnameOf(other), otherSerial)),
        };
      }
      case 'route-removed': {
        let r = (k * 4099 + 29) % n.routes;
        while (this.deletedRoutes.has(r)) r = (r + 1) % n.routes;
        this.deletedRoutes.add(r);
        const l = w.listenerOfRoute(r);
        const route = w.route(r);
        return {
          kind,
          objects: [],
          deleted: [route],
          expect: [{ typeUrl: TypeUrl.Route, name: w.routeConfigName(l) }],
          served: async (e) =>
            (await hasRouteMatch(e.admin, w.routeConfigName(l), `/r${r}/healthz`)) === false,
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
