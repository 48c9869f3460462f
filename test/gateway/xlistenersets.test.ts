import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import type { BuildOptions } from '../../src/gateway/resolved';
import type { KubeObject } from '../../src/store/objects';
import type { ObjectStatus } from '../../src/status/types';
import {
  condSummary,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  httpsListener,
  listenerSet,
  OPTS,
  parentRef,
  routeParents,
  storeOf,
  tlsSecret,
  xListenerSet,
} from '../support/objects';

const X_OPTS: BuildOptions = { ...OPTS, xListenerSets: true };
const POOL_OPTS: BuildOptions = { ...X_OPTS, dynamicPorts: { first: 30000, last: 30099 } };
const X_GROUP = 'gateway.networking.x-k8s.io';
const ALL = { namespaces: { from: 'All' as const } };

interface LegacyStatus {
  conditions: { type: string; status: string; reason: string; message: string }[];
  listeners: {
    name: string;
    port: number;
    attachedRoutes: number;
    conditions: { type: string; status: string; reason: string }[];
  }[];
}

function build(opts: BuildOptions, ...objects: KubeObject[]) {
  const result = buildGateways(storeOf(gatewayClass(), ...objects), opts);
  const find = (kind: string, name: string): ObjectStatus | undefined =>
    result.statuses.find((s) => s.kind === kind && s.metadata.name === name);
  return {
    result,
    legacy(name: string): LegacyStatus {
      const s = find('XListenerSet', name);
      assert.ok(s, `no status for XListenerSet ${name}`);
      assert.equal(s.apiVersion, `${X_GROUP}/v1alpha1`);
      return s.status as unknown as LegacyStatus;
    },
    find,
    chains(): string[] {
      return result.fleets.flatMap((f) =>
        f.ports.flatMap((p) => [
          ...p.filterChains.map((c) => `${p.port} ${c.name}`),
          ...(p.http ? [`${p.port} http`] : []),
        ]),
      );
    },
  };
}

const gw = () => gateway('gw', [httpListener('http', 80)], { allowedListeners: ALL });

describe('XListenerSet (docs/gateway-api.md §29)', () => {
  test('without --enable-xlistenerset an XListenerSet is ignored: no status, nothing served', () => {
    const out = build(
      OPTS,
      gw(),
      tlsSecret('cert'),
      xListenerSet('x', { name: 'gw' }, [httpsListener('a', 8443, 'a.example.com', 'cert')]),
    );
    assert.equal(out.find('XListenerSet', 'x'), undefined);
    assert.deepEqual(out.chains(), ['80 http']);
  });

  test('merged like a ListenerSet, with its status in the legacy schema (port in every entry)', () => {
    const out = build(
      X_OPTS,
      gw(),
      tlsSecret('cert'),
      xListenerSet('x', { name: 'gw' }, [httpsListener('a', 8443, 'a.example.com', 'cert')]),
    );
    const s = out.legacy('x');
    assert.deepEqual(condSummary(s.conditions), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
    assert.equal(s.listeners.length, 1);
    assert.equal(s.listeners[0].port, 8443);
    assert.ok(out.chains().includes('8443 XListenerSet/default/x/a'));
    const gwStatus = out.find('Gateway', 'gw')?.status as { attachedListenerSets: number };
    assert.equal(gwStatus.attachedListenerSets, 1);
  });

  test('precedence and conflicts are shared with ListenerSets: the older set wins, whatever its kind', () => {
    const out = build(
      X_OPTS,
      gw(),
      tlsSecret('cert'),
      listenerSet('newer', { name: 'gw' }, [httpsListener('a', 8443, 'a.example.com', 'cert')], {
        created: '2026-02-01T00:00:00Z',
      }),
      xListenerSet('older', { name: 'gw' }, [httpsListener('a', 8443, 'a.example.com', 'cert')], {
        created: '2026-01-15T00:00:00Z',
      }),
    );
    assert.deepEqual(condSummary(out.legacy('older').listeners[0].conditions).slice(0, 1), [
      'Accepted=True/Accepted',
    ]);
    const newer = out.find('ListenerSet', 'newer')?.status as unknown as LegacyStatus;
    assert.ok(condSummary(newer.listeners[0].conditions).includes('Conflicted=True/HostnameConflict'));
    assert.ok(out.chains().includes('8443 XListenerSet/default/older/a'));
    assert.ok(!out.chains().includes('8443 ListenerSet/default/newer/a'));
  });

  test('allowedListeners applies: a Gateway that admits none refuses it with NotAllowed', () => {
    const out = build(
      X_OPTS,
      gateway('gw', [httpListener('http', 80)]),
      xListenerSet('x', { name: 'gw' }, [httpListener('a', 8080)]),
    );
    assert.deepEqual(condSummary(out.legacy('x').conditions), [
      'Accepted=False/NotAllowed',
      'Programmed=False/NotAllowed',
    ]);
    assert.deepEqual(out.chains(), ['80 http']);
  });

  test('routes attach with parentRef kind XListenerSet in group gateway.networking.x-k8s.io only', () => {
    const out = build(
      X_OPTS,
      gw(),
      xListenerSet('x', { name: 'gw' }, [httpListener('a', 8080)]),
      httpRoute('legacy', [{}], { parentRefs: [parentRef('x', { group: X_GROUP, kind: 'XListenerSet' })] }),
      httpRoute('wrong-kind', [{}], { parentRefs: [parentRef('x', { kind: 'ListenerSet' })] }),
    );
    assert.equal(out.legacy('x').listeners[0].attachedRoutes, 1);
    const parents = routeParents(out.result.statuses, 'HTTPRoute', 'legacy');
    assert.deepEqual(condSummary(parents?.[0].conditions).slice(0, 1), ['Accepted=True/Accepted']);
    assert.equal(routeParents(out.result.statuses, 'HTTPRoute', 'wrong-kind'), undefined);
  });

  test('a ListenerSet with the same namespace/name supersedes it: a clear condition, programmed once', () => {
    const out = build(
      X_OPTS,
      gw(),
      listenerSet('same', { name: 'gw' }, [httpListener('a', 8080)]),
      xListenerSet('same', { name: 'gw' }, [httpListener('a', 8080)], { created: '2025-12-01T00:00:00Z' }),
    );
    const s = out.legacy('same');
    assert.deepEqual(condSummary(s.conditions), [
      'Accepted=False/SupersededByListenerSet',
      'Programmed=False/SupersededByListenerSet',
    ]);
    assert.match(s.conditions[0].message, /ListenerSet \(gateway\.networking\.k8s\.io\/v1\)/);
    assert.deepEqual(s.listeners, []);
    assert.deepEqual(out.chains().sort(), ['80 http', '8080 http']);
    const v1 = out.find('ListenerSet', 'same')?.status as unknown as LegacyStatus;
    assert.deepEqual(condSummary(v1.conditions), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  });
});

describe('dynamic ports (docs/gateway-api.md §29)', () => {
  const noPort = () =>
    xListenerSet('x', { name: 'gw' }, [
      {
        name: 'dyn',
        protocol: 'HTTPS',
        hostname: 'dyn.example.com',
        tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] },
      },
      { name: 'zero', protocol: 'HTTP', port: 0 },
    ]);

  test('listeners without a port get one from the pool, reported in status and served', () => {
    const out = build(POOL_OPTS, gw(), tlsSecret('cert'), noPort());
    const s = out.legacy('x');
    assert.deepEqual(condSummary(s.conditions), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
    const ports = s.listeners.map((l) => l.port);
    assert.equal(new Set(ports).size, 2);
    for (const p of ports) assert.ok(p >= 30000 && p <= 30099, String(p));
    const dyn = s.listeners.find((l) => l.name === 'dyn');
    assert.ok(out.chains().includes(`${dyn?.port} XListenerSet/default/x/dyn`));
    // The same objects give the same ports (another replica, a restart).
    assert.deepEqual(build(POOL_OPTS, gw(), tlsSecret('cert'), noPort()).legacy('x'), s);
  });

  test('a port recorded in status is re-read and kept', () => {
    const recorded = { listeners: [{ name: 'dyn', port: 30042 }] };
    const x = noPort();
    x.status = recorded;
    const out = build(POOL_OPTS, gw(), tlsSecret('cert'), x);
    assert.equal(out.legacy('x').listeners.find((l) => l.name === 'dyn')?.port, 30042);
  });

  test('feature off or pool exhausted: Accepted=False/UnsupportedPort, no status entry, nothing served', () => {
    for (const opts of [X_OPTS, { ...X_OPTS, dynamicPorts: { first: 30000, last: 30000 } }]) {
      const out = build(opts, gw(), tlsSecret('cert'), noPort());
      const s = out.legacy('x');
      const placed = opts.dynamicPorts ? 1 : 0;
      assert.equal(s.listeners.length, placed);
      assert.match(s.conditions[0].message, /UnsupportedPort/);
      assert.equal(out.chains().length, 1 + placed);
      const gwResolved = out.result.state.gateways[0];
      const unplaced = gwResolved.listeners.filter((l) => l.port === 0);
      assert.equal(unplaced.length, 2 - placed);
      for (const l of unplaced)
        assert.deepEqual(condSummary(l.conditions), [
          'Accepted=False/UnsupportedPort',
          'Programmed=False/UnsupportedPort',
        ]);
    }
  });

  test('a dynamic port never takes a port another listener declares', () => {
    // Fill the pool but one port with declared listeners: the dynamic one gets the one left.
    const declared = Array.from({ length: 9 }, (_, i) => httpListener(`p${i}`, 30000 + i));
    const out = build(
      { ...X_OPTS, dynamicPorts: { first: 30000, last: 30009 } },
      gateway('gw', declared, { allowedListeners: ALL }),
      xListenerSet('x', { name: 'gw' }, [{ name: 'zero', protocol: 'HTTP' }]),
    );
    assert.equal(out.legacy('x').listeners[0].port, 30009);
  });
});
