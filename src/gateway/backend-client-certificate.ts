/**
 * Resolves a Gateway's backend client certificate (spec.tls.backend.clientCertificateRef): the
 * certificate its Envoys present to backends they reach over TLS (docs/gateway-api.md §24).
 */
import type { KubeObject } from '../store/objects';
import { objectNamespace } from '../store/objects';
import type { SecretModel } from '../model/fleet';
import type { StoreView } from './resolved';
import type { SecretObjectReference } from './api';
import type { CertificateMemo } from './certificates';
import { resolveCertificateRef } from './certificates';
import { Reason } from '../status/conditions';

/** Gateway reasons of Gateway API v1.6.1 for spec.tls references. */
export const GatewayTlsReason = {
  InvalidClientCertificateRef: 'InvalidClientCertificateRef',
} as const;

/** What a Gateway's backend client certificate resolved to; undefined when it names none. */
export type BackendClientCertificate =
  { ok: true; secret: SecretModel } | { ok: false; reason: string; message: string };

/** Returns a Gateway's spec.tls.backend.clientCertificateRef, if it sets one. */
export function backendClientCertificateRef(gw: KubeObject): SecretObjectReference | undefined {
  const tls = (gw.spec as { tls?: { backend?: { clientCertificateRef?: unknown } } } | undefined)?.tls;
  const ref = tls?.backend?.clientCertificateRef;
  return ref && typeof ref === 'object' ? (ref as SecretObjectReference) : undefined;
}

/**
 * Resolves the backend client certificate of a Gateway like a listener certificate (core Secret of
 * type kubernetes.io/tls, a ReferenceGrant across namespaces, a valid key pair), reporting the
 * spec's Gateway reasons: RefNotPermitted, else InvalidClientCertificateRef.
 */
export function resolveBackendClientCertificate(
  view: StoreView,
  gw: KubeObject,
  memo?: CertificateMemo,
): BackendClientCertificate | undefined {
  const ref = backendClientCertificateRef(gw);
  if (!ref) return undefined;
  const owner = { kind: 'Gateway' as const, namespace: objectNamespace(gw), name: gw.metadata.name };
  const res = resolveCertificateRef(view, owner, ref, memo);
  if (res.ok) return { ok: true, secret: res.secret };
  const reason =
    res.reason === Reason.RefNotPermitted
      ? Reason.RefNotPermitted
      : GatewayTlsReason.InvalidClientCertificateRef;
  return { ok: false, reason, message: `spec.tls.backend.clientCertificateRef: ${res.message}` };
}
