import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ChangeMaker, routedServices, withRedirectRule } from '../../bench/e2e/changes';
import { World, SIZES, hostnameOf } from '../../bench/world';
import { ObjectStore } from '../../src/store/store';
import { buildGateways } from '../../src/gateway/build';
import { BuildMemo } from '../../src/gateway/build-memo';
import { translateFleet } from '../../src/envoy/translate';
import { TypeUrl } from '../../src/envoy/resources';

describe('e2e bench changes', () => {
  test('routedServices lists exactly the Services some route sends traffic to', () => {
    const world = new World({ size: SIZES.tiny });
    const services = routedServices(world);
    const expected = new Set<number>();
    for (let r = 0; r < SIZES.tiny.routes; r++)
      for (const rule of (world.route(r).spec as { rules: { backendRefs?: { name: string }[] }[] }).rules)
        for (const b of rule.backendRefs ?? []) expected.add(Number(b.name.replace('svc-', '')));
    assert.deepEqual(
      services,
      [...expected].sort((a, b) => a - b),
    );
    assert.ok(services.length > 0);
  });

  test('withRedirectRule appends one backend-less rule and leaves the input alone', () => {
    const world = new World({ size: SIZES.tiny });
    const route = world.route(3);
    const before = JSON.stringify(route);
    const edited = withRedirectRule(route, '/r3/x', 'moved.example.com');
    assert.equal(JSON.stringify(route), before);
    const rules = (edited.spec as { rules: { backendRefs?: unknown }[] }).rules;
    assert.equal(rules.length, 4);
    assert.equal(rules[3]!.backendRefs, undefined);
  });

  test('each change kind names the xDS resources a build of the changed world really changes, on new objects each time', () => {
    const world = new World({ size: SIZES.tiny, httpsPort: 9443, httpPort: 9080 });
    const store = new ObjectStore();
    world.load(store);
    const opts = { controllerName: 'convoy.dev/gateway-controller', now: '2026-01-01T00:00:00Z' };
    const resources = () => {
      const built = buildGateways(store, opts, new BuildMemo());
      assert.equal(built.fleets.length, 1);
      const out = new Map<string, string>();
      const r = translateFleet(built.fleets[0]!, { bindAddress: '127.0.0.1' });
      const byType: [string, { name?: string }[]][] = [
        [TypeUrl.Listener, r.listeners],
        [TypeUrl.Route, r.routes],
        [TypeUrl.Cluster, r.clusters],
        [
          TypeUrl.Endpoint,
          r.endpoints.map((e) => ({ ...e, name: (e as { cluster_name: string }).cluster_name })),
        ],
        [TypeUrl.Secret, r.secrets],
      ];
      for (const [type, list] of byType)
        for (const x of list) out.set(`${type} ${x.name}`, JSON.stringify(x));
      return out;
    };
    const maker = new ChangeMaker(world);
    const touched = new Set<string>();
    for (const kind of ['route', 'cert', 'listenerset', 'endpoints', 'route', 'cert'] as const) {
      const before = resources();
      const change = maker.next(kind);
      for (const o of change.objects) {
        touched.add(`${o.kind}/${o.metadata.namespace}/${o.metadata.name}`);
        store.put(o);
      }
      const after = resources();
      for (const e of change.expect) {
        const key = `${e.typeUrl} ${e.name}`;
        assert.ok(after.has(key), `${kind}: ${key} exists after the change`);
        assert.notEqual(after.get(key), before.get(key), `${kind}: ${key} changed`);
      }
      if (kind === 'route') {
        const rds = after.get(`${change.expect[0]!.typeUrl} ${change.expect[0]!.name}`)!;
        assert.match(rds, /moved-\d+-\d+\.bench\.example\.com/);
      }
    }
    // Two route edits and two rotations touched different objects.
    assert.equal(touched.size, 8);
    assert.ok(hostnameOf(0).endsWith('.bench.example.com'));
  });
});
