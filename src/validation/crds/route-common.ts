/**
 * Parts the route CRDs (HTTPRoute, GRPCRoute, TLSRoute) share: parentRefs with their CEL rules,
 * hostnames, header and query-parameter matches, and the rule on the total number of matches.
 */
import type { ArrayNode } from '../schema';
import { arr, obj, rule, str } from '../schema';
import {
  HEADER_NAME,
  failing,
  group,
  hostname,
  kind,
  namespace,
  objectName,
  port,
  sectionName,
  uniqueBy,
} from './common';

interface ParentRef {
  group: string;
  kind: string;
  name: string;
  namespace?: string;
  sectionName?: string;
}
const emptyNs = (p: ParentRef) => p.namespace === undefined || p.namespace === '';
const emptySection = (p: ParentRef) => p.sectionName === undefined || p.sectionName === '';
const sameParent = (a: ParentRef, b: ParentRef) =>
  a.group === b.group &&
  a.kind === b.kind &&
  a.name === b.name &&
  ((emptyNs(a) && emptyNs(b)) ||
    (a.namespace !== undefined && b.namespace !== undefined && a.namespace === b.namespace));

export const parentRefs = (): ArrayNode =>
  arr(
    obj(
      {
        group: group('gateway.networking.k8s.io'),
        kind: kind('Gateway'),
        name: objectName(),
        namespace: namespace(),
        port: port(),
        sectionName: sectionName(),
      },
      { required: ['name'] },
    ),
    {
      maxItems: 32,
      rules: [
        // self.all(p1, self.all(p2, <same parent> ? (<p1 no section> == <p2 no section>) : true))
        rule<ParentRef[]>(
          'sectionName must be specified when parentRefs includes 2 or more references to the same parent',
          (ps) =>
            failing(ps, (p1) =>
              ps.every((p2) => !sameParent(p1, p2) || emptySection(p1) === emptySection(p2)),
            ),
        ),
        // self.all(p1, self.exists_one(p2, <same parent> && <same or both empty sectionName>))
        rule<ParentRef[]>(
          'sectionName must be unique when parentRefs includes 2 or more references to the same parent',
          (ps) =>
            uniqueBy(
              ps,
              (p1, p2) =>
                sameParent(p1, p2) &&
                ((emptySection(p1) && emptySection(p2)) ||
                  (p1.sectionName !== undefined &&
                    p2.sectionName !== undefined &&
                    p1.sectionName === p2.sectionName)),
            ),
        ),
      ],
    },
  );

export const routeHostnames = () => arr(hostname(), { maxItems: 16 });

export const headerMatch = (valueMax: number) =>
  arr(
    obj(
      {
        name: str({ minLength: 1, maxLength: 256, pattern: HEADER_NAME }),
        type: str({ enum: ['Exact', 'RegularExpression'], default: 'Exact' }),
        value: str({ minLength: 1, maxLength: valueMax }),
      },
      { required: ['name', 'value'] },
    ),
    { maxItems: 16, listType: 'map', listMapKeys: ['name'] },
  );

export const totalMatches = (rules: { matches?: unknown[] }[]) =>
  rules.slice(0, 16).reduce((n, r) => n + (r.matches?.length ?? 0), 0) <= 128;
export const TOTAL_MATCHES_MESSAGE =
  'While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128';
