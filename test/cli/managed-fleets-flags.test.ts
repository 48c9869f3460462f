import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../support/repo';
import type { AddressInfo } from 'node:net';
import { UsageError, parseCommand } from '../../src/cli/args';
import { serveOptionsFromFlags, serveSpec } from '../../src/cli/serve';
import { drainer } from '../../src/cli/envoy-shutdown';

function options(argv: string[]) {
  const parsed = parseCommand(serveSpec, argv);
  assert.ok(parsed);
  return serveOptionsFromFlags(parsed.values);
}

describe('convoy serve --managed-fleets', () => {
  test('off by default; on, the Envoys dial the convoy-xds Service of the Lease namespace', () => {
    assert.equal(options([]).fleets, undefined);
    const o = options([
      '--managed-fleets',
      '--leader-election-namespace',
      'gw-system',
      '--xds-address',
      '0.0.0.0:18001',
    ]);
    assert.deepEqual(o.fleets, {
      xdsAddress: 'convoy-xds.gw-system.svc:18001',
      envoyImage: 'envoyproxy/envoy:v1.40-latest',
      convoyImage: 'convoy:dev',
      caSecret: 'convoy-xds-ca',
    });
    assert.equal(
      options(['--managed-fleets', '--fleet-xds-address', '192.0.2.1:18000']).fleets?.xdsAddress,
      '192.0.2.1:18000',
    );
  });

  test('refused with certificate files (no CA to issue from), in file mode, and with a bad address', () => {
    for (const [argv, message] of [
      [['--managed-fleets', '--xds-tls-cert', 'a', '--xds-tls-key', 'b', '--xds-tls-ca', 'c'], /Convoy's CA/],
      [['--managed-fleets', '--from-dir', '.'], /Kubernetes mode/],
      [['--managed-fleets', '--fleet-xds-address', 'nohost'], /fleet-xds-address/],
    ] as [string[], RegExp][]) {
      assert.throws(
        () => options(argv),
        (e: unknown) => e instanceof UsageError && message.test(e.message),
        argv.join(' '),
      );
    }
  });
});

describe('deploy/managed/10-convoy.yaml', () => {
  test("its Convoy's arguments are valid serve flags that turn managed fleets on", () => {
    const docs = parseAllDocuments(
      fs.readFileSync(path.join(repoRoot(), 'deploy/managed/10-convoy.yaml'), 'utf8'),
    );
    const deployment = docs.map((d) => d.toJS()).find((d) => d?.kind === 'Deployment');
    const [command, ...args] = deployment.spec.template.spec.containers[0].args as string[];
    assert.equal(command, 'serve');
    assert.equal(deployment.spec.replicas, 2);
    assert.equal(options(args).fleets?.xdsAddress, 'convoy-xds.convoy-system.svc:18000');
  });
});

describe('envoy-shutdown-manager drain', () => {
  test('fails health checks, then drains listeners gracefully, once, and resolves after the drain time', async () => {
    const calls: string[] = [];
    const admin = http.createServer((req, res) => {
      calls.push(`${req.method} ${req.url}`);
      res.end('OK\n');
    });
    await new Promise<void>((r) => admin.listen(0, '127.0.0.1', r));
    try {
      const port = (admin.address() as AddressInfo).port;
      const drain = drainer(`127.0.0.1:${port}`, 200);
      const started = Date.now();
      await Promise.all([drain(), drain()]);
      assert.ok(Date.now() - started >= 190, 'waits for the drain time');
      assert.deepEqual(calls, ['POST /healthcheck/fail', 'POST /drain_listeners?graceful']);
    } finally {
      admin.close();
    }
  });
});
