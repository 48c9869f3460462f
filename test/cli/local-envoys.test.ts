import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UsageError } from '../../src/cli/args';
import { defaultEnvoyBinary, localEnvoysFromFlags, localXdsAddress } from '../../src/cli/local-envoys';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-local-envoys-'));
const executable = path.join(dir, 'envoy');
fs.writeFileSync(executable, '#!/bin/sh\n', { mode: 0o755 });
const notExecutable = path.join(dir, 'envoy.txt');
fs.writeFileSync(notExecutable, '', { mode: 0o644 });

const base = {
  'from-dir': 'objects',
  'no-managed-envoy': false,
  'envoy-drain-time': '5s',
  'envoy-concurrency': '1',
};
const env = { XDG_STATE_HOME: '/state' };
const none = () => undefined;
const found = () => executable;

function usage(f: () => unknown, message: RegExp): void {
  assert.throws(f, (e: unknown) => e instanceof UsageError && message.test(e.message));
}

describe('managed local Envoys: flags', () => {
  test('the found default binary turns managed mode on, with defaults', () => {
    assert.deepEqual(localEnvoysFromFlags(base, env, found), {
      binary: executable,
      stateDir: path.join('/state', 'convoy', 'envoys'),
      drainMs: 5_000,
      concurrency: 1,
    });
  });

  test('--envoy-bin wins over ENVOY_BIN, which wins over the default', () => {
    const other = path.join(dir, 'other');
    fs.writeFileSync(other, '#!/bin/sh\n', { mode: 0o755 });
    assert.equal(
      localEnvoysFromFlags({ ...base, 'envoy-bin': other }, { ...env, ENVOY_BIN: executable }, none)?.binary,
      other,
    );
    assert.equal(localEnvoysFromFlags(base, { ...env, ENVOY_BIN: other }, found)?.binary, other);
  });

  test('no binary anywhere, --no-managed-envoy, or Kubernetes mode: no managed Envoys', () => {
    assert.equal(localEnvoysFromFlags(base, env, none), undefined);
    assert.equal(localEnvoysFromFlags({ ...base, 'no-managed-envoy': true }, env, found), undefined);
    assert.equal(localEnvoysFromFlags({ ...base, 'from-dir': undefined }, env, found), undefined);
  });

  test('a named binary must be executable; contradictions are usage errors', () => {
    usage(
      () => localEnvoysFromFlags({ ...base, 'envoy-bin': notExecutable }, env, none),
      /--envoy-bin .* is not an executable/,
    );
    usage(
      () => localEnvoysFromFlags(base, { ...env, ENVOY_BIN: path.join(dir, 'missing') }, none),
      /ENVOY_BIN .* is not an executable/,
    );
    usage(
      () => localEnvoysFromFlags({ ...base, 'envoy-bin': executable, 'no-managed-envoy': true }, env, none),
      /excludes/,
    );
    usage(
      () => localEnvoysFromFlags({ ...base, 'from-dir': undefined, 'envoy-bin': executable }, env, none),
      /needs --from-dir/,
    );
    usage(
      () => localEnvoysFromFlags({ ...base, 'envoy-drain-time': 'soon' }, env, found),
      /--envoy-drain-time/,
    );
    usage(
      () => localEnvoysFromFlags({ ...base, 'envoy-concurrency': '0' }, env, found),
      /--envoy-concurrency/,
    );
  });

  test('--xds-tls-*: an explicitly named binary is an error, a found one is not used', () => {
    usage(
      () => localEnvoysFromFlags({ ...base, 'envoy-bin': executable, 'xds-tls-cert': 'c.pem' }, env, none),
      /Convoy's own CA/,
    );
    assert.equal(localEnvoysFromFlags({ ...base, 'xds-tls-cert': 'c.pem' }, env, found), undefined);
  });

  test("the default binary is the checkout's .venv/bin/envoy, found from a folder below package.json", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-checkout-'));
    fs.writeFileSync(path.join(root, 'package.json'), '{}');
    fs.mkdirSync(path.join(root, 'dist', 'src', 'cli'), { recursive: true });
    const from = path.join(root, 'dist', 'src', 'cli');
    assert.equal(defaultEnvoyBinary(from), undefined);
    fs.mkdirSync(path.join(root, '.venv', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(root, '.venv', 'bin', 'envoy'), '#!/bin/sh\n', { mode: 0o755 });
    assert.equal(defaultEnvoyBinary(from), path.join(root, '.venv', 'bin', 'envoy'));
  });

  test('local Envoys dial the xDS listen host, loopback for a wildcard, on the bound port', () => {
    assert.equal(localXdsAddress('127.0.0.1:18000', 18000), '127.0.0.1:18000');
    assert.equal(localXdsAddress('0.0.0.0:0', 40000), '127.0.0.1:40000');
    assert.equal(localXdsAddress('[::]:18000', 18000), '[::1]:18000');
    assert.equal(localXdsAddress('[::1]:18000', 18000), '[::1]:18000');
    assert.equal(localXdsAddress('192.0.2.5:18000', 18000), '192.0.2.5:18000');
  });
});
