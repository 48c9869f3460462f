import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REDACTED, redactSecrets } from '../../src/xds/redact';
import { decodeMessage, encodeMessage } from '../../src/envoy/protos';
import { secret } from '../support/xds-fixtures';

const SECRET_TYPE = 'envoy.extensions.transport_sockets.tls.v3.Secret';

test('private keys, passwords and shared secrets are redacted; certificates and file names stay', () => {
  const input = {
    name: 'default/cert',
    tls_certificate: {
      certificate_chain: { inline_string: 'CHAIN' },
      private_key: { inline_bytes: 'S0VZ' },
      password: { inline_string: 'pw' },
    },
    session_ticket_keys: { keys: [{ inline_bytes: 'AAAA' }, { filename: '/etc/keys/1' }] },
    generic_secret: { secret: { inline_string: 'token' }, secrets: { a: { inline_string: 'x' } } },
    validation_context: { trusted_ca: { inline_string: 'CA' } },
  };
  const copy = structuredClone(input);
  assert.deepEqual(redactSecrets(input), {
    name: 'default/cert',
    tls_certificate: {
      certificate_chain: { inline_string: 'CHAIN' },
      private_key: { inline_string: REDACTED },
      password: { inline_string: REDACTED },
    },
    session_ticket_keys: { keys: [{ inline_string: REDACTED }, { filename: '/etc/keys/1' }] },
    generic_secret: { secret: { inline_string: REDACTED }, secrets: { a: { inline_string: REDACTED } } },
    validation_context: { trusted_ca: { inline_string: 'CA' } },
  });
  assert.deepEqual(input, copy, 'the input is not changed');
});

test('a redacted Secret still encodes as a Secret, without the key bytes', () => {
  const bytes = encodeMessage(SECRET_TYPE, secret('default/cert'));
  assert.ok(bytes.includes('KEY-default/cert'));
  const again = encodeMessage(SECRET_TYPE, redactSecrets(decodeMessage(SECRET_TYPE, bytes)));
  assert.ok(!again.includes('KEY-default/cert'));
  assert.ok(again.includes('CERT-default/cert'));
  assert.ok(again.includes(REDACTED));
});
