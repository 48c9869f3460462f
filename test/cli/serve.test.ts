import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { UsageError, formatHelp, parseCommand } from '../../src/cli/args';
import { serveOptionsFromFlags, serveSpec } from '../../src/cli/serve';
import { startServing } from '../../src/cli/serve-runtime';
import { silentLogger } from '../../src/observability/logger';
import { ConvoyMetrics } from '../../src/observability/metrics';

const MAIN = path.resolve(__dirname, '..', '..', 'src', 'cli', 'main.js');

function options(argv: string[]) {
  const parsed = parseCommand(serveSpec, argv);
  assert.ok(parsed);
  return serveOptionsFromFlags(parsed.values);
}

function usageError(argv: string[], message: RegExp): void {
  assert.throws(
    () => options(argv),
    (e: unknown) => e instanceof UsageError && e.command === 'serve' && message.test(e.message),
    argv.join(' '),
  );
}

describe('convoy serve flags', () => {
  test('defaults: Kubernetes mode, loopback admin and xDS, every opt-in off', () => {
    const o = options([]);
    assert.deepEqual(o, {
      source: { kubeconfig: undefined },
      controllerName: 'convoy.dev/gateway-controller',
      xdsAddress: '127.0.0.1:18000',
      xdsSecurity: {
        'insecure-plaintext-xds': false,
        'xds-server-name': [],
        'xds-max-streams': '20000',
        'xds-max-streams-per-peer': '1000',
        'xds-unknown-fleet-timeout': '60s',
      },
      adminAddress: '127.0.0.1:9090',
      envoyBindAddress: '0.0.0.0',
      accessLog: { default: { format: 'json' }, gateways: new Map() },
      gatewayAddresses: undefined,
      externalNameServices: false,
      maxPortRangePorts: 1024,
      endpoints: { allowLoopback: false, allowLinkLocal: false },
      leaseNamespace: process.env.POD_NAMESPACE ?? 'convoy-system',
      leaseName: 'convoy-leader',
      logBufferBytes: 4 * 1024 * 1024,
      buildThread: 'main',
    });
  });

  test('--enable-xlistenerset and --dynamic-port-range (docs/gateway-api.md §29)', () => {
    assert.equal(options(['--enable-xlistenerset']).xListenerSets, true);
    assert.equal(options(['--enable-xlistenerset']).dynamicPorts, undefined);
    const o = options(['--enable-xlistenerset', '--dynamic-port-range', '30000-30999']);
    assert.deepEqual(o.dynamicPorts, { first: 30000, last: 30999 });
    usageError(['--dynamic-port-range', '30000-30999'], /add --enable-xlistenerset/);
    usageError(
      ['--enable-xlistenerset', '--dynamic-port-range', '30999-30000'],
      /--dynamic-port-range: .*exceed/,
    );
    usageError(['--enable-xlistenerset', '--dynamic-port-range', '0-10'], /--dynamic-port-range: .*within/);
  });

  test('every flag reaches the options; --gateway-address repeats', () => {
    const o = options([
      '--from-dir=objects',
      '--controller-name',
      'example.com/gw',
      '--xds-address',
      '[::1]:18001',
      '--xds-tls-cert',
      'c.pem',
      '--xds-tls-key',
      'k.pem',
      '--xds-tls-ca',
      'ca.pem',
      '--admin-address',
      '0.0.0.0:9091',
      '--admin-token-file',
      'token',
      '--health-address',
      '0.0.0.0:9092',
      '--envoy-bind-address',
      '::',
      '--gateway-address',
      '192.0.2.1',
      '--gateway-address',
      'gw.example.com',
      '--envoy-service',
      'infra/envoy',
      '--enable-external-name-services',
      '--max-port-range-ports',
      '4096',
      '--allow-loopback-endpoints',
      '--allow-link-local-endpoints',
      '--leader-election-namespace',
      'ns',
      '--leader-election-name',
      'lease',
      '--log-level',
      'debug',
      '--log-buffer-bytes',
      '65536',
      '--from-dir-max-file-size',
      '2Mi',
      '--from-dir-max-files',
      '50',
      '--from-dir-max-depth',
      '3',
      '--from-dir-settle-ms',
      '0',
      '--access-log',
      'text:/var/log/envoy/access.log',
      '--access-log',
      'team-a/web=off',
      '--build-thread',
      'worker',
    ]);
    assert.deepEqual(o, {
      source: {
        dir: 'objects',
        limits: { maxFileBytes: 2 * 1024 * 1024, maxEntries: 50, maxDepth: 3, settleMs: 0 },
      },
      controllerName: 'example.com/gw',
      xdsAddress: '[::1]:18001',
      xdsSecurity: {
        'insecure-plaintext-xds': false,
        'xds-server-name': [],
        'xds-max-streams': '20000',
        'xds-max-streams-per-peer': '1000',
        'xds-unknown-fleet-timeout': '60s',
        'xds-tls-cert': 'c.pem',
        'xds-tls-key': 'k.pem',
        'xds-tls-ca': 'ca.pem',
      },
      adminAddress: '0.0.0.0:9091',
      adminTokenFile: 'token',
      healthAddress: '0.0.0.0:9092',
      envoyBindAddress: '::',
      accessLog: {
        default: { format: 'text', path: '/var/log/envoy/access.log' },
        gateways: new Map([['team-a/web', { format: 'off' }]]),
      },
      gatewayAddresses: {
        service: { namespace: 'infra', name: 'envoy' },
        static: ['192.0.2.1', 'gw.example.com'],
      },
      externalNameServices: true,
      maxPortRangePorts: 4096,
      endpoints: { allowLoopback: true, allowLinkLocal: true },
      leaseNamespace: 'ns',
      leaseName: 'lease',
      logLevel: 'debug',
      logBufferBytes: 65536,
      buildThread: 'worker',
    });
  });

  test('--from-dir-cache-dir turns the scan cache on, keyed by this build of Convoy', () => {
    const source = options(['--from-dir', 'd', '--from-dir-cache-dir', '/var/cache/convoy']).source;
    assert.ok('dir' in source);
    assert.equal(source.limits?.cache?.dir, '/var/cache/convoy');
    assert.match(source.limits?.cache?.convoyVersion ?? '', /^\d+\.\d+\.\d+/);
    const off = options(['--from-dir', 'd']).source;
    assert.ok('dir' in off && off.limits?.cache === undefined, 'off by default');
  });

  test('unsafe or contradictory combinations are usage errors', () => {
    usageError(
      ['--admin-address', '0.0.0.0:9090'],
      /not a loopback address: protect it with --admin-token-file/,
    );
    usageError(['--admin-address', '[::]:9090'], /not a loopback address/);
    usageError(['--admin-address', '10.1.2.3:9090'], /not a loopback address/);
    assert.equal(
      options(['--admin-address', '0.0.0.0:9090', '--allow-unauthenticated-admin']).adminAddress,
      '0.0.0.0:9090',
    );
    for (const loopback of ['127.0.0.1:1', '[::1]:9090', 'localhost:9090', '127.9.9.9:9090'])
      assert.equal(options(['--admin-address', loopback]).adminAddress, loopback);
    usageError(['--admin-address', '127.0.0.1:99999'], /--admin-address: port out of range/);
    usageError(['--xds-address', 'nope'], /--xds-address: expected HOST:PORT/);
    usageError(['--health-address', '1.2.3.4:70000'], /--health-address: port out of range/);
    usageError(['--from-dir', 'd', '--kubeconfig', 'k'], /exclude each other/);
    usageError(['--envoy-service', 'just-a-name'], /NAMESPACE\/NAME/);
    usageError(['--log-buffer-bytes', '1k'], /--log-buffer-bytes must be a whole number/);
    usageError(['--log-buffer-bytes', '100'], /at least 16384/);
    usageError(
      ['--from-dir', 'd', '--from-dir-max-file-size', '4MB'],
      /--from-dir-max-file-size must be a byte count/,
    );
    usageError(
      ['--from-dir', 'd', '--from-dir-max-files', '0'],
      /--from-dir-max-files must be a whole number of at least 1/,
    );
    usageError(
      ['--from-dir', 'd', '--from-dir-settle-ms', 'soon'],
      /--from-dir-settle-ms must be a whole number of at least 0/,
    );
    usageError(['--log-level', 'loud'], /--log-level must be one of trace, debug/);
    usageError(
      ['--max-port-range-ports', '1'],
      /--max-port-range-ports must be a whole number of at least 2/,
    );
    usageError(['--max-port-range-ports', '70000'], /--max-port-range-ports must be at most 65535/);
  });

  test('--listener-layout auto with its threshold; a threshold without auto, or not a whole number, is refused', () => {
    const o = options(['--listener-layout', 'auto', '--listener-layout-threshold', '250']);
    assert.equal(o.listenerLayout, 'auto');
    assert.equal(o.listenerLayoutThreshold, 250);
    const d = options(['--listener-layout', 'auto']);
    assert.equal(d.listenerLayout, 'auto');
    assert.equal(d.listenerLayoutThreshold, undefined, 'the translator applies its default');
    assert.equal(options([]).listenerLayout, undefined, 'chains stays the default');
    usageError(['--listener-layout-threshold', '10'], /applies to --listener-layout auto/);
    usageError(['--listener-layout', 'sni-dispatch', '--listener-layout-threshold', '10'], /applies to/);
    usageError(
      ['--listener-layout', 'auto', '--listener-layout-threshold', '0'],
      /whole number of at least 1/,
    );
    usageError(['--listener-layout', 'auto', '--listener-layout-threshold', '1e3'], /whole number/);
  });

  test('the help names every flag and shows examples', () => {
    const help = formatHelp(serveSpec);
    for (const flag of Object.keys(serveSpec.options)) assert.match(help, new RegExp(`--${flag}\\b`), flag);
    assert.match(
      help,
      /Examples:\n {2}convoy serve --from-dir examples --allow-loopback-endpoints --envoy-bind-address 127.0.0.1\n/,
    );
    assert.ok(
      help.split('\n').every((l) => l.length <= 100 || !l.includes(' ')),
      'wrapped at 100 columns',
    );
  });

  test('an unknown flag exits 2 with the flag named and a pointer to --help (real process)', () => {
    const r = childProcess.spawnSync(process.execPath, [MAIN, 'serve', '--admin-adress', '127.0.0.1:1'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      `convoy serve: Unknown option '--admin-adress'.\nRun "convoy serve --help" for usage.\n`,
    );
  });
});

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function canListen(port: number): Promise<boolean> {
  const s = net.createServer();
  const ok = await new Promise<boolean>((resolve) => {
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (ok) await new Promise((r) => s.close(r));
  return ok;
}

/** Handles and requests keeping the event loop alive, by type (timers of the test runner included). */
function liveResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

/** Resource types of which more are alive now than in `baseline`. */
function extraResources(baseline: Map<string, number>): Record<string, number> {
  const extra: Record<string, number> = {};
  for (const [type, n] of liveResources())
    if (n > (baseline.get(type) ?? 0)) extra[type] = n - (baseline.get(type) ?? 0);
  return extra;
}

/** Waits until no more resources are alive than in `baseline` (closing sockets takes a few turns). */
async function backTo(baseline: Map<string, number>): Promise<void> {
  for (let i = 0; i < 500 && Object.keys(extraResources(baseline)).length > 0; i++)
    await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(extraResources(baseline), {});
}

describe('convoy serve startup failures close what was opened', { concurrency: false }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-serve-'));
  const run = (argv: string[]) => startServing(options(argv), silentLogger(), new ConvoyMetrics());

  test('admin port in use: rejects naming it, after closing the xDS server it had opened', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const adminPort = (blocker.address() as net.AddressInfo).port;
    const xdsPort = await freePort();
    const baseline = liveResources();
    try {
      await assert.rejects(
        run([
          '--from-dir',
          dir,
          '--xds-address',
          `127.0.0.1:${xdsPort}`,
          '--admin-address',
          `127.0.0.1:${adminPort}`,
        ]),
        new RegExp(
          `^Error: admin server: cannot listen on 127\\.0\\.0\\.1:${adminPort}: address already in use$`,
        ),
      );
      await backTo(baseline);
      assert.ok(await canListen(xdsPort), 'the xDS port is free again');
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  test('xDS port in use, unreadable directory, missing TLS or token file: nothing stays open', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const busy = (blocker.address() as net.AddressInfo).port;
    try {
      const cases: [string[], RegExp][] = [
        [
          ['--from-dir', dir, '--xds-address', `127.0.0.1:${busy}`],
          /^Error: xDS server: cannot listen on .*: address already in use$/,
        ],
        [['--from-dir', path.join(dir, 'missing')], /file provider: cannot read directory .*missing: ENOENT/],
        [
          ['--from-dir', dir, '--xds-tls-cert', 'no.pem', '--xds-tls-key', 'no.key', '--xds-tls-ca', 'no.ca'],
          /no\.(pem|key|ca)/,
        ],
        [
          ['--from-dir', dir, '--admin-token-file', path.join(dir, 'no-token')],
          /cannot read admin token file .*no-token: ENOENT/,
        ],
        [
          ['--kubeconfig', path.join(dir, 'no-kubeconfig')],
          /cannot load kubeconfig .*no-kubeconfig: no such file/,
        ],
      ];
      for (const [argv, message] of cases) {
        const [xdsPort, adminPort, healthPort] = [await freePort(), await freePort(), await freePort()];
        const baseline = liveResources();
        const ports = [
          '--admin-address',
          `127.0.0.1:${adminPort}`,
          '--health-address',
          `127.0.0.1:${healthPort}`,
        ];
        const xds = argv.includes('--xds-address') ? [] : ['--xds-address', `127.0.0.1:${xdsPort}`];
        await assert.rejects(run([...argv, ...xds, ...ports]), message, argv.join(' '));
        await backTo(baseline);
        for (const port of [xdsPort, adminPort, healthPort])
          assert.ok(await canListen(port), `${argv.join(' ')}: port ${port} free`);
      }
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  test('a clean start stops without leaving a handle, timer or watcher behind', async () => {
    const baseline = liveResources();
    const running = await run([
      '--from-dir',
      dir,
      '--xds-address',
      '127.0.0.1:0',
      '--admin-address',
      '127.0.0.1:0',
      '--health-address',
      '127.0.0.1:0',
    ]);
    assert.ok(Object.keys(extraResources(baseline)).length > 0, 'servers and watchers are open');
    await running.stop();
    await backTo(baseline);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
