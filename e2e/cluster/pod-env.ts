/**
 * Resolves a container's environment the way the kubelet does: `envFrom` first (ConfigMap and
 * Secret keys with an optional prefix), then `env` in order, each `value` expanded with
 * `$(NAME)` references to variables defined before it, `valueFrom` read from the pod
 * (downward API fieldRef), a ConfigMap or a Secret. Pure: the objects are passed in, so the
 * rules are unit-tested without an API server.
 */

export interface PodLike {
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: { nodeName?: string; serviceAccountName?: string };
  status?: { podIP?: string; hostIP?: string; podIPs?: { ip: string }[] };
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
  };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name: string; optional?: boolean };
  secretRef?: { name: string; optional?: boolean };
}

/** The data of the pod namespace's ConfigMaps and Secrets (Secret values already base64-decoded). */
export interface EnvSources {
  configMap(name: string): Record<string, string> | undefined;
  secret(name: string): Record<string, string> | undefined;
}

/** A reference the pod needs that does not exist (the kubelet's CreateContainerConfigError). */
export class MissingReferenceError extends Error {}

/** Expands `$(NAME)` from `vars`; `$$(NAME)` stays literal `$(NAME)`; unknown names stay as written. */
export function expandReferences(text: string, vars: ReadonlyMap<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (whole, name: string | undefined) => {
    if (whole === '$$') return '$';
    return name !== undefined && vars.has(name) ? vars.get(name)! : whole;
  });
}

/** The value of a downward-API fieldPath, or throws for one the kubelet would not accept. */
export function fieldRefValue(pod: PodLike, fieldPath: string): string {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (m) return (m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[m[2]] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata.name;
    case 'metadata.namespace':
      return pod.metadata.namespace;
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'spec.nodeName':
      return pod.spec.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? '';
    case 'status.podIP':
      return pod.status?.podIP ?? '';
    case 'status.podIPs':
      return (pod.status?.podIPs ?? []).map((p) => p.ip).join(',');
    case 'status.hostIP':
    case 'status.hostIPs':
      return pod.status?.hostIP ?? '';
    default:
      throw new MissingReferenceError(`unsupported fieldRef ${fieldPath}`);
  }
}

/** Resolves `envFrom` then `env` into the variables the container process gets, in order. */
export function resolveEnv(
  pod: PodLike,
  env: readonly EnvVar[] | undefined,
  envFrom: readonly EnvFromSource[] | undefined,
  sources: EnvSources,
): Map<string, string> {
  const vars = new Map<string, string>();
  for (const from of envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const data = from.configMapRef ? sources.configMap(ref.name) : sources.secret(ref.name);
    if (!data) {
      if (ref.optional) continue;
      throw new MissingReferenceError(
        `${from.configMapRef ? 'configmap' : 'secret'} "${ref.name}" not found`,
      );
    }
    for (const [k, v] of Object.entries(data)) vars.set(`${from.prefix ?? ''}${k}`, v);
  }
  for (const e of env ?? []) {
    const from = e.valueFrom;
    if (!from) {
      vars.set(e.name, expandReferences(e.value ?? '', vars));
      continue;
    }
    if (from.fieldRef) {
      vars.set(e.name, fieldRefValue(pod, from.fieldRef.fieldPath));
      continue;
    }
    const keyRef = from.configMapKeyRef ?? from.secretKeyRef;
    if (!keyRef) continue; // resourceFieldRef: no resources are modelled here
    const what = from.configMapKeyRef ? 'configmap' : 'secret';
    const data = from.configMapKeyRef ? sources.configMap(keyRef.name) : sources.secret(keyRef.name);
    const value = data?.[keyRef.key];
    if (value === undefined) {
      if (keyRef.optional) continue;
      throw new MissingReferenceError(
        data
          ? `key "${keyRef.key}" not found in ${what} "${keyRef.name}"`
          : `${what} "${keyRef.name}" not found`,
      );
    }
    vars.set(e.name, value);
  }
  return vars;
}
