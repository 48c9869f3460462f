import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import type { KubeObject } from '../../src/store/objects';
import type { BuildOptions } from '../../src/gateway/resolved';
import { translateFleet } from '../../src/envoy/translate';
import { MANAGED_FLEET_FEATURES } from '../../src/gateway/features';
import { unprivilegedBindPorts, fleetObjectName } from '../../src/model/managed-fleet';
import {
  OPTS,
  condSummary,
  envoyFleet,
  fleetRef,
  gateway,
  gatewayClass,
  httpListener,
  listenerSet,
  storeOf,
} from '../support/objects';

const MANAGED: BuildOptions = { ...OPTS, managedFleets: true };

function managedClass(ref = fleetRef('edge', 'default')): KubeObject {
  const gc = gatewayClass();
  return { ...gc, spec: { ...(gc.spec as object), parametersRef: ref } };
}

function build(objects: KubeObject[], opts = MANAGED) {
  const r = buildGateways(storeOf(...objects), opts);
  const status = (kind: string, name: string) =>
    r.statuses.find((s) => s.kind === kind && s.metadata.name === name)?.status as
      { conditions: { type: string; status: string; reason: string }[]; addresses?: unknown[] } | undefined;
  return { fleets: r.fleets, status };
}

/** The fleet Service of Gateway default/gw as the store keeps it (ingress outside status). */
function service(spec: object, ingress?: object[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'convoy-gw', namespace: 'default' },
    spec,
    ...(ingress ? { loadBalancerIngress: ingress } : {}),
  };
}

describe('managed fleets in the gateway model', () => {
  test('a class without parameters keeps its Gateways unmanaged, as before', () => {
    const { fleets, status } = build([gatewayClass(), gateway('gw', [httpListener('http', 80)])]);
    assert.equal(fleets[0].managed, undefined);
    assert.equal(fleets[0].ports[0].bindPort, undefined, 'unmanaged Envoys bind the listener port');
    assert.deepEqual(condSummary(status('Gateway', 'gw')?.conditions), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
    ]);
  });

  test('a class with managed fleets claims the address and propagation features; others do not', () => {
    const features = (objects: KubeObject[], opts = MANAGED) =>
      (
        buildGateways(storeOf(...objects), opts).statuses.find((s) => s.kind === 'GatewayClass')?.status as {
          supportedFeatures: { name: string }[];
        }
      ).supportedFeatures.map((f) => f.name);
    const managed = features([managedClass(), envoyFleet('edge', {})]);
    for (const name of MANAGED_FLEET_FEATURES) assert.ok(managed.includes(name), name);
    assert.deepEqual(managed, [...managed].sort());
    const plain = features([gatewayClass()]);
    const optedOut = features([managedClass(), envoyFleet('edge', { managed: false })]);
    for (const name of MANAGED_FLEET_FEATURES) {
      assert.ok(!plain.includes(name), `unmanaged class claims ${name}`);
      assert.ok(!optedOut.includes(name), `managed: false claims ${name}`);
    }
    assert.deepEqual(
      managed.filter((n) => !MANAGED_FLEET_FEATURES.includes(n)),
      plain,
    );
  });

  test('parameters are refused while managed fleets are off', () => {
    const { status } = build([managedClass(), envoyFleet('edge', {})], OPTS);
    assert.deepEqual(condSummary(status('GatewayClass', 'convoy')?.conditions), [
      'Accepted=False/InvalidParameters',
    ]);
  });

  test('a missing, foreign or invalid parametersRef makes the class InvalidParameters', () => {
    for (const [objects, what] of [
      [[managedClass()], 'missing'],
      [
        [managedClass({ group: 'example.com', kind: 'Thing', name: 'edge', namespace: 'default' })],
        'foreign',
      ],
      [[managedClass(fleetRef('edge')), envoyFleet('edge', {})], 'no namespace'],
      [[managedClass(), envoyFleet('edge', { workload: { kind: 'StatefulSet' } })], 'invalid'],
      [[managedClass(), envoyFleet('edge', { routabilities: ['Private'] })], 'Private without a provider'],
    ] as [KubeObject[], string][]) {
      const { status } = build(objects);
      assert.deepEqual(
        condSummary(status('GatewayClass', 'convoy')?.conditions),
        ['Accepted=False/InvalidParameters'],
        what,
      );
    }
  });

  test('class defaults with the Gateway override merged over them; infrastructure labels kept', () => {
    const { fleets, status } = build([
      managedClass(),
      envoyFleet('edge', {
        workload: { replicas: 3, logLevel: 'debug' },
        service: { annotations: { a: '1' } },
      }),
      envoyFleet('mine', { workload: { kind: 'DaemonSet' }, routability: 'Cluster' }),
      gateway('gw', [httpListener('http', 80)], {
        spec: { infrastructure: { parametersRef: fleetRef('mine'), labels: { team: 'a' } } },
      }),
    ]);
    const m = fleets[0].managed!;
    assert.equal(m.workload.kind, 'DaemonSet');
    assert.equal(m.workload.replicas, 3);
    assert.equal(m.workload.logLevel, 'debug');
    assert.equal(m.service.type, 'ClusterIP');
    assert.equal(m.routability, 'Cluster');
    assert.deepEqual(m.labels, { team: 'a' });
    assert.equal(m.gatewayUid, 'uid--gw');
    assert.deepEqual(condSummary(status('Gateway', 'gw')?.conditions), [
      'Accepted=True/Accepted',
      'Programmed=False/AddressNotAssigned',
      'convoy.dev/Routability=True/Cluster',
    ]);
  });

  test('an unsupported routability is refused, never widened', () => {
    const { fleets, status } = build([
      managedClass(),
      envoyFleet('edge', { routabilities: ['Cluster'] }),
      envoyFleet('pub', { routability: 'Public' }),
      gateway('gw', [httpListener('http', 80)], {
        spec: { infrastructure: { parametersRef: fleetRef('pub') } },
      }),
    ]);
    assert.deepEqual(condSummary(status('Gateway', 'gw')?.conditions), [
      'Accepted=False/UnsupportedRoutability',
      'Programmed=False/UnsupportedRoutability',
    ]);
    assert.equal(fleets[0]?.managed, undefined, 'no fleet is provisioned');
  });

  test('Private takes the provider preset; parameters cannot override its annotations', () => {
    const { fleets } = build([
      managedClass(),
      envoyFleet('edge', {
        routability: 'Private',
        privateLoadBalancer: { provider: 'GCP' },
        service: { annotations: { 'networking.gke.io/load-balancer-type': 'External', x: 'y' } },
      }),
      gateway('gw', [httpListener('http', 80)]),
    ]);
    assert.deepEqual(fleets[0].managed!.service.annotations, {
      'networking.gke.io/load-balancer-type': 'Internal',
      x: 'y',
    });
  });

  test('addresses come from the Service: load-balancer ingress, or the ClusterIP', () => {
    const svc = service;
    const objects = [managedClass(), envoyFleet('edge', {}), gateway('gw', [httpListener('http', 80)])];
    const lb = build([...objects, svc({ type: 'LoadBalancer', clusterIP: '10.0.0.5' })]);
    assert.deepEqual(lb.status('Gateway', 'gw')?.addresses, []);
    const ready = build([...objects, svc({ type: 'LoadBalancer' }, [{ hostname: 'lb.example.com' }])]);
    assert.deepEqual(ready.status('Gateway', 'gw')?.addresses, [
      { type: 'Hostname', value: 'lb.example.com' },
    ]);
    const cluster = build([
      managedClass(),
      envoyFleet('edge', { routability: 'Cluster' }),
      gateway('gw', [httpListener('http', 80)]),
      svc({ type: 'ClusterIP', clusterIP: '10.0.0.5' }),
    ]);
    assert.deepEqual(cluster.status('Gateway', 'gw')?.addresses, [{ type: 'IPAddress', value: '10.0.0.5' }]);
  });

  test('spec.addresses: one IP is requested of the Service; two, or a non-IP, are not usable; other types are unsupported', () => {
    const withAddresses = (addresses: object[], routability = 'Public', ...extra: KubeObject[]) =>
      build([
        managedClass(),
        envoyFleet('edge', { routability }),
        gateway('gw', [httpListener('http', 80)], { spec: { addresses: addresses as never } }),
        ...extra,
      ]);
    const summary = (r: ReturnType<typeof build>) => condSummary(r.status('Gateway', 'gw')?.conditions);
    const lb = withAddresses([{ value: '203.0.113.9' }]);
    assert.equal(lb.fleets[0].managed!.service.loadBalancerIP, '203.0.113.9');
    assert.equal(lb.fleets[0].managed!.service.clusterIP, undefined);
    const cluster = withAddresses([{ type: 'IPAddress', value: '10.96.0.50' }], 'Cluster');
    assert.equal(cluster.fleets[0].managed!.service.clusterIP, '10.96.0.50');
    assert.equal(cluster.fleets[0].managed!.service.loadBalancerIP, undefined);
    const two = withAddresses([{ value: '203.0.113.9' }, { value: '203.0.113.10' }]);
    assert.ok(summary(two).includes('Programmed=False/AddressNotUsable'));
    assert.ok(summary(two).includes('Accepted=True/Accepted'));
    assert.equal(two.fleets[0].managed!.service.loadBalancerIP, undefined, 'nothing requested');
    assert.ok(summary(withAddresses([{ value: 'not-an-ip' }])).includes('Programmed=False/AddressNotUsable'));
    for (const a of [
      { type: 'Hostname', value: 'a.example.com' },
      { type: 'NamedAddress', value: 'edge-ip' },
      { type: 'example.com/Pool', value: 'p' },
      { type: 'example.com/Pool' },
    ]) {
      assert.ok(summary(withAddresses([a])).includes('Accepted=False/UnsupportedAddress'), JSON.stringify(a));
      assert.equal(withAddresses([a]).fleets[0].managed, undefined, 'no fleet for an unaccepted Gateway');
    }
  });

  test('GatewayAddressEmpty: an entry without a value lets the Service pick', () => {
    for (const entry of [{ type: 'IPAddress' }, { type: 'Hostname' }, {}]) {
      const r = build([
        managedClass(),
        envoyFleet('edge', {}),
        gateway('gw', [httpListener('http', 80)], { spec: { addresses: [entry] as never } }),
        service({ type: 'LoadBalancer' }, [{ ip: '198.51.100.10' }]),
      ]);
      assert.equal(r.fleets[0].managed!.service.loadBalancerIP, undefined);
      assert.deepEqual(condSummary(r.status('Gateway', 'gw')?.conditions), [
        'Accepted=True/Accepted',
        'Programmed=True/Programmed',
        'convoy.dev/Routability=True/Public',
      ]);
      assert.deepEqual(r.status('Gateway', 'gw')?.addresses, [{ type: 'IPAddress', value: '198.51.100.10' }]);
    }
  });

  test('a requested address is reported once the Service carries and was given it', () => {
    const requested = (...extra: KubeObject[]) =>
      build([
        managedClass(),
        envoyFleet('edge', {}),
        gateway('gw', [httpListener('http', 80)], { spec: { addresses: [{ value: '198.51.100.200' }] } }),
        ...extra,
      ]);
    const programmed = (r: ReturnType<typeof build>) =>
      condSummary(r.status('Gateway', 'gw')?.conditions).find((c) => c.startsWith('Programmed='));
    assert.equal(programmed(requested()), 'Programmed=False/AddressNotAssigned');
    // The Service still holds the ingress of its earlier address: not yet the requested one.
    const stale = requested(service({ type: 'LoadBalancer' }, [{ ip: '198.51.100.10' }]));
    assert.equal(programmed(stale), 'Programmed=False/AddressNotAssigned');
    assert.deepEqual(stale.status('Gateway', 'gw')?.addresses, []);
    const pending = requested(service({ type: 'LoadBalancer', loadBalancerIP: '198.51.100.200' }));
    assert.equal(programmed(pending), 'Programmed=False/AddressNotAssigned');
    const other = requested(
      service({ type: 'LoadBalancer', loadBalancerIP: '198.51.100.200' }, [{ ip: '198.51.100.10' }]),
    );
    assert.equal(programmed(other), 'Programmed=False/AddressNotUsable');
    const given = requested(
      service({ type: 'LoadBalancer', loadBalancerIP: '198.51.100.200' }, [{ ip: '198.51.100.200' }]),
    );
    assert.equal(programmed(given), 'Programmed=True/Programmed');
    assert.deepEqual(given.status('Gateway', 'gw')?.addresses, [
      { type: 'IPAddress', value: '198.51.100.200' },
    ]);
  });

  test('ListenerSet ports join the fleet; ports below 1024 bind unprivileged ports in Envoy', () => {
    const { fleets } = build([
      managedClass(),
      envoyFleet('edge', {}),
      gateway('gw', [httpListener('http', 80), httpListener('alt', 10080)], {
        allowedListeners: { namespaces: { from: 'Same' } },
      }),
      listenerSet('ls', { name: 'gw' }, [httpListener('ls', 8081)]),
    ]);
    assert.deepEqual(
      fleets[0].ports.map((p) => [p.port, p.bindPort ?? p.port]),
      [
        [80, 10081],
        [8081, 8081],
        [10080, 10080],
      ],
    );
    const listeners = translateFleet(fleets[0]).listeners;
    assert.deepEqual(
      listeners.map((l) => [l.name, l.address?.socket_address?.port_value]),
      [
        ['http-80', 10081],
        ['http-8081', 8081],
        ['http-10080', 10080],
      ],
    );
  });
});

describe('managed fleets: access logs and tracing from the parameters', () => {
  /** The HCM of the fleet's first listener, decoded enough to read its access log and tracing. */
  function hcmOf(fleet: ReturnType<typeof build>['fleets'][number], options = {}) {
    const listener = translateFleet(fleet, options).listeners[0];
    const hcm = listener.filter_chains![0].filters![0].typed_config as unknown as {
      access_log?: {
        typed_config?: {
          path?: string;
          log_format?: { json_format?: unknown; text_format_source?: unknown };
        };
      }[];
      tracing?: unknown;
    };
    return hcm;
  }

  test("the Gateway's EnvoyFleet sets its access log over the class's and over --access-log", () => {
    const { fleets } = build([
      managedClass(),
      envoyFleet('edge', { accessLog: { format: 'JSON', path: '/var/log/envoy/access.log' } }),
      envoyFleet('quiet', { accessLog: { format: 'None' } }),
      gateway('gw', [httpListener('http', 80)]),
      gateway('hush', [httpListener('http', 80)], {
        spec: { infrastructure: { parametersRef: fleetRef('quiet') } },
      }),
    ]);
    const byName = new Map(fleets.map((f) => [f.fleet, f]));
    assert.deepEqual(byName.get('default/gw')!.managed!.accessLog, {
      format: 'json',
      path: '/var/log/envoy/access.log',
    });
    // The format comes from the Gateway's own parameters; the class's path does not apply to None.
    assert.deepEqual(byName.get('default/hush')!.managed!.accessLog, { format: 'off' });
    const unmanagedDefault = { accessLog: { format: 'text' as const } };
    const logged = hcmOf(byName.get('default/gw')!, unmanagedDefault).access_log!;
    assert.equal(logged[0].typed_config!.path, '/var/log/envoy/access.log');
    assert.ok(logged[0].typed_config!.log_format!.json_format, 'JSON, not the text of the option');
    assert.equal(hcmOf(byName.get('default/hush')!, unmanagedDefault).access_log, undefined);
  });

  test('tracing from the parameters; bad values make the class InvalidParameters', () => {
    const { fleets } = build([
      managedClass(),
      envoyFleet('edge', { tracing: { collector: 'otel.monitoring.svc:4317', samplingPercent: 10 } }),
      gateway('gw', [httpListener('http', 80)]),
    ]);
    assert.deepEqual(fleets[0].managed!.tracing, {
      collector: { host: 'otel.monitoring.svc', port: 4317 },
      samplingPercent: 10,
    });
    assert.ok(hcmOf(fleets[0]).tracing, 'the HCM traces');
    for (const spec of [
      { tracing: { collector: 'otel:99999' } },
      { tracing: { collector: 'no-port' } },
      { accessLog: { format: 'None', path: '/x' } },
      { accessLog: { path: 'relative.log' } },
    ]) {
      const { status } = build([
        managedClass(),
        envoyFleet('edge', spec),
        gateway('gw', [httpListener('http', 80)]),
      ]);
      assert.deepEqual(
        condSummary(status('GatewayClass', 'convoy')?.conditions).filter((c) => c.startsWith('Accepted')),
        ['Accepted=False/InvalidParameters'],
        JSON.stringify(spec),
      );
    }
  });
});

describe('managed-fleet names and ports', () => {
  test('unprivilegedBindPorts is deterministic and collision-free', () => {
    assert.deepEqual(
      [...unprivilegedBindPorts([443, 80, 10080])],
      [
        [80, 10081],
        [443, 10443],
        [10080, 10080],
      ],
    );
    const many = unprivilegedBindPorts([1, 2, 3, 10001, 10002]);
    assert.equal(new Set(many.values()).size, 5);
  });

  test('fleetObjectName is a DNS-1035 label of at most 63 characters', () => {
    assert.equal(fleetObjectName('gw'), 'convoy-gw');
    for (const name of ['a'.repeat(253), 'my.gateway.example', '1gw']) {
      const n = fleetObjectName(name);
      assert.ok(n.length <= 63 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(n), n);
    }
    assert.notEqual(fleetObjectName('a'.repeat(100)), fleetObjectName('a'.repeat(101)));
  });
});

describe('local fleets (convoy serve --from-dir) read EnvoyFleet parameters', () => {
  const LOCAL: BuildOptions = {
    ...OPTS,
    managedFleets: 'local',
    gatewayAddresses: { static: ['127.0.0.1'] },
  };
  const withRef = (name: string) =>
    gateway('gw', [httpListener('http', 80)], {
      spec: { infrastructure: { parametersRef: fleetRef(name) } },
    });

  test('bind address, log level and drain timeout from the Gateway over the class; ports as they are', () => {
    const { fleets, status } = build(
      [
        managedClass(),
        envoyFleet('edge', { workload: { logLevel: 'debug', drainTimeout: '2s' } }),
        envoyFleet('own', { local: { bindAddress: '127.0.0.2' }, workload: { drainTimeout: '7s' } }),
        withRef('own'),
      ],
      LOCAL,
    );
    assert.deepEqual(fleets[0].managed?.local, {
      bindAddress: '127.0.0.2',
      logLevel: 'debug',
      drainTimeoutSeconds: 7,
    });
    assert.equal(fleets[0].ports[0].bindPort, undefined, 'a local Envoy binds the listener port itself');
    const listener = translateFleet(fleets[0], { bindAddress: '127.0.0.1' }).listeners[0];
    assert.deepEqual(listener.address, { socket_address: { address: '127.0.0.2', port_value: 80 } });
    const gw = status('Gateway', 'gw');
    assert.deepEqual(gw?.addresses, [{ type: 'IPAddress', value: '127.0.0.2' }]);
    assert.deepEqual(condSummary(gw?.conditions), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  });

  test('without a bind address in the parameters the flag is used and reported', () => {
    const { fleets, status } = build(
      [managedClass(), envoyFleet('edge', {}), gateway('gw', [httpListener('http', 80)])],
      LOCAL,
    );
    assert.deepEqual(fleets[0].managed?.local, {});
    const listener = translateFleet(fleets[0], { bindAddress: '127.0.0.1' }).listeners[0];
    assert.deepEqual(listener.address, { socket_address: { address: '127.0.0.1', port_value: 80 } });
    assert.deepEqual(status('Gateway', 'gw')?.addresses, [{ type: 'IPAddress', value: '127.0.0.1' }]);
  });

  test('a missing EnvoyFleet or a bind address that is not an IP is InvalidParameters', () => {
    for (const objects of [
      [withRef('absent')],
      [envoyFleet('bad', { local: { bindAddress: 'localhost' } }), withRef('bad')],
    ]) {
      const { status } = build([gatewayClass(), ...objects], LOCAL);
      assert.deepEqual(condSummary(status('Gateway', 'gw')?.conditions), [
        'Accepted=False/InvalidParameters',
        'Programmed=False/Invalid',
      ]);
    }
  });
});
