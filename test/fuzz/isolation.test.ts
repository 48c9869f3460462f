import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KubeObject } from '../../src/store/objects';
import { keyOfObject, worldAdditionArb } from '../support/worlds';
import {
  backendRef,
  backendService,
  gateway,
  gatewayClass,
  grpcRoute,
  httpListener,
  httpRoute,
  httpsListener,
  parentRef,
  tlsSecret,
} from '../support/objects';
import type { EnvoyResources } from '../../src/envoy/resources';
import { admit, buildFleets, encodeFleet, type EncodedFleet } from './pipeline';
import { isolationViolations, reachOf } from './ownership';
import { fuzzRun } from './config';

/**
 * Property: adding one object to a world never changes the bytes of an xDS resource the object
 * does not own (the isolation rule; test/fuzz/ownership.ts states precisely what an added object
 * owns and may change, including the listener-isolation exceptions on a shared port).
 *
 * A random world and one more object (test/support/worlds.ts: an object of any kind, with a key
 * the world does not have and the newest creationTimestamp) run through file-mode validation, the
 * controller's build, the translators and the protobuf encoding the xDS cache stores, once without
 * and once with the object. Every resource of every fleet, and every filter chain of every
 * Listener, is compared byte for byte. No Envoy is needed, so CI runs 200 additions (a few
 * seconds); CONVOY_FUZZ_RUNS runs more. The second suite shows that the check fails when a
 * resource the object does not own changes, and holds the smallest case of each known issue.
 */

const RUN = fuzzRun(200);

function encodedFleets(objects: KubeObject[]): Map<string, EncodedFleet> {
  return new Map(buildFleets(objects).map((f) => [f.fleet, encodeFleet(f.resources)]));
}

describe('isolation of an added object', () => {
  test('no resource it does not own changes', (t) => {
    t.diagnostic(RUN.describe);
    const seen = {
      additions: 0,
      refused: 0,
      changedSomething: 0,
      byKind: {} as Record<string, number>,
      changedByKind: {} as Record<string, number>,
      known: {} as Record<string, number>,
    };
    fc.assert(
      fc.property(worldAdditionArb(RUN.world), ({ before, added }) => {
        const { admitted } = admit(before);
        const admittedAdded = admit([added]).admitted;
        if (admittedAdded.length === 0) {
          seen.refused++;
          return; // file mode would not load it: nothing was added
        }
        const after = [...admitted, added];
        const b = encodedFleets(admitted);
        const a = encodedFleets(after);
        const { violations, known } = isolationViolations(reachOf(added, after), b, a);
        for (const k of known) {
          const id = k.slice(0, k.indexOf(':'));
          seen.known[id] = (seen.known[id] ?? 0) + 1;
        }
        seen.additions++;
        seen.byKind[added.kind] = (seen.byKind[added.kind] ?? 0) + 1;
        if (violations.length > 0) {
          throw new Error(
            `adding ${keyOfObject(added)} changed what it does not own:\n  ${violations.join('\n  ')}`,
          );
        }
        const changed = [...a].some(([fleet, f]) => {
          const prev = b.get(fleet);
          return !prev || [...f.resources].some(([k, bytes]) => !prev.resources.get(k)?.equals(bytes));
        });
        if (changed) {
          seen.changedSomething++;
          seen.changedByKind[added.kind] = (seen.changedByKind[added.kind] ?? 0) + 1;
        }
      }),
      RUN.parameters,
    );
    t.diagnostic(JSON.stringify(seen));
    // Additions that change nothing prove nothing; the generator must keep producing real changes.
    assert.ok(seen.changedSomething >= seen.additions / 10, JSON.stringify(seen));
  });
});

/** Violations of adding `added` to `world`, computed as the property does. */
function violationsOf(world: KubeObject[], added: KubeObject) {
  const after = [...world, added];
  return isolationViolations(reachOf(added, after), encodedFleets(world), encodedFleets(after));
}

describe('the isolation check itself', () => {
  // default/gw serves HTTP on 80 and HTTPS on 443; route `shared` attaches to both.
  const world: KubeObject[] = [
    gatewayClass(),
    gateway('gw', [httpListener('web', 80), httpsListener('secure', 443, undefined, 'cert')]),
    tlsSecret('cert'),
    ...backendService('app', 8080, ['192.0.2.1']),
    httpRoute('shared', [{ backendRefs: [backendRef('app', 8080)] }]),
  ];
  // A route on the HTTP listener only: it may change http-80, nothing else.
  const added = httpRoute('only-http', [{ matches: [{ path: { type: 'PathPrefix', value: '/new' } }] }], {
    parentRefs: [parentRef('gw', { sectionName: 'web' })],
    created: '2026-02-01T00:00:00Z',
  });

  test('passes a real addition', () => {
    assert.deepEqual(violationsOf(world, added), { violations: [], known: [] });
  });

  /** Violations of the real addition after `tamper` edited a copy of the fleet's Envoy resources. */
  function tampered(tamper: (res: EnvoyResources) => void) {
    const after = [...world, added];
    const fleets = new Map(
      buildFleets(after).map((f) => {
        // Each resource cloned on its own: translation shares sub-messages between resources.
        const res: EnvoyResources = {
          listeners: f.resources.listeners.map((x) => structuredClone(x)),
          routes: f.resources.routes.map((x) => structuredClone(x)),
          clusters: f.resources.clusters.map((x) => structuredClone(x)),
          endpoints: f.resources.endpoints.map((x) => structuredClone(x)),
          secrets: f.resources.secrets.map((x) => structuredClone(x)),
        };
        if (f.fleet === 'default/gw') tamper(res);
        return [f.fleet, encodeFleet(res)];
      }),
    );
    return isolationViolations(reachOf(added, after), encodedFleets(world), fleets).violations;
  }

  test('fails a change to a RouteConfiguration the object does not reach', () => {
    const violations = tampered((res) => {
      const rc = res.routes.find((r) => r.name === 'https-443/*')!;
      rc.virtual_hosts![0].routes!.pop();
    });
    assert.deepEqual(violations, ['fleet default/gw: routes https-443/* changed']);
  });

  test("fails a change to another object's route inside a RouteConfiguration it reaches", () => {
    const violations = tampered((res) => {
      const rc = res.routes.find((r) => r.name === 'http-80')!;
      const route = rc.virtual_hosts![0].routes!.find((r) =>
        r.name!.startsWith('HTTPRoute/default/shared/'),
      )!;
      route.route!.timeout = { seconds: 7 };
    });
    assert.deepEqual(violations, [
      'fleet default/gw: routes http-80 changed: virtual host *: routes of other objects changed ' +
        '(allowed only for HTTPRoute default/only-http)',
    ]);
  });

  test("fails a change to another listener's filter chain", () => {
    const violations = tampered((res) => {
      const listener = res.listeners.find((l) => l.name === 'https-443')!;
      listener.filter_chains![0].filter_chain_match = { server_names: ['tampered.example.com'] };
    });
    assert.deepEqual(violations, [
      'fleet default/gw: listeners https-443 changed: filter chain "Gateway/default/gw/secure" changed',
    ]);
  });

  test(
    'known issue cluster-protocol-shared: a GRPCRoute to a Service port an HTTPRoute uses changes its Cluster',
    { todo: 'Clusters are per Service port; their protocol is the strongest any route needs (KNOWN_ISSUES)' },
    () => {
      const grpc = grpcRoute('rpc', [{ backendRefs: [backendRef('app', 8080)] }], {
        created: '2026-02-01T00:00:00Z',
      });
      const { violations, known } = violationsOf(world, grpc);
      assert.deepEqual(violations, []);
      assert.deepEqual(known, []);
    },
  );
});
