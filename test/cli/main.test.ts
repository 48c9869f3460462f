import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';

/** Runs the compiled CLI as a user would. */
const MAIN = path.resolve(__dirname, '..', '..', 'src', 'cli', 'main.js');

function convoy(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    childProcess.execFile(process.execPath, [MAIN, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

describe('convoy CLI', () => {
  test('starts with a node shebang so the npm bin runs directly', () => {
    assert.ok(fs.readFileSync(MAIN, 'utf8').startsWith('#!/usr/bin/env node\n'));
  });

  test('--help lists every subcommand; no command prints help and exits 2', async () => {
    const r = await convoy(['--help']);
    assert.equal(r.code, 0);
    for (const c of ['serve', 'bootstrap', 'status', 'proxy-status', 'version'])
      assert.match(r.stdout, new RegExp(`\\n  ${c}\\s`));
    const none = await convoy([]);
    assert.equal(none.code, 2);
    assert.match(none.stdout, /Usage: convoy <command>/);
  });

  test('unknown command and bad flags exit 2 with a hint', async () => {
    const r = await convoy(['frobnicate']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command "frobnicate"/);
    const b = await convoy(['bootstrap', '--gateway', 'a/b']);
    assert.equal(b.code, 2);
    assert.match(
      b.stderr,
      /convoy bootstrap: --xds-address is required\nRun "convoy bootstrap --help" for usage\./,
    );
  });

  test('every subcommand has --help', async () => {
    for (const c of ['bootstrap', 'status', 'proxy-status', 'version', 'serve']) {
      const r = await convoy([c, '--help']);
      assert.equal(r.code, 0, `${c} --help: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`convoy ${c}`));
    }
  });

  test('version prints the package version', async () => {
    const pkg = JSON.parse(
      fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8'),
    );
    const r = await convoy(['version']);
    assert.equal(r.code, 0);
    assert.equal(
      r.stdout,
      `convoy ${pkg.version} (node ${process.version}, ${process.platform}/${process.arch})\n`,
    );
  });

  test('bootstrap writes YAML to stdout or to --out', async () => {
    const r = await convoy([
      'bootstrap',
      '--xds-address',
      '127.0.0.1:18000',
      '--gateway',
      'ns/gw',
      '--node-id',
      'e1',
      '--sotw',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = parse(r.stdout);
    assert.deepEqual(doc.node, { id: 'e1', cluster: 'ns/gw' });
    assert.equal(doc.dynamic_resources.ads_config.api_type, 'GRPC');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-cli-'));
    try {
      const out = path.join(dir, 'b.yaml');
      const w = await convoy(['bootstrap', '--xds-address', 'cp:1', '--gateway', 'ns/gw', '-o', out]);
      assert.equal(w.code, 0, w.stderr);
      assert.equal(w.stdout, '');
      assert.equal(parse(fs.readFileSync(out, 'utf8')).dynamic_resources.ads_config.api_type, 'DELTA_GRPC');
      assert.deepEqual(fs.readdirSync(dir), ['b.yaml'], 'no temp file left behind');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('status against nothing fails with a message naming the address', async () => {
    const r = await convoy(['status', '--admin-address', '127.0.0.1:1']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot reach Convoy's admin server at 127\.0\.0\.1:1/);
  });

  describe('against a fake admin server', () => {
    let server: http.Server;
    let address = '';
    const statuses = [
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { namespace: 'ns', name: 'gw', generation: 1 },
        status: { conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: '' }] },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { namespace: 'other', name: 'r', generation: 1 },
        status: { parents: [] },
      },
    ];
    before(async () => {
      server = http.createServer((req, res) => {
        const body =
          req.url === '/status'
            ? statuses
            : req.url === '/status/problems'
              ? [{ file: 'x.yaml', message: 'unknown kind Foo' }]
              : req.url === '/debug/xds'
                ? {
                    streams: [
                      {
                        node: { id: 'n1', cluster: 'ns/gw' },
                        types: { lds: { state: 'NACKED', error: 'boom' } },
                      },
                    ],
                  }
                : undefined;
        res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body ?? {}));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((r) => server.close(() => r())));

    test('status prints a table, file problems, and filters', async () => {
      const r = await convoy(['status', '--admin-address', address]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^KIND\s+NAMESPACE\s+NAME/);
      assert.match(r.stdout, /Gateway\s+ns\s+gw\s+-\s+True/);
      assert.match(r.stdout, /HTTPRoute\s+other\s+r\s+\(no parents\)/);
      assert.match(r.stdout, /Input problems:\n {2}x\.yaml: unknown kind Foo/);
      const filtered = await convoy(['status', '--admin-address', address, '-n', 'ns', '-o', 'json']);
      assert.deepEqual(JSON.parse(filtered.stdout), [statuses[0]]);
      const byKind = await convoy([
        'status',
        '--admin-address',
        address,
        '--kind',
        'httproute',
        '-o',
        'json',
      ]);
      assert.deepEqual(JSON.parse(byKind.stdout), [statuses[1]]);
    });

    test('proxy-status prints the sync table with the NACK', async () => {
      const r = await convoy(['proxy-status', '--admin-address', address]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /n1\s+ns\/gw\s+-\s+NACKED/);
      assert.match(r.stdout, /n1 \[ns\/gw\] LDS: boom/);
    });
  });
});
