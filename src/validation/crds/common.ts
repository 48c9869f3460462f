/**
 * Building blocks shared by the Gateway API v1.6.1 standard-channel CRD schemas: the CRDs' own
 * patterns (verbatim), the reference and name field shapes they repeat, and the helpers CEL list
 * rules are written with.
 */
import { arr, int, map, obj, str } from '../schema';

// Patterns, verbatim from the CRDs.

export const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
export const HOSTNAME = '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
export const GROUP = '^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
export const KIND = '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$';
export const NAMESPACE = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
export const HEADER_NAME = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$";
export const DURATION = '^([0-9]{1,5}(h|m|s|ms)){1,4}$';
export const CONTROLLER_NAME =
  "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$";
export const PROTOCOL =
  '^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9]+$';
export const ADDRESS_TYPE =
  "^Hostname|IPAddress|NamedAddress|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$";
export const LABEL_VALUE = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';
export const CORS_ORIGIN =
  '(^\\*$)|(^(http(s)?):\\/\\/(((\\*\\.)?([a-zA-Z0-9\\-]+\\.)*[a-zA-Z0-9-]+|\\*)(:([0-9]{1,5}))?)$)';
/** Used inside CEL rules (not as schema patterns). */
export const QUALIFIED_KEY_RE =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$/;
export const RFC1123_RE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$/;
export const HOSTNAME_RE = new RegExp(HOSTNAME);
export const PATH_CHARS_RE = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$/;
export const GRPC_SERVICE_RE = /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i;
export const GRPC_METHOD_RE = /^[A-Za-z_][A-Za-z_0-9]*$/;

export type Obj = Record<string, unknown>;
export const has = (o: Obj, k: string): boolean => o[k] !== undefined && o[k] !== null;
/** Indexes (as `[i]`) of the elements failing a per-element predicate. */
export function failing<T>(list: T[], ok: (item: T, i: number) => boolean): string[] {
  const out: string[] = [];
  list.forEach((item, i) => {
    if (!ok(item, i)) out.push(`[${i}]`);
  });
  return out;
}
/** CEL `self.all(x, self.exists_one(y, same(x, y)))`: the later duplicates are reported. */
export function uniqueBy<T>(list: T[], same: (a: T, b: T) => boolean): string[] {
  return failing(list, (a) => list.filter((b) => same(a, b)).length === 1);
}

export const group = (dflt?: string) =>
  str({ maxLength: 253, pattern: GROUP, ...(dflt !== undefined ? { default: dflt } : {}) });
export const kind = (dflt?: string) =>
  str({ minLength: 1, maxLength: 63, pattern: KIND, ...(dflt !== undefined ? { default: dflt } : {}) });
export const objectName = () => str({ minLength: 1, maxLength: 253 });
export const namespace = () => str({ minLength: 1, maxLength: 63, pattern: NAMESPACE });
export const port = () => int({ format: 'int32', minimum: 1, maximum: 65535 });
export const sectionName = () => str({ minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN });
export const hostname = () => str({ minLength: 1, maxLength: 253, pattern: HOSTNAME });
export const preciseHostname = () => str({ minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN });

export const labelSelector = () =>
  obj({
    matchExpressions: arr(
      obj({ key: str(), operator: str(), values: arr(str()) }, { required: ['key', 'operator'] }),
    ),
    matchLabels: map(str()),
  });

/** LocalObjectReference / ParametersReference style refs with all three fields required. */
export const localRef = () =>
  obj({ group: group(), kind: kind(), name: objectName() }, { required: ['group', 'kind', 'name'] });

export const secretRef = () =>
  obj(
    { group: group(''), kind: kind('Secret'), name: objectName(), namespace: namespace() },
    { required: ['name'] },
  );

export const caCertificateRefs = () =>
  arr(
    obj(
      { group: group(), kind: kind(), name: objectName(), namespace: namespace() },
      { required: ['group', 'kind', 'name'] },
    ),
    { minItems: 1, maxItems: 16 },
  );
