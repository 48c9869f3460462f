import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { DEFAULT_BACKOFF, failuresAfterExit, restartDelayMs } from '../../../src/fleets/local/backoff';
import { desiredLocalEnvoys, planLocalEnvoys } from '../../../src/fleets/local/desired';
import { envoyArgs, envoyFiles } from '../../../src/fleets/local/envoy-command';
import { localBootstrapOptions } from '../../../src/fleets/local/envoy-files';
import { buildBootstrap } from '../../../src/envoy/bootstrap';

describe('desired local Envoys from fleets', () => {
  test('one spec per distinct fleet, sorted, each with its own folder and node id', () => {
    const specs = desiredLocalEnvoys(['team-b/web', 'default/demo', 'team-b/web', 'default/api'], '/state');
    assert.deepEqual(
      specs.map((s) => [s.fleet, s.dir, s.nodeId]),
      [
        ['default/api', path.join('/state', 'default', 'api'), 'convoy-local-default.api'],
        ['default/demo', path.join('/state', 'default', 'demo'), 'convoy-local-default.demo'],
        ['team-b/web', path.join('/state', 'team-b', 'web'), 'convoy-local-team-b.web'],
      ],
    );
  });

  test('keys that are not NAMESPACE/NAME never become paths', () => {
    const specs = desiredLocalEnvoys(['../etc/passwd', 'a/b/c', '', 'UPPER/x', 'ok/gw', '/abs'], '/state');
    assert.deepEqual(
      specs.map((s) => s.fleet),
      ['ok/gw'],
    );
  });

  test('same fleets in any order give the same list', () => {
    const a = desiredLocalEnvoys(['x/1', 'a/2', 'm/3'], '/s');
    const b = desiredLocalEnvoys(['m/3', 'x/1', 'a/2'], '/s');
    assert.deepEqual(a, b);
  });

  test('plan: start what is desired and not running, stop what runs and is not desired', () => {
    const desired = desiredLocalEnvoys(['default/a', 'default/b'], '/s');
    const plan = planLocalEnvoys(['default/b', 'default/z', 'default/c'], desired);
    assert.deepEqual(
      plan.start.map((s) => s.fleet),
      ['default/a'],
    );
    assert.deepEqual(plan.stop, ['default/c', 'default/z']);
    assert.deepEqual(planLocalEnvoys(['default/a', 'default/b'], desired), { start: [], stop: [] });
  });
});

describe('restart backoff', () => {
  const policy = { initialMs: 100, maxMs: 1_000, stableMs: 5_000 };

  test('doubles from the initial delay up to the cap', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((n) => restartDelayMs(n, policy)),
      [100, 200, 400, 800, 1_000, 1_000],
    );
  });

  test('a huge failure count stays at the cap (no overflow)', () => {
    assert.equal(restartDelayMs(1e9, policy), 1_000);
    assert.equal(restartDelayMs(Number.MAX_SAFE_INTEGER, DEFAULT_BACKOFF), DEFAULT_BACKOFF.maxMs);
  });

  test('an Envoy that stayed up for stableMs starts the sequence over', () => {
    assert.equal(failuresAfterExit(4, 10, policy), 5);
    assert.equal(failuresAfterExit(4, 4_999, policy), 5);
    assert.equal(failuresAfterExit(4, 5_000, policy), 1);
    assert.equal(failuresAfterExit(0, 0, policy), 1);
  });
});

describe('managed Envoy command and bootstrap', () => {
  test('dynamic base id, admin address file and drain time; every file in the Envoy folder', () => {
    const args = envoyArgs({ dir: '/s/default/demo', drainTimeS: 7, concurrency: 2, logLevel: 'warn' });
    const files = envoyFiles('/s/default/demo');
    const flag = (name: string) => args[args.indexOf(name) + 1];
    assert.ok(args.includes('--use-dynamic-base-id'));
    assert.equal(flag('-c'), files.bootstrap);
    assert.equal(flag('--base-id-path'), files.baseId);
    assert.equal(flag('--admin-address-path'), files.adminAddress);
    assert.equal(flag('--drain-time-s'), '7');
    assert.equal(flag('--concurrency'), '2');
    assert.equal(flag('--log-level'), 'warn');
    assert.ok(!args.includes('--base-id'), 'no fixed base id: several Envoys share the host');
    for (const f of Object.values(files)) assert.equal(path.dirname(f), '/s/default/demo');
  });

  test('the bootstrap names the Gateway as node.cluster and keeps admin on loopback', () => {
    const [spec] = desiredLocalEnvoys(['team-a/web'], '/s');
    const b = buildBootstrap(localBootstrapOptions(spec!, 41234, '127.0.0.1:18000')) as {
      node: { id: string; cluster: string };
      admin: { address: { socket_address: { address: string; port_value: number } } };
      dynamic_resources: { ads_config: { api_type: string } };
    };
    assert.deepEqual(b.node, { id: 'convoy-local-team-a.web', cluster: 'team-a/web' });
    assert.deepEqual(b.admin.address.socket_address, { address: '127.0.0.1', port_value: 41234 });
    assert.equal(b.dynamic_resources.ads_config.api_type, 'DELTA_GRPC');
    const layers = (layout?: 'sni-dispatch' | 'auto') =>
      (
        buildBootstrap(localBootstrapOptions(spec!, 41234, '127.0.0.1:18000', false, layout)) as {
          layered_runtime: { layers: { name: string }[] };
        }
      ).layered_runtime.layers.map((l) => l.name);
    assert.deepEqual(layers(), ['admin']);
    assert.deepEqual(layers('sni-dispatch'), ['sni-dispatch', 'admin'], 'the SNI-dispatch runtime layer');
    assert.deepEqual(layers('auto'), ['sni-dispatch', 'admin'], 'auto may dispatch a port, so it has it too');
  });
});
