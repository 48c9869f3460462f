import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import type { BuildOptions } from '../../src/gateway/resolved';
import type { KubeObject } from '../../src/store/objects';
import type { Condition, ObjectStatus } from '../../src/status/types';
import { renderFleet } from '../../src/fleets/kubernetes/render';
import {
  OPTS,
  condSummary,
  envoyFleet,
  fleetRef,
  gateway,
  gatewayClass,
  httpListener,
  listenerSet,
  portRange,
  storeOf,
} from '../support/objects';

/** ListenerPortRange policies through the whole build (docs/gateway-api.md §30). */

interface Ancestor {
  ancestorRef: Record<string, string>;
  controllerName: string;
  conditions: Condition[];
}

function build(objects: KubeObject[], opts: BuildOptions = OPTS) {
  const result = buildGateways(storeOf(gatewayClass(), ...objects), opts);
  const status = (kind: string, name: string): ObjectStatus | undefined =>
    result.statuses.find((s) => s.kind === kind && s.metadata.name === name);
  return {
    result,
    /** The policy's one ancestor entry. */
    policy(name: string): Ancestor {
      const s = status('ListenerPortRange', name);
      assert.ok(s, `no status for ListenerPortRange ${name}`);
      const ancestors = (s.status as { ancestors: Ancestor[] }).ancestors;
      assert.equal(ancestors.length, 1);
      return ancestors[0];
    },
    hasPolicyStatus: (name: string) => status('ListenerPortRange', name) !== undefined,
    /** `Type=Status/Reason` of one listener of a Gateway or ListenerSet. */
    listener(kind: string, owner: string, name: string): string[] {
      const s = status(kind, owner);
      const l = (s?.status as { listeners?: { name: string; conditions: Condition[] }[] })?.listeners?.find(
        (x) => x.name === name,
      );
      assert.ok(l, `no listener ${name} in ${kind} ${owner}`);
      return condSummary(l.conditions);
    },
    ports: () => result.fleets[0].ports.map((p) => `${p.name}:${p.port}${p.endPort ? `-${p.endPort}` : ''}`),
  };
}

const accepted = (a: Ancestor) => `${a.conditions[0].status}/${a.conditions[0].reason}`;

test('an accepted range: status Accepted with the Gateway as ancestor, one port model with endPort', () => {
  const b = build([
    gateway('gw', [httpListener('web', 8000)]),
    portRange('r', { name: 'gw', section: 'web' }, 8019),
  ]);
  const a = b.policy('r');
  assert.equal(accepted(a), 'True/Accepted');
  assert.deepEqual(a.ancestorRef, {
    group: 'gateway.networking.k8s.io',
    kind: 'Gateway',
    namespace: 'default',
    name: 'gw',
    sectionName: 'web',
  });
  assert.equal(a.controllerName, OPTS.controllerName);
  assert.match(a.conditions[0].message, /8000-8019/);
  assert.deepEqual(b.ports(), ['http-8000:8000-8019']);
});

test('endPort not above the port, or a range over the bound, is Invalid and serves the port alone', () => {
  const b = build([
    gateway('gw', [httpListener('a', 8000), httpListener('b', 9000)]),
    portRange('low', { name: 'gw', section: 'a' }, 8000),
    portRange('big', { name: 'gw', section: 'b' }, 9000 + 1024),
  ]);
  assert.equal(accepted(b.policy('low')), 'False/Invalid');
  assert.equal(accepted(b.policy('big')), 'False/Invalid');
  assert.match(b.policy('big').conditions[0].message, /1025 ports, more than 1024/);
  assert.deepEqual(b.ports(), ['http-8000:8000', 'http-9000:9000']);
  // The bound is configurable: 1,025 ports pass with a larger one.
  const wide = build(
    [gateway('gw', [httpListener('b', 9000)]), portRange('big', { name: 'gw', section: 'b' }, 10024)],
    { ...OPTS, maxPortRangePorts: 2000 },
  );
  assert.equal(accepted(wide.policy('big')), 'True/Accepted');
  // Exactly the bound is accepted.
  const edge = build([
    gateway('gw', [httpListener('b', 9000)]),
    portRange('r', { name: 'gw', section: 'b' }, 10023),
  ]);
  assert.equal(accepted(edge.policy('r')), 'True/Accepted');
});

test('a missing listener or Gateway is TargetNotFound; a Gateway of another class gets no status', () => {
  const b = build([
    gateway('gw', [httpListener('web', 8000)]),
    gateway('theirs', [httpListener('web', 8000)], { className: 'other' }),
    portRange('no-listener', { name: 'gw', section: 'nope' }, 8010),
    portRange('no-gateway', { name: 'ghost', section: 'web' }, 8010),
    portRange('not-ours', { name: 'theirs', section: 'web' }, 8010),
  ]);
  assert.equal(accepted(b.policy('no-listener')), 'False/TargetNotFound');
  assert.equal(accepted(b.policy('no-gateway')), 'False/TargetNotFound');
  assert.equal(b.hasPolicyStatus('not-ours'), false);
});

test('a listener inside an accepted range is Conflicted and the range keeps serving', () => {
  const b = build([
    gateway('gw', [httpListener('range', 8000), httpListener('inside', 8005, 'a.example.com')]),
    portRange('r', { name: 'gw', section: 'range' }, 8019),
  ]);
  assert.equal(accepted(b.policy('r')), 'True/Accepted');
  assert.deepEqual(b.listener('Gateway', 'gw', 'inside'), [
    'Accepted=False/ProtocolConflict',
    'Programmed=False/ProtocolConflict',
    'ResolvedRefs=True/ResolvedRefs',
    'Conflicted=True/ProtocolConflict',
  ]);
  assert.deepEqual(b.listener('Gateway', 'gw', 'range').slice(0, 2), [
    'Accepted=True/Accepted',
    'Programmed=True/Programmed',
  ]);
  assert.deepEqual(b.ports(), ['http-8000:8000-8019']);
});

test('a range over a listener of higher precedence is Conflicted; that listener keeps its port', () => {
  const b = build([
    gateway('gw', [httpListener('first', 8005), httpListener('range', 8000)]),
    portRange('r', { name: 'gw', section: 'range' }, 8019),
  ]);
  assert.equal(accepted(b.policy('r')), 'False/Conflicted');
  assert.match(b.policy('r').conditions[0].message, /port 8005 is used by listener first/);
  assert.deepEqual(b.ports(), ['http-8000:8000', 'http-8005:8005']);
});

test('two overlapping ranges: the one on the listener of higher precedence wins', () => {
  const b = build(
    [
      gateway('gw', [httpListener('a', 8000), httpListener('b', 9000)]),
      listenerSet('ls', { name: 'gw' }, [httpListener('c', 7990)]),
      // The ListenerSet's listener comes after the Gateway's, though its policy is older.
      portRange('on-c', { name: 'ls', section: 'c', kind: 'ListenerSet' }, 8001, {
        created: '2020-01-01T00:00:00Z',
      }),
      portRange('on-a', { name: 'gw', section: 'a' }, 8010),
      portRange('on-b', { name: 'gw', section: 'b' }, 9010),
    ].map((o) =>
      o.kind === 'Gateway'
        ? { ...o, spec: { ...(o.spec as object), allowedListeners: { namespaces: { from: 'Same' } } } }
        : o,
    ),
  );
  assert.equal(accepted(b.policy('on-a')), 'True/Accepted');
  assert.equal(accepted(b.policy('on-b')), 'True/Accepted');
  assert.equal(accepted(b.policy('on-c')), 'False/Conflicted');
  assert.match(
    b.policy('on-c').conditions[0].message,
    /8000-8001 are in the range of ListenerPortRange default\/on-a/,
  );
  assert.deepEqual(b.policy('on-c').ancestorRef.kind, 'ListenerSet');
  assert.deepEqual(b.ports(), ['http-7990:7990', 'http-8000:8000-8010', 'http-9000:9000-9010']);
});

test('a range on a listener Conflicted on its own port is Conflicted and claims nothing', () => {
  const b = build([
    gateway('gw', [
      httpListener('a', 8000, 'x.example.com'),
      httpListener('b', 8000, 'x.example.com'),
      httpListener('c', 8003),
    ]),
    portRange('r', { name: 'gw', section: 'b' }, 8005),
  ]);
  assert.equal(accepted(b.policy('r')), 'False/Conflicted');
  assert.deepEqual(b.listener('Gateway', 'gw', 'c').slice(0, 2), [
    'Accepted=True/Accepted',
    'Programmed=True/Programmed',
  ]);
  assert.deepEqual(b.ports(), ['http-8003:8003']);
});

test('two ranges on one listener: the older policy wins', () => {
  const b = build([
    gateway('gw', [httpListener('a', 8000)]),
    portRange('newer', { name: 'gw', section: 'a' }, 8002, { created: '2024-02-01T00:00:00Z' }),
    portRange('older', { name: 'gw', section: 'a' }, 8004, { created: '2024-01-01T00:00:00Z' }),
  ]);
  assert.equal(accepted(b.policy('older')), 'True/Accepted');
  assert.equal(accepted(b.policy('newer')), 'False/Conflicted');
  assert.deepEqual(b.ports(), ['http-8000:8000-8004']);
});

test('a managed fleet: every port of the range is a Service port; ports below 1024 shift to +10000', () => {
  const gc = gatewayClass();
  const managedClass = {
    ...gc,
    spec: { ...(gc.spec as object), parametersRef: fleetRef('edge', 'default') },
  };
  const result = buildGateways(
    storeOf(
      managedClass,
      envoyFleet('edge', {}),
      gateway('gw', [httpListener('web', 80)]),
      portRange('r', { name: 'gw', section: 'web' }, 83),
    ),
    { ...OPTS, managedFleets: true },
  );
  const fleet = result.fleets[0];
  assert.ok(fleet.managed, 'the fleet is managed');
  assert.deepEqual(
    fleet.ports.map((p) => [p.port, p.bindPort, p.endPort, p.rangeBindPorts]),
    [[80, 10080, 83, [10081, 10082, 10083]]],
  );
  const settings = { xdsAddress: 'convoy:18000', envoyImage: 'envoy', convoyImage: 'convoy' };
  const objects = renderFleet({ ...fleet, managed: fleet.managed }, settings, undefined);
  const service = objects.find((o) => o.kind === 'Service')!;
  const ports = (service.spec as { ports: { name: string; port: number; targetPort: number }[] }).ports;
  assert.deepEqual(
    ports.map((p) => `${p.name}:${p.port}->${p.targetPort}`),
    ['http-80:80->10080', 'http-80-81:81->10081', 'http-80-82:82->10082', 'http-80-83:83->10083'],
  );
});
