/**
 * Resolves BackendTLSPolicies (docs/gateway-api.md §24): which Service ports Envoy reaches over
 * TLS, with which SNI, trusted CAs and subject alternative names, and each policy's verdict
 * (Accepted, ResolvedRefs) before its ancestors are known.
 *
 * Pure: reads the store view only. ConfigMap contents are parsed once per ConfigMap object.
 */
import { X509Certificate } from 'node:crypto';
import type { KubeObject } from '../store/objects';
import { namespacedName, objectNamespace } from '../store/objects';
import type { UpstreamTlsModel } from '../model/fleet';
import type { StoreView } from './resolved';
import { normalizeGroup } from './api';
import { Reason } from '../status/conditions';
import { compareStrings } from '../util/compare';
import { pemBlocks } from '../pki/keypair';

/** The key of a ConfigMap that holds a CA bundle (the spec's core support). */
export const CA_CERTIFICATE_KEY = 'ca.crt';

/** BackendTLSPolicy reasons of Gateway API v1.6.1 that status/conditions.ts does not list. */
export const PolicyReason = {
  Conflicted: 'Conflicted',
  NoValidCACertificate: 'NoValidCACertificate',
  InvalidCACertificateRef: 'InvalidCACertificateRef',
  InvalidKind: 'InvalidKind',
} as const;

export interface BackendTLSPolicySpec {
  targetRefs?: { group?: string; kind?: string; name?: string; sectionName?: string }[];
  validation?: {
    caCertificateRefs?: { group?: string; kind?: string; name?: string }[];
    wellKnownCACertificates?: string;
    hostname?: string;
    subjectAltNames?: { type?: string; hostname?: string; uri?: string }[];
  };
}

/** A condition verdict: status, reason and message. */
export interface Verdict {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** One BackendTLSPolicy after resolution. */
export interface ResolvedBackendTlsPolicy {
  object: KubeObject;
  /** `namespace/name`. */
  key: string;
  accepted: Verdict;
  resolvedRefs: Verdict;
  /** What Envoy does for the Service ports it wins (refuse when no CA is usable). */
  tls: Omit<UpstreamTlsModel, 'clientCertificate'>;
  /** The Service targets it names, as `namespace/service` with the sectionName ('' for all ports). */
  targets: { service: string; sectionName: string }[];
}

/**
 * Holds every BackendTLSPolicy of a build, and which one applies to each Service port after
 * conflict resolution.
 */
export class BackendTlsIndex {
  /** Winner per `namespace/service#sectionName` ('' section: the whole Service). */
  private readonly winners = new Map<string, ResolvedBackendTlsPolicy>();

  constructor(readonly policies: readonly ResolvedBackendTlsPolicy[]) {
    // Precedence (the spec's): older creationTimestamp first, then namespace/name.
    const ordered = [...policies].sort(comparePrecedence);
    for (const p of ordered) {
      let lost = false;
      for (const t of p.targets) {
        const key = `${t.service}#${t.sectionName}`;
        const winner = this.winners.get(key);
        if (winner && winner !== p) lost = true;
        else this.winners.set(key, p);
      }
      if (lost) {
        p.accepted = {
          status: 'False',
          reason: PolicyReason.Conflicted,
          message: 'another BackendTLSPolicy with precedence targets the same Service port',
        };
      }
    }
    // A policy that lost one of its targets is not accepted at all: drop it where it won.
    for (const [key, p] of [...this.winners])
      if (p.accepted.reason === PolicyReason.Conflicted) this.winners.delete(key);
  }

  /** Returns the policy that applies to a Service port: one naming the port's name, else the Service. */
  forPort(namespace: string, service: string, portName: string): ResolvedBackendTlsPolicy | undefined {
    const svc = namespacedName(namespace, service);
    return (portName ? this.winners.get(`${svc}#${portName}`) : undefined) ?? this.winners.get(`${svc}#`);
  }

  /** Returns every policy (winner or not) whose targets name this Service port: its status ancestors. */
  targeting(namespace: string, service: string, portName: string): ResolvedBackendTlsPolicy[] {
    const svc = namespacedName(namespace, service);
    return this.policies.filter((p) =>
      p.targets.some((t) => t.service === svc && (t.sectionName === '' || t.sectionName === portName)),
    );
  }

  /**
   * Returns a string equal for indexes with the same winning Service ports: route compilation reads
   * only that (whether a port with a TLS appProtocol has a policy), so the route memo keys on it.
   */
  get fingerprint(): string {
    return [...this.winners.keys()].sort(compareStrings).join(',');
  }

  /** Whether the build has no policy at all (the fast paths of incremental/ then stay available). */
  get empty(): boolean {
    return this.policies.length === 0;
  }
}

/** Orders policies by the spec's precedence: creationTimestamp, then `namespace/name`. */
function comparePrecedence(a: ResolvedBackendTlsPolicy, b: ResolvedBackendTlsPolicy): number {
  return (
    compareStrings(a.object.metadata.creationTimestamp ?? '', b.object.metadata.creationTimestamp ?? '') ||
    compareStrings(a.key, b.key)
  );
}

/** Parsed CA bundles per ConfigMap object (store objects are immutable, so the result is final). */
const caMemo = new WeakMap<KubeObject, CaBundle>();

type CaBundle = { ok: true; pem: string } | { ok: false; message: string };

/** Parses the `ca.crt` of a ConfigMap: every PEM certificate block must parse, and there must be one. */
export function configMapCaBundle(cm: KubeObject): CaBundle {
  const cached = caMemo.get(cm);
  if (cached) return cached;
  const data = cm.data?.[CA_CERTIFICATE_KEY];
  let result: CaBundle;
  if (typeof data !== 'string' || data.trim() === '') {
    result = { ok: false, message: `has no ${CA_CERTIFICATE_KEY}` };
  } else {
    const blocks = pemBlocks(data, 'CERTIFICATE');
    try {
      for (const b of blocks) new X509Certificate(b);
      result =
        blocks.length === 0
          ? { ok: false, message: `${CA_CERTIFICATE_KEY} holds no PEM certificate` }
          : { ok: true, pem: blocks.map((b) => `${b}\n`).join('') };
    } catch {
      result = { ok: false, message: `${CA_CERTIFICATE_KEY} holds a certificate that does not parse` };
    }
  }
  caMemo.set(cm, result);
  return result;
}

/** Resolves every BackendTLSPolicy of the view, with conflict resolution. */
export function resolveBackendTlsPolicies(view: StoreView): BackendTlsIndex {
  return new BackendTlsIndex(view.list('BackendTLSPolicy').map((p) => resolvePolicy(view, p)));
}

/**
 * Resolves one policy: its Service targets, its CA references (InvalidKind, InvalidCACertificateRef)
 * and its verdicts; a policy without a usable CA refuses connections (NoValidCACertificate).
 */
export function resolvePolicy(view: StoreView, obj: KubeObject): ResolvedBackendTlsPolicy {
  const ns = objectNamespace(obj);
  const spec = (obj.spec ?? {}) as BackendTLSPolicySpec;
  const v = spec.validation ?? {};
  const hostname = typeof v.hostname === 'string' ? v.hostname : '';
  const targets = (spec.targetRefs ?? [])
    .filter((t) => normalizeGroup(t.group) === '' && t.kind === 'Service' && typeof t.name === 'string')
    .map((t) => ({ service: namespacedName(ns, t.name!), sectionName: t.sectionName ?? '' }));
  const sans = (v.subjectAltNames ?? []).flatMap((s): UpstreamTlsModel['subjectAltNames'] => {
    if (s.type === 'Hostname' && s.hostname) return [{ type: 'DNS', value: s.hostname }];
    if (s.type === 'URI' && s.uri) return [{ type: 'URI', value: s.uri }];
    return [];
  });
  const tls: ResolvedBackendTlsPolicy['tls'] = {
    policy: namespacedName(ns, obj.metadata.name),
    sni: hostname,
    // The hostname authenticates the backend unless subjectAltNames are given.
    subjectAltNames: sans.length > 0 ? sans : [{ type: 'DNS', value: hostname }],
  };
  const ok: Verdict = {
    status: 'True',
    reason: Reason.ResolvedRefs,
    message: 'every CA certificate reference resolved',
  };
  const base = { object: obj, key: tls.policy, targets };
  if (v.wellKnownCACertificates) {
    // Envoy refuses SAN verification against its system_root_certs (no trusted CA), and a bundle
    // path differs per host: well-known CA sets are not supported, as the spec allows (Invalid).
    return {
      ...base,
      accepted: {
        status: 'False',
        reason: Reason.Invalid,
        message: `wellKnownCACertificates ${v.wellKnownCACertificates} is not supported; name a CA ConfigMap in caCertificateRefs`,
      },
      resolvedRefs: ok,
      tls: { ...tls, refuse: true },
    };
  }
  const bundles: string[] = [];
  let problem: Verdict | undefined;
  for (const ref of v.caCertificateRefs ?? []) {
    const group = normalizeGroup(ref.group);
    const display = `${group ? `${group}/` : ''}${ref.kind ?? ''} ${ns}/${ref.name ?? ''}`;
    if (group !== '' || ref.kind !== 'ConfigMap') {
      problem ??= {
        status: 'False',
        reason: PolicyReason.InvalidKind,
        message: `caCertificateRef ${display}: unsupported kind (only core ConfigMap)`,
      };
      continue;
    }
    const cm = typeof ref.name === 'string' ? view.get('ConfigMap', ns, ref.name) : undefined;
    const bundle: CaBundle = cm ? configMapCaBundle(cm) : { ok: false, message: 'does not exist' };
    if (!bundle.ok) {
      problem ??= {
        status: 'False',
        reason: PolicyReason.InvalidCACertificateRef,
        message: `caCertificateRef ${display} ${bundle.message}`,
      };
      continue;
    }
    bundles.push(bundle.pem);
  }
  if (bundles.length === 0) {
    return {
      ...base,
      accepted: {
        status: 'False',
        reason: PolicyReason.NoValidCACertificate,
        message: 'no caCertificateRef is usable; connections to the targeted backends fail',
      },
      resolvedRefs: problem ?? ok,
      tls: { ...tls, refuse: true },
    };
  }
  return {
    ...base,
    accepted: acceptedVerdict(),
    resolvedRefs: problem ?? ok,
    tls: { ...tls, caBundle: bundles.join('') },
  };
}

/** Returns the Accepted verdict of a usable, unconflicted policy. */
function acceptedVerdict(): Verdict {
  return { status: 'True', reason: Reason.Accepted, message: 'the policy is accepted' };
}
