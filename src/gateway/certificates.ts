/**
 * Resolves listeners' certificateRefs to kubernetes.io/tls Secrets and validates them with
 * node:crypto.
 *
 * Only certificates that parse, whose chain is in issuer order and whose key matches the leaf
 * become SecretModels (docs/gateway-api.md §8); a listener that has served a Secret keeps its last
 * good version while the current one is invalid (last-good-certificates.ts). Expiry is deliberately
 * not checked here (an expired certificate is still served, so a renewal race never takes a
 * listener down; the Controller warns about it, controller/certificate-validity.ts).
 */
import { checkKeyPair } from '../pki/keypair';
import type { SecretModel } from '../model/fleet';
import type { KubeObject } from '../store/objects';
import type { ListenerOwner, StoreView } from './resolved';
import type { SecretObjectReference } from './api';
import { GATEWAY_API_GROUP, normalizeGroup } from './api';
import { Reason } from '../status/conditions';
import { isReferenceAllowed } from './referencegrants';
import { XLISTENERSET_GROUP, XLISTENERSET_KIND } from '../store/objects';
import { secretName } from '../model/names';
import { SECRET_TYPE_TLS, keyPairCheckedAhead, secretPems } from './secret-key-pair';

export { SECRET_TYPE_TLS } from './secret-key-pair';

export type CertificateProblem = {
  reason: typeof Reason.InvalidCertificateRef | typeof Reason.RefNotPermitted;
  message: string;
};

/**
 * A resolved Secret, or the problem; `invalidSecret` names (`ns/name`) a Secret that exists and is
 * permitted but whose content is invalid: the only case in which its last good version is served.
 */
export type CertificateResult =
  { ok: true; secret: SecretModel } | ({ ok: false; invalidSecret?: string } & CertificateProblem);

/**
 * Remembers the check of each Secret object, per namespace.
 *
 * Parsing and checking a key pair costs about a millisecond, and a Secret may be referenced by
 * thousands of listeners and rebuilt on every change. Store objects are immutable (a change is a new
 * object), so the result of an object is the same for good; the returned model must not be mutated.
 */
export class CertificateMemo {
  private readonly bySecret = new WeakMap<KubeObject, Map<string, CertificateResult>>();

  /** Returns checkSecret(secret, namespace), computed once per Secret object and namespace. */
  check(secret: KubeObject, namespace: string): CertificateResult {
    let byNs = this.bySecret.get(secret);
    if (!byNs) {
      byNs = new Map();
      this.bySecret.set(secret, byNs);
    }
    let res = byNs.get(namespace);
    if (!res) {
      res = checkSecret(secret, namespace);
      byNs.set(namespace, res);
    }
    return res;
  }
}

/**
 * Validates a Secret object as a TLS certificate and returns its SecretModel (named `ns/name`) or
 * the problem.
 *
 * With a memo, each Secret object is checked once (see CertificateMemo).
 */
export function secretToModel(
  secret: KubeObject,
  namespace: string,
  memo?: CertificateMemo,
): CertificateResult {
  return memo ? memo.check(secret, namespace) : checkSecret(secret, namespace);
}

/** Checks a Secret's type, base64 data and key pair; returns its SecretModel or the problem. */
function checkSecret(secret: KubeObject, namespace: string): CertificateResult {
  const name = secretName(namespace, secret.metadata.name);
  const bad = (message: string): CertificateResult => ({
    ok: false,
    reason: Reason.InvalidCertificateRef,
    message: `Secret ${name} ${message}`,
    invalidSecret: name,
  });
  if (secret.type !== SECRET_TYPE_TLS) return bad(`is not of type ${SECRET_TYPE_TLS}`);
  const { crt, key } = secretPems(secret);
  if (!crt) return bad('has no tls.crt');
  if (!key) return bad('has no tls.key');
  // The file provider's parse workers check each Secret as it is loaded (secret-key-pair.ts).
  const check = keyPairCheckedAhead(secret) ?? checkKeyPair(crt, key);
  if (!check.ok) return bad(`is invalid: ${check.error}`);
  const model: SecretModel = { name, certificateChain: crt, privateKey: key };
  if (check.validity) model.validity = check.validity;
  return { ok: true, secret: model };
}

/**
 * Resolves one certificateRef of a listener owned by `owner` to a SecretModel, or to the problem.
 *
 * Group/kind must be core Secret, a cross-namespace Secret needs a ReferenceGrant from the owner's
 * kind, and the Secret must exist and hold a valid key pair. Messages never include Secret contents.
 */
export function resolveCertificateRef(
  view: StoreView,
  owner: ListenerOwner,
  ref: SecretObjectReference,
  memo?: CertificateMemo,
): CertificateResult {
  const group = normalizeGroup(ref.group);
  const kind = ref.kind ?? 'Secret';
  const namespace = ref.namespace ?? owner.namespace;
  const display = `${namespace}/${ref.name}`;
  if (group !== '' || kind !== 'Secret') {
    return {
      ok: false,
      reason: Reason.InvalidCertificateRef,
      message: `certificateRef ${display} has unsupported group/kind ${group || 'core'}/${kind}; only core Secrets are supported`,
    };
  }
  const allowed = isReferenceAllowed(
    view,
    // An XListenerSet is named by its own group in ReferenceGrant `from` (docs/gateway-api.md §29).
    {
      group: owner.kind === XLISTENERSET_KIND ? XLISTENERSET_GROUP : GATEWAY_API_GROUP,
      kind: owner.kind,
      namespace: owner.namespace,
    },
    { group: '', kind: 'Secret', namespace, name: ref.name },
  );
  if (!allowed) {
    return {
      ok: false,
      reason: Reason.RefNotPermitted,
      message: `certificateRef to Secret ${display} is not permitted by any ReferenceGrant`,
    };
  }
  const secret = view.get('Secret', namespace, ref.name);
  if (!secret) {
    return { ok: false, reason: Reason.InvalidCertificateRef, message: `Secret ${display} does not exist` };
  }
  return secretToModel(secret, namespace, memo);
}

export interface ListenerCertificates {
  /** The certificates to serve, in certificateRefs order: valid ones and remembered last good ones. */
  certificates: SecretModel[];
  /** The valid certificates among them. */
  fresh: SecretModel[];
  /** Names of referenced Secrets that exist but are invalid (whether a last good one is served or not). */
  invalid: string[];
  /** Names of the Secrets served in their last good version because the current one is invalid. */
  lastGood: string[];
  /** The first problem in certificateRefs order, if any ref is unusable. */
  problem?: CertificateProblem;
}

/**
 * Resolves all certificateRefs of a listener, keeping the valid ones in order; with `recall`, a
 * Secret that exists but is invalid is served in the last good version `recall` returns for it
 * (LastGoodCertificates), and still reported as the problem.
 */
export function resolveListenerCertificates(
  view: StoreView,
  owner: ListenerOwner,
  refs: SecretObjectReference[] | undefined,
  memo?: CertificateMemo,
  recall?: (secretName: string) => SecretModel | undefined,
): ListenerCertificates {
  const out: ListenerCertificates = { certificates: [], fresh: [], invalid: [], lastGood: [] };
  const seen = new Set<string>();
  const serve = (secret: SecretModel): boolean => {
    if (seen.has(secret.name)) return false;
    seen.add(secret.name);
    out.certificates.push(secret);
    return true;
  };
  for (const ref of refs ?? []) {
    const res = resolveCertificateRef(view, owner, ref, memo);
    if (res.ok) {
      if (serve(res.secret)) out.fresh.push(res.secret);
      continue;
    }
    if (!out.problem) out.problem = { reason: res.reason, message: res.message };
    if (res.invalidSecret === undefined) continue;
    out.invalid.push(res.invalidSecret);
    const remembered = recall?.(res.invalidSecret);
    if (remembered && serve(remembered)) out.lastGood.push(remembered.name);
  }
  return out;
}
