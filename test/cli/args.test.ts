import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError, defineCommand, formatHelp, parseCommand } from '../../src/cli/args';
import { bootstrapOptionsFromFlags, bootstrapSpec, xdsClientTlsChoice } from '../../src/cli/bootstrap';

const spec = defineCommand({
  name: 'demo',
  summary: 'a demo',
  options: {
    address: { type: 'string', valueName: 'HOST:PORT', description: 'Where.', required: true },
    output: {
      type: 'string',
      short: 'o',
      description: 'Format.',
      choices: ['table', 'json'],
      default: 'table',
    },
    verbose: { type: 'boolean', short: 'v', description: 'More.' },
  },
});

describe('parseCommand', () => {
  test('parses values, applies defaults, booleans default to false', () => {
    const p = parseCommand(spec, ['--address', 'a:1']);
    assert.ok(p);
    assert.deepEqual(p.values, { address: 'a:1', output: 'table', verbose: false });
    const q = parseCommand(spec, ['--address=b:2', '-o', 'json', '-v']);
    assert.deepEqual(q?.values, { address: 'b:2', output: 'json', verbose: true });
  });

  test('usage errors: unknown flag, missing required, bad choice, stray positional', () => {
    assert.throws(
      () => parseCommand(spec, ['--address', 'a:1', '--nope']),
      (e: unknown) => {
        assert.ok(e instanceof UsageError);
        assert.match(e.message, /nope/);
        assert.equal(e.command, 'demo');
        return true;
      },
    );
    assert.throws(() => parseCommand(spec, []), /--address is required/);
    assert.throws(
      () => parseCommand(spec, ['--address', 'a:1', '-o', 'yaml']),
      /--output must be one of table, json/,
    );
    assert.throws(() => parseCommand(spec, ['--address', 'a:1', 'extra']), /unexpected argument "extra"/);
    assert.throws(() => parseCommand(spec, ['--address']), UsageError);
  });

  test('--help prints help instead of failing on missing required options', () => {
    let printed = '';
    const p = parseCommand(spec, ['--help'], (t) => (printed += t));
    assert.equal(p, undefined);
    assert.equal(printed, formatHelp(spec));
    assert.match(printed, /Usage: convoy demo \[options\]/);
    assert.match(printed, /--address HOST:PORT\s+Where\. Required\./);
    assert.match(printed, /-o, --output VALUE\s+Format\. One of: table, json\. Default: table\./);
    assert.match(printed, /-h, --help/);
  });
});

describe('convoy bootstrap flags', () => {
  const parse = (argv: string[]) => {
    const p = parseCommand(bootstrapSpec, argv);
    assert.ok(p);
    return bootstrapOptionsFromFlags(p.values);
  };

  test('maps flags onto bootstrap options', () => {
    assert.deepEqual(
      parse(['--xds-address', 'cp:18000', '--gateway', 'ns/gw', '--sotw', '--node-id', 'n1']),
      {
        xdsAddress: 'cp:18000',
        gateway: 'ns/gw',
        sotw: true,
        adminAddress: '127.0.0.1:19000',
        nodeId: 'n1',
      },
    );
  });

  test('--listener-layout: sni-dispatch and auto reach the bootstrap options; chains is the default', () => {
    const layout = (argv: string[]) =>
      parse(['--xds-address', 'cp:1', '--gateway', 'a/b', ...argv]).listenerLayout;
    assert.equal(layout([]), undefined);
    assert.equal(layout(['--listener-layout', 'chains']), undefined);
    assert.equal(layout(['--listener-layout', 'sni-dispatch']), 'sni-dispatch');
    assert.equal(layout(['--listener-layout', 'auto']), 'auto');
  });

  const choice = (argv: string[]) => {
    const p = parseCommand(bootstrapSpec, ['--xds-address', 'cp:1', '--gateway', 'a/b', ...argv]);
    assert.ok(p);
    return xdsClientTlsChoice(p.values);
  };

  test('mTLS is the default: the client certificate comes from a certificate folder', () => {
    const d = choice([]);
    assert.equal(d.mode, 'certs-dir');
    assert.deepEqual(choice(['--certs-dir', 'pki']), { mode: 'certs-dir', dir: `${process.cwd()}/pki` });
    assert.deepEqual(choice(['--insecure-plaintext-xds']), { mode: 'plaintext' });
    assert.throws(() => choice(['--insecure-plaintext-xds', '--certs-dir', 'x']), /excludes the TLS flags/);
    assert.throws(
      () => choice(['--certs-dir', 'x', '--xds-tls-cert', 'c', '--xds-tls-key', 'k', '--xds-tls-ca', 'a']),
      /--certs-dir excludes --xds-tls-\*/,
    );
  });

  test('TLS flags come as a set and become absolute paths', () => {
    assert.deepEqual(
      choice(['--xds-tls-cert', 'c.pem', '--xds-tls-key', 'k.pem', '--xds-tls-ca', '/etc/ca.pem']),
      {
        mode: 'files',
        certFile: `${process.cwd()}/c.pem`,
        keyFile: `${process.cwd()}/k.pem`,
        caFile: '/etc/ca.pem',
      },
    );
    const p = parseCommand(bootstrapSpec, [
      '--xds-address',
      'cp:1',
      '--gateway',
      'a/b',
      '--xds-tls-server-name',
      'convoy.local',
    ]);
    assert.ok(p);
    const o = bootstrapOptionsFromFlags(p.values, {
      certFile: '/c',
      keyFile: '/k',
      caFile: '/a',
      sdsDir: '/etc/envoy',
    });
    assert.equal(o.tls?.serverName, 'convoy.local');
    assert.equal(o.tls?.sdsDir, '/etc/envoy');
    assert.throws(() => choice(['--xds-tls-cert', 'c.pem']), /must be given together/);
    assert.throws(() => bootstrapOptionsFromFlags(p.values), /--xds-tls-server-name needs TLS/);
  });
});
