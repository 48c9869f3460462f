import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';

/** Runs the compiled CLI as a user would. */
const MAIN = path.resolve(__dirname, '..', '..', 'src', 'cli', 'main.js');

function convoy(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    childProcess.execFile(
      process.execPath,
      [MAIN, ...args],
      { timeout: 30_000, env },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

describe('convoy CLI', () => {
  test('starts with a node shebang so the npm bin runs directly', () => {
    assert.ok(fs.readFileSync(MAIN, 'utf8').startsWith('#!/usr/bin/env node\n'));
  });

  test('--help lists every subcommand; no command prints help and exits 2', async () => {
    const r = await convoy(['--help']);
    assert.equal(r.code, 0);
    for (const c of ['serve', 'bootstrap', 'certgen', 'status', 'proxy-status', 'version'])
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

  test('every subcommand has --help with an example and its exit status; all but serve have --output', async () => {
    const commands = [
      'serve',
      'bootstrap',
      'certgen',
      'status',
      'proxy-status',
      'config-dump',
      'translate',
      'describe',
      'version',
    ];
    const listed = await convoy(['--help']);
    for (const c of commands) {
      assert.match(listed.stdout, new RegExp(`\\n  ${c}\\s`), `${c} is listed`);
      const r = await convoy([c, '--help']);
      assert.equal(r.code, 0, `${c} --help: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`convoy ${c}`));
      assert.match(r.stdout, /\nExamples:\n {2}convoy /, `${c} --help shows examples`);
      assert.match(r.stdout, /[Ee]xit(s with)? status/, `${c} --help documents its exit status`);
      if (c !== 'serve')
        assert.match(r.stdout, /--output FORMAT[\s\S]*One of: [a-z, ]*json/, `${c} has --output`);
    }
  });

  test('structured output: the same data as JSON and YAML', async () => {
    const json = await convoy(['version', '-o', 'json']);
    const yaml = await convoy(['version', '-o', 'yaml']);
    assert.equal(json.code, 0);
    assert.deepEqual(parse(yaml.stdout), JSON.parse(json.stdout));
    assert.equal((await convoy(['version', '-o', 'xml'])).code, 2);
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

  test('bootstrap: plaintext only when asked by name, to stdout or --out', async () => {
    const r = await convoy([
      'bootstrap',
      '--xds-address',
      '127.0.0.1:18000',
      '--gateway',
      'ns/gw',
      '--node-id',
      'e1',
      '--sotw',
      '--insecure-plaintext-xds',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = parse(r.stdout);
    assert.deepEqual(doc.node, { id: 'e1', cluster: 'ns/gw' });
    assert.equal(doc.dynamic_resources.ads_config.api_type, 'GRPC');
    assert.equal(doc.static_resources.clusters[0].transport_socket, undefined);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-cli-'));
    try {
      const out = path.join(dir, 'b.yaml');
      const args = ['bootstrap', '--xds-address', 'cp:1', '--gateway', 'ns/gw', '--insecure-plaintext-xds'];
      const w = await convoy([...args, '-o', out]);
      assert.equal(w.code, 0, w.stderr);
      assert.equal(w.stdout, '');
      assert.equal(parse(fs.readFileSync(out, 'utf8')).dynamic_resources.ads_config.api_type, 'DELTA_GRPC');
      assert.deepEqual(fs.readdirSync(dir), ['b.yaml'], 'no temp file left behind');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('bootstrap by default: mTLS with a client certificate from the default CA folder', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-cli-'));
    const env = { ...process.env, XDG_STATE_HOME: path.join(dir, 'state') };
    try {
      const args = ['bootstrap', '--xds-address', '127.0.0.1:18000', '--gateway', 'ns/gw'];
      const toStdout = await convoy(args, env);
      assert.equal(toStdout.code, 2);
      assert.match(toStdout.stderr, /give --out FILE/);
      const out = path.join(dir, 'envoy.yaml');
      const w = await convoy([...args, '--out', out], env);
      assert.equal(w.code, 0, w.stderr);
      assert.match(w.stderr, /issued the client certificate of ns\/gw/);
      assert.deepEqual(fs.readdirSync(dir).sort(), [
        'envoy.xds-client-certificate.yaml',
        'envoy.xds-trusted-ca.yaml',
        'envoy.yaml',
        'state',
      ]);
      const pki = path.join(dir, 'state', 'convoy', 'xds-pki');
      const sds = parse(fs.readFileSync(path.join(dir, 'envoy.xds-client-certificate.yaml'), 'utf8'));
      assert.equal(
        sds.resources[0].tls_certificate.certificate_chain.filename,
        path.join(pki, 'gateways', 'ns', 'gw', 'tls.crt'),
      );
      const cert = new X509Certificate(fs.readFileSync(path.join(pki, 'gateways', 'ns', 'gw', 'tls.crt')));
      assert.equal(cert.subjectAltName, 'URI:spiffe://convoy/gateway/ns/gw');
      assert.ok(cert.verify(new X509Certificate(fs.readFileSync(path.join(pki, 'ca', 'ca.crt'))).publicKey));
      // Idempotent: a second run keeps the certificate.
      const again = await convoy([...args, '--out', out], env);
      assert.equal(again.code, 0, again.stderr);
      assert.doesNotMatch(again.stderr, /issued|renewed/);
      const same = new X509Certificate(fs.readFileSync(path.join(pki, 'gateways', 'ns', 'gw', 'tls.crt')));
      assert.equal(same.serialNumber, cert.serialNumber);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('certgen writes the CA, the serving and the client certificates, once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-certgen-'));
    try {
      const args = ['certgen', '--certs-dir', dir, '--server-name', 'convoy-xds.ns.svc', '--gateway', 'a/b'];
      const first = await convoy(args);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /^ca: created/m);
      assert.match(first.stdout, /^server: issued \(missing\)/m);
      assert.match(first.stdout, /^gateway a\/b: issued \(missing\)/m);
      const server = new X509Certificate(fs.readFileSync(path.join(dir, 'server', 'tls.crt')));
      assert.match(server.subjectAltName ?? '', /DNS:convoy-xds\.ns\.svc/);
      assert.equal((fs.statSync(path.join(dir, 'ca', 'ca.key')).mode & 0o777).toString(8), '600');
      const second = await convoy(args);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, /^ca: current/m);
      assert.match(second.stdout, /^server: current/m);
      assert.match(second.stdout, /^gateway a\/b: current/m);
      const bad = await convoy(['certgen', '--certs-dir', dir, '--gateway', 'NotAName']);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /expected NAMESPACE\/NAME/);
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
