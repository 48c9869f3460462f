/**
 * The status publisher's fast-path publication (publishChanges: only the changed and the overlaid
 * objects) leaves the sinks holding exactly what publishing the full list every time does (the
 * behaviour before it, publishAll, as the oracle), over random sequences of fast-path changes,
 * full builds, rejections, holds and validity boundaries (docs/architecture.md §8).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusPublisher, type OverlayInputs } from '../../src/controller/status-publisher';
import { FleetHold } from '../../src/controller/fleet-hold';
import { RejectionOverlay } from '../../src/controller/rejection-overlay';
import { ValidityOverlay } from '../../src/controller/validity-overlay';
import { ServedCertificates } from '../../src/controller/served-certificates';
import {
  CertificateValidityReader,
  nextBoundary,
  validityProblems,
} from '../../src/controller/certificate-validity';
import { silentLogger } from '../../src/observability/logger';
import { TypeUrl } from '../../src/envoy/resources';
import type { FilterChainModel, FleetModel, SecretModel } from '../../src/model/fleet';
import type { ResolvedGateway } from '../../src/gateway/resolved';
import type { Condition, ObjectStatus, StatusSink } from '../../src/status/types';
import { statusKey } from '../../src/status/types';
import { StatusView } from '../../src/status/view';
import type { FleetRejections } from '../../src/xds/rejections';
import { rng } from '../support/rng';

const HOUR = 3600_000;
const T0 = Date.parse('2030-01-01T00:00:00Z');

function cond(type: string, status: Condition['status'], reason: string, at: string): Condition {
  return { type, status, reason, message: reason, observedGeneration: 1, lastTransitionTime: at };
}

/**
 * What the fleets serve, computed from every fleet each time by certificate-validity.ts's
 * functions: the oracle of served-certificates.ts's incremental index.
 */
function servedFromScratch(): Pick<ServedCertificates, 'update'> {
  const reader = new CertificateValidityReader();
  return {
    update: (fleets, at) => {
      const served = reader.served(fleets);
      return { problems: validityProblems(served, at), next: nextBoundary(served, at) };
    },
  };
}

/**
 * A publisher with its own overlays, and a sink view; counts what the sinks were handed. The
 * oracle's validity overlay computes from scratch.
 */
function side(clock: () => number, oracle = false) {
  const view = new StatusView();
  const handed = { full: 0, changed: 0 };
  const counter: StatusSink = {
    publish: (s) => void (handed.full += s.length),
    publishChanges: (c) => void (handed.changed += c.length),
  };
  const hold = new FleetHold();
  const rejections = new RejectionOverlay(undefined, silentLogger());
  const validity = new ValidityOverlay(
    () => new Date(clock()),
    () => {},
    oracle ? servedFromScratch() : new ServedCertificates(),
  );
  let inputs: OverlayInputs | undefined;
  const publisher = new StatusPublisher({
    sinks: [view, counter],
    log: silentLogger(),
    hold,
    rejections,
    validity,
    inputs: () => inputs!,
  });
  return {
    view,
    handed,
    hold,
    rejections,
    validity,
    publisher,
    setInputs: (i: OverlayInputs) => (inputs = i),
  };
}

/** A random world of fleets, their listener sets and routes, with statuses, and changes to it. */
class World {
  /** Statuses in build order (what a build of the world gives). */
  statuses = new Map<string, ObjectStatus>();
  fleets = new Map<string, FleetModel>();
  gateways: ResolvedGateway[] = [];
  private n = 0;

  constructor(
    private readonly random: () => number,
    private readonly now: () => string,
  ) {
    for (const g of ['g0', 'g1']) {
      const gw = this.gatewayStatus(g, []);
      this.statuses.set(statusKey(gw), gw);
      this.fleets.set(`ns/${g}`, {
        fleet: `ns/${g}`,
        gateway: { namespace: 'ns', name: g },
        ports: [{ name: 'https-443', port: 443, filterChains: [] }],
        clusters: [],
        secrets: [],
      } as unknown as FleetModel);
      this.gateways.push({
        fleet: `ns/${g}`,
        accepted: true,
        listeners: [],
        object: { metadata: { name: g, namespace: 'ns', uid: g, generation: 1 } },
      } as unknown as ResolvedGateway);
    }
    for (let i = 0; i < 6; i++) this.addListenerSet();
    for (let i = 0; i < 10; i++) this.addRoute();
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  gatewayStatus(g: string, sets: string[]): ObjectStatus {
    return {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { namespace: 'ns', name: g, generation: 1 },
      status: {
        conditions: [cond('Accepted', 'True', 'Accepted', this.now())],
        attachedListenerSets: sets.length,
        listeners: [
          { name: 'https', attachedRoutes: 0, conditions: [cond('Programmed', 'True', 'Ok', this.now())] },
        ],
      },
    };
  }

  validity(): SecretModel['validity'] {
    const start = T0 + Math.floor(this.random() * 6 - 2) * HOUR;
    return { notBefore: start, notAfter: start + Math.floor(1 + this.random() * 4) * HOUR };
  }

  /** A new ListenerSet on a random Gateway: its chain and secret in the fleet, its status; returns what changed. */
  addListenerSet(): ObjectStatus[] {
    const fleet = this.pick([...this.fleets.keys()]);
    const model = this.fleets.get(fleet)!;
    const name = `ls${this.n++}`;
    const secret: SecretModel = {
      name: `ns/${name}`,
      certificateChain: '',
      privateKey: '',
      validity: this.validity(),
    };
    const chain = {
      name: `ListenerSet/ns/${name}/https`,
      serverNames: [`${name}.example`],
      mode: 'Terminate',
      protocol: 'HTTPS',
      secretNames: [secret.name],
    } as FilterChainModel;
    const port = model.ports[0];
    this.fleets.set(fleet, {
      ...model,
      ports: [{ ...port, filterChains: [...port.filterChains, chain] }],
      secrets: [...model.secrets, secret],
    });
    const set: ObjectStatus = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ListenerSet',
      metadata: { namespace: 'ns', name, generation: 1 },
      status: {
        conditions: [cond('Accepted', 'True', 'Accepted', this.now())],
        listeners: [
          { name: 'https', attachedRoutes: 0, conditions: [cond('Programmed', 'True', 'Ok', this.now())] },
        ],
      },
    };
    const g = fleet.slice(3);
    const sets = model.ports[0].filterChains.map((c) => c.name);
    const gw = this.gatewayStatus(g, [...sets, chain.name]);
    this.statuses.set(statusKey(gw), gw);
    this.statuses.set(statusKey(set), set);
    return [gw, set];
  }

  addRoute(): ObjectStatus[] {
    const route: ObjectStatus = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { namespace: 'ns', name: `r${this.n++}`, generation: 1 },
      status: { parents: [] },
    };
    return this.editRoute(route);
  }

  /** A new status for `route` (random conditions), as a route edit gives. */
  editRoute(route: ObjectStatus): ObjectStatus[] {
    const parent = this.pick([...this.statuses.values()].filter((s) => s.kind === 'ListenerSet'));
    const accepted = this.random() < 0.7;
    const next: ObjectStatus = {
      ...route,
      status: {
        parents: [
          {
            parentRef: { kind: 'ListenerSet', name: parent.metadata.name },
            controllerName: 'convoy.dev/gateway-controller',
            conditions: [
              cond('Accepted', accepted ? 'True' : 'False', accepted ? 'Accepted' : 'NotAllowed', this.now()),
              cond('ResolvedRefs', 'True', 'ResolvedRefs', this.now()),
            ],
          },
        ],
      },
    };
    this.statuses.set(statusKey(next), next);
    return [next];
  }

  /** A certificate rotated: a new SecretModel (maybe another validity period) in its fleet. */
  rotate(): void {
    const fleet = this.pick([...this.fleets.keys()]);
    const model = this.fleets.get(fleet)!;
    if (model.secrets.length === 0) return;
    const old = this.pick(model.secrets);
    const renewed: SecretModel = { ...old, validity: this.validity() };
    this.fleets.set(fleet, { ...model, secrets: model.secrets.map((s) => (s === old ? renewed : s)) });
  }

  routes(): ObjectStatus[] {
    return [...this.statuses.values()].filter((s) => s.kind === 'HTTPRoute');
  }

  /** Rejections of a random fleet: a Secret (its listeners), a Cluster nothing uses (its Gateway), or none. */
  rejections(): FleetRejections {
    const fleet = this.pick([...this.fleets.keys()]);
    const model = this.fleets.get(fleet)!;
    const resources = [];
    if (this.random() < 0.6 && model.secrets.length > 0)
      resources.push({
        typeUrl: TypeUrl.Secret,
        name: this.pick(model.secrets).name,
        version: 'v',
        nodes: ['e'],
        message: 'bad',
      });
    if (this.random() < 0.4)
      resources.push({
        typeUrl: TypeUrl.Cluster,
        name: 'unknown',
        version: 'v',
        nodes: ['e'],
        message: 'bad',
      });
    return { fleet, envoys: 1, resources };
  }
}

describe('StatusPublisher', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    test(`fast-path publications hold what full publications do (seed ${seed})`, () => {
      const random = rng(seed);
      let clock = T0;
      const nowText = () => new Date(clock).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const world = new World(random, nowText);
      const delta = side(() => clock);
      const oracle = side(() => clock, true);
      const both = [delta, oracle];
      const inputs = (): OverlayInputs => ({
        now: nowText(),
        fleets: world.fleets,
        gateways: world.gateways,
        heldAddresses: () => [{ type: 'IPAddress', value: '192.0.2.1' }],
      });
      const fullBuild = () => {
        for (const s of both) {
          s.hold.decide(world.gateways, [...world.fleets.values()], world.fleets, (c) => [...c]);
          s.setInputs(inputs());
          s.publisher.publishAll([...world.statuses.values()]);
        }
      };
      const compare = (step: string) => {
        assert.deepEqual(delta.view.list(), oracle.view.list(), `seed ${seed}, ${step}`);
      };
      fullBuild();
      compare('first build');
      for (let step = 0; step < 60; step++) {
        clock += Math.floor(random() * 40) * 60_000;
        const r = random();
        let what: string;
        if (r < 0.3) {
          what = 'route edited';
          const changed = world.editRoute(world.pick(world.routes()));
          fastPath(changed, []);
        } else if (r < 0.4) {
          what = 'route added';
          fastPath(world.addRoute(), []);
        } else if (r < 0.5) {
          what = 'route removed';
          const route = world.pick(world.routes());
          world.statuses.delete(statusKey(route));
          fastPath([], [statusKey(route)]);
        } else if (r < 0.6) {
          what = 'listener set added';
          fastPath(world.addListenerSet(), []);
        } else if (r < 0.7) {
          what = 'certificate rotated';
          world.rotate();
          fastPath([], []);
        } else if (r < 0.8) {
          what = 'rejections changed';
          const view = world.rejections();
          for (const s of both) {
            s.rejections.set(view);
            s.setInputs(inputs());
          }
          delta.publisher.republish();
          oracle.publisher.publishAll([...world.statuses.values()], true);
        } else if (r < 0.9) {
          what = 'time passed';
          for (const s of both) s.setInputs(inputs());
          delta.publisher.republish();
          oracle.publisher.publishAll([...world.statuses.values()], true);
        } else {
          what = 'full build';
          // Sometimes a Gateway turns invalid: its fleet is held (fleet-hold.ts), or accepted again.
          const g = world.pick(world.gateways) as { accepted: boolean };
          g.accepted = random() < 0.5;
          fullBuild();
        }
        compare(`step ${step}: ${what}`);
      }
      for (const s of both) s.validity.stop();
      // Fast paths handed the sinks a few statuses each, not the world.
      assert.ok(delta.handed.changed < oracle.handed.full, `${delta.handed.changed} < ${oracle.handed.full}`);

      function fastPath(changed: ObjectStatus[], removed: string[]): void {
        for (const s of both) s.setInputs(inputs());
        delta.publisher.publishChanges(changed, removed);
        oracle.publisher.publishAll([...world.statuses.values()]);
      }
    });
  }

  test('publishChanges hands the sinks only what changed, after a full build', () => {
    const clock = T0;
    const nowText = () => new Date(clock).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const world = new World(rng(99), nowText);
    const s = side(() => clock);
    s.setInputs({
      now: nowText(),
      fleets: world.fleets,
      gateways: world.gateways,
      heldAddresses: () => undefined,
    });
    // Nothing is published before a full build.
    s.publisher.publishChanges(world.addRoute(), []);
    assert.deepEqual(s.handed, { full: 0, changed: 0 });
    s.publisher.publishAll([...world.statuses.values()]);
    assert.equal(s.handed.full, world.statuses.size);
    const added = world.addRoute();
    s.publisher.publishChanges(added, []);
    assert.equal(s.handed.changed, 1);
    assert.equal(s.view.list().at(-1), added[0]);
    const [gone] = world.routes();
    s.publisher.publishChanges([], [statusKey(gone)]);
    assert.equal(s.handed.changed, 1);
    assert.ok(!s.view.list().some((x) => statusKey(x) === statusKey(gone)));
    s.validity.stop();
  });
});
