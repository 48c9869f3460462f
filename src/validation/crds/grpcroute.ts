/**
 * The GRPCRoute CRD's `spec` (v1.6.1 standard channel).
 */
import type { ObjectNode } from '../schema';
import { arr, obj, rule, str } from '../schema';
import { GRPC_METHOD_RE, GRPC_SERVICE_RE, sectionName } from './common';
import { backendRef, weight } from './backend-refs';
import { TOTAL_MATCHES_MESSAGE, headerMatch, parentRefs, routeHostnames, totalMatches } from './route-common';
import { extensionRef, filterTypeRules, headerModifier, notRepeated, requestMirror } from './route-filters';

const grpcFilter = obj(
  {
    extensionRef: extensionRef(),
    requestHeaderModifier: headerModifier(),
    requestMirror: requestMirror(),
    responseHeaderModifier: headerModifier(),
    type: str({ enum: ['ResponseHeaderModifier', 'RequestHeaderModifier', 'RequestMirror', 'ExtensionRef'] }),
  },
  {
    required: ['type'],
    rules: filterTypeRules([
      ['RequestHeaderModifier', 'requestHeaderModifier'],
      ['ResponseHeaderModifier', 'responseHeaderModifier'],
      ['RequestMirror', 'requestMirror'],
      ['ExtensionRef', 'extensionRef'],
    ]),
  },
);

const grpcFilters = () =>
  arr(grpcFilter, {
    maxItems: 16,
    rules: [notRepeated('RequestHeaderModifier'), notRepeated('ResponseHeaderModifier')],
  });

interface GRPCMethod {
  type?: string;
  service?: string;
  method?: string;
}

const grpcMatch = obj({
  headers: headerMatch(4096),
  method: obj(
    {
      method: str({ maxLength: 1024 }),
      service: str({ maxLength: 1024 }),
      type: str({ enum: ['Exact', 'RegularExpression'], default: 'Exact' }),
    },
    {
      rules: [
        // has(self.type) ? has(self.service) || has(self.method) : true
        rule<GRPCMethod>(
          "One or both of 'service' or 'method' must be specified",
          (m) => m.type === undefined || m.service !== undefined || m.method !== undefined,
        ),
        // (!has(self.type) || self.type == 'Exact') && has(self.service) ? self.service.matches(r"""^(?i)\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$"""): true
        rule<GRPCMethod>(
          'service must only contain valid characters (matching ^(?i)\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$)',
          (m) =>
            !((m.type === undefined || m.type === 'Exact') && m.service !== undefined) ||
            GRPC_SERVICE_RE.test(m.service),
        ),
        // (!has(self.type) || self.type == 'Exact') && has(self.method) ? self.method.matches(r"""^[A-Za-z_][A-Za-z_0-9]*$"""): true
        rule<GRPCMethod>(
          'method must only contain valid characters (matching ^[A-Za-z_][A-Za-z_0-9]*$)',
          (m) =>
            !((m.type === undefined || m.type === 'Exact') && m.method !== undefined) ||
            GRPC_METHOD_RE.test(m.method),
        ),
      ],
    },
  ),
});

const grpcRule = obj({
  backendRefs: arr(backendRef({ filters: grpcFilters(), weight: weight() }), { maxItems: 16 }),
  filters: grpcFilters(),
  matches: arr(grpcMatch, { maxItems: 64 }),
  name: sectionName(),
});

export const grpcRouteSpec: ObjectNode = obj({
  hostnames: routeHostnames(),
  parentRefs: parentRefs(),
  rules: arr(grpcRule, {
    maxItems: 16,
    // (self.size() > 0 ? (has(self[0].matches) ? self[0].matches.size() : 0) : 0) + … <= 128
    rules: [rule<{ matches?: unknown[] }[]>(TOTAL_MATCHES_MESSAGE, totalMatches)],
  }),
});
