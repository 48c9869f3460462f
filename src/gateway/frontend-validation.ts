/**
 * Resolves a Gateway's client certificate validation (spec.tls.frontend): for each port, the
 * configuration that applies (its perPort entry, else the default), its CA bundle built from the
 * caCertificateRefs that are usable, and the problem of the first one that is not
 * (docs/gateway-api.md §25).
 *
 * Every HTTPS listener on the port, the Gateway's own and its ListenerSets' alike, gets what this
 * returns for its port; listener-validation.ts turns a problem into its conditions.
 */
import type { KubeObject } from '../store/objects';
import { objectNamespace } from '../store/objects';
import type { CaBundleModel } from '../model/fleet';
import { clientCaBundleName } from '../model/names';
import type { StoreView } from './resolved';
import type { CACertificateReference, FrontendTLSConfig, FrontendValidationMode } from './api';
import { GATEWAY_API_GROUP, gatewaySpec, normalizeGroup } from './api';
import { Reason } from '../status/conditions';
import { isReferenceAllowed } from './referencegrants';
import { checkCaBundle } from '../pki/ca-bundle';

/** The key of a ConfigMap that holds the CA bundle (Gateway API core support). */
export const CA_BUNDLE_KEY = 'ca.crt';

export type CaRefProblem = {
  reason:
    | typeof Reason.InvalidCACertificateRef
    | typeof Reason.InvalidCACertificateKind
    | typeof Reason.RefNotPermitted;
  message: string;
};

/** The client certificate validation of the HTTPS listeners of one port. */
export interface PortClientValidation {
  mode: FrontendValidationMode;
  /** The usable CA certificates; absent when no caCertificateRef is usable (NoValidCACertificate). */
  bundle?: CaBundleModel;
  /** The problem of the first unusable caCertificateRef, if any. */
  problem?: CaRefProblem;
}

/** A Gateway's frontend validation, by port. */
export interface FrontendValidation {
  /** Returns the validation of the HTTPS listeners on `port`; undefined when none applies. */
  forPort(port: number): PortClientValidation | undefined;
  /** Some configuration (default or per port) is AllowInsecureFallback. */
  insecureFallback: boolean;
}

/** What a Gateway without spec.tls.frontend gets: no validation on any port. */
export const NO_FRONTEND_VALIDATION: FrontendValidation = {
  forPort: () => undefined,
  insecureFallback: false,
};

/**
 * Resolves the spec.tls.frontend of Gateway `gw` against the store view.
 *
 * Each configuration (the default, each perPort entry) is resolved at most once, when a port first
 * asks for it, and shared by every listener of its ports.
 */
export function resolveFrontendValidation(view: StoreView, gw: KubeObject): FrontendValidation {
  const frontend = gatewaySpec(gw).tls?.frontend;
  if (!frontend || (!frontend.default?.validation && !frontend.perPort?.length))
    return NO_FRONTEND_VALIDATION;
  const namespace = objectNamespace(gw);
  const perPort = new Map<number, FrontendTLSConfig>();
  for (const p of frontend.perPort ?? []) if (!perPort.has(p.port)) perPort.set(p.port, p.tls);
  const resolved = new Map<number | 'default', PortClientValidation | undefined>();
  const resolve = (key: number | 'default', config: FrontendTLSConfig | undefined) => {
    if (!resolved.has(key)) {
      const validation = config?.validation;
      resolved.set(
        key,
        validation
          ? resolveConfiguration(
              view,
              namespace,
              clientCaBundleName(namespace, gw.metadata.name, key),
              validation,
            )
          : undefined,
      );
    }
    return resolved.get(key);
  };
  const configs = [frontend.default, ...(frontend.perPort ?? []).map((p) => p.tls)];
  return {
    forPort: (port) =>
      perPort.has(port) ? resolve(port, perPort.get(port)) : resolve('default', frontend.default),
    insecureFallback: configs.some((c) => c?.validation?.mode === 'AllowInsecureFallback'),
  };
}

/** Resolves one validation configuration to its mode, bundle (named `name`) and first problem. */
function resolveConfiguration(
  view: StoreView,
  gatewayNamespace: string,
  name: string,
  validation: NonNullable<FrontendTLSConfig['validation']>,
): PortClientValidation {
  const mode: FrontendValidationMode =
    validation.mode === 'AllowInsecureFallback' ? 'AllowInsecureFallback' : 'AllowValidOnly';
  const certificates: string[] = [];
  let problem: CaRefProblem | undefined;
  const refs = validation.caCertificateRefs ?? [];
  for (const ref of refs) {
    const res = resolveCaCertificateRef(view, gatewayNamespace, ref);
    if ('problem' in res) problem ??= res.problem;
    else for (const pem of res.certificates) if (!certificates.includes(pem)) certificates.push(pem);
  }
  if (refs.length === 0) {
    problem = { reason: Reason.InvalidCACertificateRef, message: 'caCertificateRefs is empty' };
  }
  const out: PortClientValidation = { mode };
  if (certificates.length > 0) out.bundle = { name, caCertificates: certificates.join('\n') + '\n' };
  if (problem) out.problem = problem;
  return out;
}

/**
 * Resolves one caCertificateRef of a Gateway in `gatewayNamespace` to its PEM certificates, or to
 * its problem: the kind must be a core ConfigMap, a reference to another namespace needs a
 * ReferenceGrant, and the ConfigMap must hold at least one certificate under `ca.crt`, every one
 * of which parses. Messages name the reference, never the content.
 */
export function resolveCaCertificateRef(
  view: StoreView,
  gatewayNamespace: string,
  ref: CACertificateReference,
): { certificates: string[] } | { problem: CaRefProblem } {
  const group = normalizeGroup(ref.group);
  const namespace = ref.namespace ?? gatewayNamespace;
  const display = `${namespace}/${ref.name}`;
  if (group !== '' || ref.kind !== 'ConfigMap') {
    return {
      problem: {
        reason: Reason.InvalidCACertificateKind,
        message: `caCertificateRef ${display} has unsupported group/kind ${group || 'core'}/${ref.kind}; only core ConfigMaps (key ${CA_BUNDLE_KEY}) are supported`,
      },
    };
  }
  const allowed = isReferenceAllowed(
    view,
    { group: GATEWAY_API_GROUP, kind: 'Gateway', namespace: gatewayNamespace },
    { group: '', kind: 'ConfigMap', namespace, name: ref.name },
  );
  if (!allowed) {
    return {
      problem: {
        reason: Reason.RefNotPermitted,
        message: `caCertificateRef to ConfigMap ${display} is not permitted by any ReferenceGrant`,
      },
    };
  }
  const invalid = (message: string) => ({
    problem: { reason: Reason.InvalidCACertificateRef, message: `ConfigMap ${display} ${message}` },
  });
  const configMap = view.get('ConfigMap', namespace, ref.name);
  if (!configMap) return invalid('does not exist');
  const bundle = configMap.data?.[CA_BUNDLE_KEY];
  if (typeof bundle !== 'string') return invalid(`has no ${CA_BUNDLE_KEY}`);
  const check = checkCaBundle(bundle);
  if (!check.ok) return invalid(`${CA_BUNDLE_KEY} ${check.error}`);
  return { certificates: check.certificates };
}
