import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { keyMatchesCertificate } from '../../src/pki/key-match';
import { createCa, issueLeaf } from '../../bench/pki';
import { sec1WithoutPublicKey } from './key-fixtures';

const ca = createCa('key-match test CA');

/** A certificate (DER) for `key`, signed by the test CA. */
function certFor(key: KeyObject): Buffer {
  const pem = issueLeaf(ca, 'match.example.com', key.export({ type: 'pkcs8', format: 'pem' }) as string).cert;
  return new X509Certificate(pem).raw;
}

/** What OpenSSL says about the pair: the answer the fast check must never contradict. */
function opensslMatches(keyPem: string, certDer: Buffer): boolean {
  return new X509Certificate(certDer).checkPrivateKey(createPrivateKey(keyPem));
}

const pems = (key: KeyObject, types: readonly ('pkcs8' | 'sec1' | 'pkcs1')[]): string[] =>
  types.map((type) => key.export({ type, format: 'pem' }) as string);

describe('keyMatchesCertificate', () => {
  for (const namedCurve of ['prime256v1', 'secp384r1', 'secp521r1']) {
    test(`EC ${namedCurve}: PKCS#8, SEC1 and SEC1 without public key match their certificate only`, () => {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve });
      const other = generateKeyPairSync('ec', { namedCurve }).privateKey;
      const cert = certFor(privateKey);
      const otherCert = certFor(other);
      for (const pem of [...pems(privateKey, ['pkcs8', 'sec1']), sec1WithoutPublicKey(privateKey)]) {
        assert.equal(keyMatchesCertificate(pem, cert), true);
        assert.equal(opensslMatches(pem, cert), true);
        assert.equal(keyMatchesCertificate(pem, otherCert), false);
        assert.equal(opensslMatches(pem, otherCert), false);
      }
    });
  }

  test('RSA: PKCS#8 and PKCS#1 match their certificate only', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const cert = certFor(privateKey);
    for (const pem of pems(privateKey, ['pkcs8', 'pkcs1'])) {
      assert.equal(keyMatchesCertificate(pem, cert), true);
      assert.equal(keyMatchesCertificate(pem, certFor(other)), false);
    }
  });

  test('a key of another type or curve never matches', () => {
    const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey;
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const pem = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }) as string;
    assert.equal(keyMatchesCertificate(pem(p256), certFor(p384)), false);
    assert.equal(keyMatchesCertificate(pem(rsa), certFor(p256)), false);
    assert.equal(keyMatchesCertificate(pem(p256), certFor(rsa)), false);
  });

  test('keys it does not read are left to OpenSSL (false, not a verdict)', () => {
    const ed = generateKeyPairSync('ed25519').privateKey;
    assert.equal(
      keyMatchesCertificate(ed.export({ type: 'pkcs8', format: 'pem' }) as string, certFor(ed)),
      false,
    );
    const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
    const encrypted = ec.export({
      type: 'pkcs8',
      format: 'pem',
      cipher: 'aes-128-cbc',
      passphrase: 'x',
    }) as string;
    assert.equal(keyMatchesCertificate(encrypted, certFor(ec)), false);
    assert.equal(keyMatchesCertificate('not a key', certFor(ec)), false);
    const pem = ec.export({ type: 'pkcs8', format: 'pem' }) as string;
    assert.equal(keyMatchesCertificate(pem, Buffer.from('not a certificate')), false);
  });

  test('an EC key whose scalar is out of range or whose stored point is off the curve does not match', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const cert = certFor(privateKey);
    const sec1 = privateKey.export({ type: 'sec1', format: 'der' });
    // SEC1: 30 len 02 01 01 04 20 <d: 32 bytes> a0 .. a1 .. 03 42 00 04 <x> <y>
    const dAt = sec1.indexOf(Buffer.from([0x04, 0x20])) + 2;
    const toPem = (der: Buffer) =>
      `-----BEGIN EC PRIVATE KEY-----\n${der.toString('base64')}\n-----END EC PRIVATE KEY-----\n`;
    assert.equal(keyMatchesCertificate(toPem(sec1), cert), true);
    const zero = Buffer.from(sec1);
    zero.fill(0, dAt, dAt + 32);
    assert.equal(keyMatchesCertificate(toPem(zero), cert), false, 'd = 0');
    const order = Buffer.from(sec1);
    Buffer.from('ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551', 'hex').copy(order, dAt);
    assert.equal(keyMatchesCertificate(toPem(order), cert), false, 'd = n');
  });

  test('agrees with OpenSSL on random pairs', () => {
    const keys = Array.from(
      { length: 6 },
      () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey,
    );
    const certs = keys.map(certFor);
    for (const k of keys) {
      const pem = k.export({ type: 'pkcs8', format: 'pem' }) as string;
      for (const c of certs) {
        const fast = keyMatchesCertificate(pem, c);
        // Only "matches" is ever claimed, and only when OpenSSL agrees.
        if (fast) assert.equal(opensslMatches(pem, c), true);
        else assert.equal(opensslMatches(pem, c), false);
      }
    }
  });
});
