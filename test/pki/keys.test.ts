import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { jwkFromPem, loadPrivateKey } from '../../src/pki/keys';
import { sec1WithoutPublicKey } from './key-fixtures';

function same(a: KeyObject, b: KeyObject): void {
  assert.deepEqual(a.export({ format: 'jwk' }), b.export({ format: 'jwk' }));
}

describe('loadPrivateKey', () => {
  for (const namedCurve of ['prime256v1', 'secp384r1', 'secp521r1']) {
    test(`EC ${namedCurve}: PKCS#8, SEC1, SEC1 without public key`, () => {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve });
      for (const type of ['pkcs8', 'sec1'] as const) {
        const pem = privateKey.export({ type, format: 'pem' }) as string;
        assert.ok(jwkFromPem(pem), `${type} takes the fast path`);
        same(loadPrivateKey(pem), createPrivateKey(pem));
      }
      const bare = sec1WithoutPublicKey(privateKey);
      assert.ok(jwkFromPem(bare));
      same(loadPrivateKey(bare), privateKey);
    });
  }

  test('RSA: PKCS#8 and PKCS#1', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    for (const type of ['pkcs8', 'pkcs1'] as const) {
      const pem = privateKey.export({ type, format: 'pem' }) as string;
      assert.ok(jwkFromPem(pem), `${type} takes the fast path`);
      same(loadPrivateKey(pem), createPrivateKey(pem));
    }
  });

  test('other keys go through OpenSSL: Ed25519, encrypted, EC parameters before the key', () => {
    const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    assert.equal(jwkFromPem(ed), undefined);
    same(loadPrivateKey(ed), createPrivateKey(ed));
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const encrypted = privateKey.export({
      type: 'pkcs8',
      format: 'pem',
      cipher: 'aes-128-cbc',
      passphrase: 'x',
    }) as string;
    assert.equal(jwkFromPem(encrypted), undefined);
    assert.throws(() => loadPrivateKey(encrypted));
    const withParams =
      '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n' +
      (privateKey.export({ type: 'sec1', format: 'pem' }) as string);
    same(loadPrivateKey(withParams), privateKey);
  });

  test('garbage is refused like createPrivateKey refuses it', () => {
    for (const pem of [
      'not a key',
      '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n',
      '-----BEGIN EC PRIVATE KEY-----\nMAA=\n-----END EC PRIVATE KEY-----\n',
    ]) {
      assert.throws(() => createPrivateKey(pem));
      assert.throws(() => loadPrivateKey(pem), pem);
    }
  });
});
