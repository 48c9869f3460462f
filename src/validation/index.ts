/**
 * Object validation for file mode: refuse what a Kubernetes cluster with the Gateway API v1.6.1
 * standard-channel CRDs (and `kubectl apply`'s strict field validation) would refuse, so that
 * file mode and Kubernetes mode accept the same objects.
 *
 * Choice of approach: (a), hand-written TypeScript. The CRD schemas are transcribed as small
 * schema trees in crds/, one file per CRD (interpreted by schema.ts), and every CEL rule is a TypeScript
 * predicate carrying the CRD's own message. Nothing is read from the CRDs at runtime, so the npm
 * package and the Docker image need neither Go nor a copy of the CRDs. Drift is caught by
 * test/validation/crd-parity.test.ts, which walks the real CRDs side by side with these schemas
 * whenever they are available locally (CONVOY_CRD_DIR, the e2e cache, or the Go module cache).
 *
 * Semantics, as kube-apiserver applies them: null fields are dropped and CRD defaults applied
 * before checking (on a copy: the object itself is not changed), the structural schema is checked,
 * then the CEL rules. Cross-object checks (conflicts, references) are not validation; the gateway
 * model reports them in status.
 *
 * Every message starts with the field path, e.g. `spec.listeners[2].hostname: …`. For CEL rules
 * over a list the path names the offending element where that can be known (kube-apiserver names
 * the list: `spec.listeners`, which is a prefix of ours).
 */
import type { KubeObject } from '../store/objects';
import { CLUSTER_SCOPED_KINDS, GATEWAY_GROUP } from '../store/objects';
import {
  validateConfigMap,
  validateEndpointSlice,
  validateMetadata,
  validateNamespace,
  validateSecret,
  validateService,
  unknownFields,
  type NameRule,
} from './core';
import { GATEWAY_KIND_SCHEMAS } from './crds/kinds';
import { isPlainObject, validateWithSchema } from './schema';
import type { SchemaNode } from './schema';
import { envoyFleetSpec } from './crds/envoyfleet';
import { listenerPortRangeSpec } from './crds/listenerportrange';
import {
  FLEET_PARAMETERS_GROUP,
  FLEET_PARAMETERS_KIND,
  FLEET_PARAMETERS_VERSION,
  PORT_RANGE_KIND,
} from '../store/objects';
import { XLISTENERSET_GROUP, XLISTENERSET_KIND, XLISTENERSET_VERSION } from '../store/objects';
import { xListenerSetSpec } from './crds/xlistenerset';

export { GATEWAY_KIND_SCHEMAS } from './crds/kinds';

/**
 * Kinds of other groups, validated like the Gateway API kinds: Convoy's own CRDs
 * (docs/architecture.md §13) and the legacy XListenerSet (docs/gateway-api.md §29).
 */
const CONVOY_KIND_SCHEMAS: Record<string, { group: string; versions: string[]; spec: SchemaNode }> = {
  [FLEET_PARAMETERS_KIND]: {
    group: FLEET_PARAMETERS_GROUP,
    versions: [FLEET_PARAMETERS_VERSION],
    spec: envoyFleetSpec,
  },
  [PORT_RANGE_KIND]: {
    group: FLEET_PARAMETERS_GROUP,
    versions: [FLEET_PARAMETERS_VERSION],
    spec: listenerPortRangeSpec,
  },
  [XLISTENERSET_KIND]: {
    group: XLISTENERSET_GROUP,
    versions: [XLISTENERSET_VERSION],
    spec: xListenerSetSpec,
  },
};

interface CoreKind {
  apiVersions: string[];
  nameRule: NameRule;
  validate: (o: Record<string, unknown>) => string[];
}

const CORE_KINDS: Record<string, CoreKind> = {
  Secret: { apiVersions: ['v1'], nameRule: 'subdomain', validate: validateSecret },
  ConfigMap: { apiVersions: ['v1'], nameRule: 'subdomain', validate: validateConfigMap },
  Service: { apiVersions: ['v1'], nameRule: 'dns1035', validate: validateService },
  EndpointSlice: {
    apiVersions: ['discovery.k8s.io/v1'],
    nameRule: 'subdomain',
    validate: validateEndpointSlice,
  },
  Namespace: { apiVersions: ['v1'], nameRule: 'label', validate: validateNamespace },
};

/** The apiVersions a v1.6.1 standard-channel cluster serves for a kind Convoy reads. */
export function servedApiVersions(kind: string): string[] {
  const g = GATEWAY_KIND_SCHEMAS[kind];
  if (g) return g.versions.map((v) => `${GATEWAY_GROUP}/${v}`);
  const c = CONVOY_KIND_SCHEMAS[kind];
  if (c) return c.versions.map((v) => `${c.group}/${v}`);
  return CORE_KINDS[kind]?.apiVersions ?? [];
}

/**
 * The API group a kind Convoy reads belongs to ("" for core), or undefined for other kinds.
 * Objects of the same kind name in another group (an Istio `networking.istio.io` Gateway) are
 * different kinds and not Convoy's to read.
 */
export function apiGroupOf(kind: string): string | undefined {
  if (GATEWAY_KIND_SCHEMAS[kind]) return GATEWAY_GROUP;
  if (CONVOY_KIND_SCHEMAS[kind]) return CONVOY_KIND_SCHEMAS[kind].group;
  const v = CORE_KINDS[kind]?.apiVersions[0];
  if (v === undefined) return undefined;
  return v.includes('/') ? v.slice(0, v.indexOf('/')) : '';
}

/** The group part of an apiVersion ("" for the core group's "v1"). */
export function groupOfApiVersion(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
}

/** Validates one object. Returns the problems, each starting with its field path; [] = valid. */
export function validateObject(obj: KubeObject): string[] {
  try {
    return validate(obj as unknown);
  } catch (err) {
    // Validation must never crash the provider; an object we cannot check is not served.
    return [`object could not be validated: ${(err as Error).message}`];
  }
}

function validate(o: unknown): string[] {
  if (!isPlainObject(o)) return ['object: Invalid value: must be an object'];
  const errors: string[] = [];
  const kind = o.kind;
  if (typeof kind !== 'string' || kind === '') return ["kind: Required value: Object 'Kind' is missing"];
  const gatewayKind = GATEWAY_KIND_SCHEMAS[kind] ?? CONVOY_KIND_SCHEMAS[kind];
  const coreKind = CORE_KINDS[kind];
  if (!gatewayKind && !coreKind)
    return [`kind: Unsupported value: ${JSON.stringify(kind)}: not a kind Convoy reads`];

  const served = servedApiVersions(kind);
  if (typeof o.apiVersion !== 'string' || o.apiVersion === '') {
    errors.push("apiVersion: Required value: Object 'apiVersion' is missing");
  } else if (!served.includes(o.apiVersion)) {
    errors.push(
      `apiVersion: Unsupported value: ${JSON.stringify(o.apiVersion)}: no matches for kind "${kind}" in version ` +
        `"${o.apiVersion}" (served: ${served.join(', ')})`,
    );
  }

  const nameRule = coreKind?.nameRule ?? 'subdomain';
  errors.push(...validateMetadata(o.metadata, !CLUSTER_SCOPED_KINDS.has(kind), nameRule));

  if (coreKind) {
    errors.push(...coreKind.validate(o));
    return errors;
  }
  errors.push(...unknownFields(o, ['apiVersion', 'kind', 'metadata', 'spec', 'status']));
  if (o.spec === undefined || o.spec === null) errors.push('spec: Required value');
  else errors.push(...validateWithSchema(gatewayKind.spec, o.spec, 'spec'));
  return errors;
}
