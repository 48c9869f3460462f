import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHostPort } from '../../src/util/host-port';

test('host:port parsing', () => {
  assert.deepEqual(parseHostPort('[::1]:80'), { host: '::1', port: 80 });
  assert.deepEqual(parseHostPort('a.b:0'), { host: 'a.b', port: 0 });
  assert.deepEqual(parseHostPort('127.0.0.1:65535'), { host: '127.0.0.1', port: 65535 });
  assert.throws(() => parseHostPort('::1:80'), /expected HOST:PORT/);
  assert.throws(() => parseHostPort('a:65536', 'xds-address'), /^Error: xds-address: port out of range/);
  assert.throws(() => parseHostPort('[a.b]:80'), /not an IPv6 address/);
});
