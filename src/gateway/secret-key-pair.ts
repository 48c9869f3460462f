/**
 * The key-pair check of a kubernetes.io/tls Secret's data, and the checks made ahead of time.
 *
 * Checking a key pair (X.509 parse, chain order, key match) costs about a tenth of a millisecond
 * per Secret, half a second of the first build at 5,000 Secrets. The file provider runs the check
 * in its parse workers, in parallel with the rest of the load, and hands the answer over with the
 * object (docs/architecture.md §10.4); certificates.ts then uses it instead of checking again.
 * This module has no dependency beyond the PEM helpers, so the workers load little with it.
 */
import type { KeyPairCheck } from '../pki/keypair';
import { checkKeyPair } from '../pki/keypair';
import type { KubeObject } from '../store/objects';

export const SECRET_TYPE_TLS = 'kubernetes.io/tls';

/** Decodes a base64 Secret value to UTF-8, or returns undefined when it is missing or not base64. */
export function decodeBase64(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  // Buffer.from ignores invalid characters; reject strings that are clearly not base64.
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return undefined;
  return Buffer.from(compact, 'base64').toString('utf8');
}

/** The PEM texts of a TLS Secret's `tls.crt` and `tls.key`, each undefined when missing or not base64. */
export function secretPems(secret: KubeObject): { crt: string | undefined; key: string | undefined } {
  return { crt: decodeBase64(secret.data?.['tls.crt']), key: decodeBase64(secret.data?.['tls.key']) };
}

/**
 * Checks the key pair of a Secret as certificates.ts would: the result of checkKeyPair() on its
 * decoded `tls.crt` and `tls.key`, or undefined when the Secret is not of type kubernetes.io/tls
 * or lacks either value (certificates.ts reports those without a check).
 */
export function checkSecretKeyPair(secret: KubeObject): KeyPairCheck | undefined {
  if (secret.type !== SECRET_TYPE_TLS) return undefined;
  const { crt, key } = secretPems(secret);
  if (!crt || !key) return undefined;
  return checkKeyPair(crt, key);
}

/** Checks made ahead of time, per Secret object (store objects are never changed once stored). */
const checkedAhead = new WeakMap<KubeObject, KeyPairCheck>();

/**
 * Records `check` as the key-pair check of `secret`: what checkSecretKeyPair(secret) returned for
 * this very object, elsewhere (a parse worker). Only the object's owner calls this, before the
 * object is in the store; the record goes with the object.
 */
export function rememberKeyPairCheck(secret: KubeObject, check: KeyPairCheck): void {
  checkedAhead.set(secret, check);
}

/** The key-pair check recorded for `secret` by rememberKeyPairCheck(), if any. */
export function keyPairCheckedAhead(secret: KubeObject): KeyPairCheck | undefined {
  return checkedAhead.get(secret);
}
