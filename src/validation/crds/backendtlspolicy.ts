/**
 * The BackendTLSPolicy CRD's `spec` (v1.6.1 standard channel, v1), with its CEL rules.
 */
import type { ObjectNode } from '../schema';
import { arr, map, obj, rule, str, withRules } from '../schema';
import type { Obj } from './common';
import { HOSTNAME, failing, group, has, kind, objectName, preciseHostname, sectionName } from './common';

interface TargetRef {
  group: string;
  kind: string;
  name: string;
  sectionName?: string;
}

/** Whether two targetRefs name the same object (group, kind, name). */
const sameTarget = (a: TargetRef, b: TargetRef) =>
  a.group === b.group && a.kind === b.kind && a.name === b.name;
/** Whether a targetRef has no sectionName (unset or empty). */
const noSection = (t: TargetRef) => !t.sectionName;

const targetRefs = withRules(
  arr(
    obj(
      { group: group(), kind: kind(), name: objectName(), sectionName: sectionName() },
      { required: ['group', 'kind', 'name'] },
    ),
    { minItems: 1, maxItems: 16 },
  ),
  // self.all(p1, self.all(p2, same(p1, p2) ? noSection(p1) == noSection(p2) : true))
  rule<TargetRef[]>(
    'sectionName must be specified when targetRefs includes 2 or more references to the same target',
    (ts) => failing(ts, (a) => ts.every((b) => !sameTarget(a, b) || noSection(a) === noSection(b))),
  ),
  // self.all(p1, self.exists_one(p2, same(p1, p2) && (both without section || same section)))
  rule<TargetRef[]>(
    'sectionName must be unique when targetRefs includes 2 or more references to the same target',
    (ts) =>
      failing(
        ts,
        (a) =>
          ts.filter(
            (b) =>
              sameTarget(a, b) &&
              ((noSection(a) && noSection(b)) ||
                (!!a.sectionName && !!b.sectionName && a.sectionName === b.sectionName)),
          ).length === 1,
      ),
  ),
);

const subjectAltName = withRules(
  obj(
    {
      hostname: str({ minLength: 1, maxLength: 253, pattern: HOSTNAME }),
      type: str({ enum: ['Hostname', 'URI'] }),
      uri: str({
        minLength: 1,
        maxLength: 253,
        pattern: '^(([^:/?#]+):)(//([^/?#]*))([^?#]*)(\\?([^#]*))?(#(.*))?',
      }),
    },
    { required: ['type'] },
  ),
  rule<Obj>(
    'SubjectAltName element must contain Hostname, if Type is set to Hostname',
    (s) => !(s.type === 'Hostname' && (!has(s, 'hostname') || s.hostname === '')),
  ),
  rule<Obj>(
    'SubjectAltName element must not contain Hostname, if Type is not set to Hostname',
    (s) => !(s.type !== 'Hostname' && has(s, 'hostname') && s.hostname !== ''),
  ),
  rule<Obj>(
    'SubjectAltName element must contain URI, if Type is set to URI',
    (s) => !(s.type === 'URI' && (!has(s, 'uri') || s.uri === '')),
  ),
  rule<Obj>(
    'SubjectAltName element must not contain URI, if Type is not set to URI',
    (s) => !(s.type !== 'URI' && has(s, 'uri') && s.uri !== ''),
  ),
);

const WELL_KNOWN_CA =
  '^(System|([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]))$';

/** Whether a validation names CA certificate references (a non-empty list). */
const hasCaRefs = (v: Obj) => Array.isArray(v.caCertificateRefs) && v.caCertificateRefs.length > 0;
/** Whether a validation names well-known CA certificates (non-empty). */
const hasWellKnown = (v: Obj) => has(v, 'wellKnownCACertificates') && v.wellKnownCACertificates !== '';

const validation = withRules(
  obj(
    {
      caCertificateRefs: arr(
        obj({ group: group(), kind: kind(), name: objectName() }, { required: ['group', 'kind', 'name'] }),
        { maxItems: 8 },
      ),
      hostname: preciseHostname(),
      subjectAltNames: arr(subjectAltName, { maxItems: 5 }),
      wellKnownCACertificates: str({ minLength: 1, maxLength: 253, pattern: WELL_KNOWN_CA }),
    },
    { required: ['hostname'] },
  ),
  rule<Obj>(
    'must not contain both CACertificateRefs and WellKnownCACertificates',
    (v) => !(hasCaRefs(v) && hasWellKnown(v)),
  ),
  rule<Obj>(
    'must specify either CACertificateRefs or WellKnownCACertificates',
    (v) => hasCaRefs(v) || hasWellKnown(v),
  ),
);

export const backendTLSPolicySpec: ObjectNode = obj(
  {
    options: map(str({ minLength: 0, maxLength: 4096 }), { maxProperties: 16 }),
    targetRefs,
    validation,
  },
  { required: ['targetRefs', 'validation'] },
);
