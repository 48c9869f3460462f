/**
 * The BackendObjectReference shape the route CRDs and the RequestMirror filter share, with the
 * route-specific additions (`weight`, per-backend `filters`).
 */
import type { SchemaNode } from '../schema';
import { int, obj, rule, withRules } from '../schema';
import { group, kind, namespace, objectName, port } from './common';

interface BackendRefLike {
  group: string;
  kind: string;
  port?: number;
}
// (size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true
const mustHavePort = rule<BackendRefLike>(
  'Must have port for Service reference',
  (b) => !(b.group.length === 0 && b.kind === 'Service') || b.port !== undefined,
);

export const weight = () => int({ format: 'int32', minimum: 0, maximum: 1000000, default: 1 });

/**
 * A BackendObjectReference (group, kind, name, namespace, port; must have a port for a Service),
 * with the route-specific fields each CRD adds: `filters` (HTTP/GRPC backendRefs) and `weight`.
 */
export const backendRef = (extra: { filters?: SchemaNode; weight?: SchemaNode } = {}) =>
  withRules(
    obj(
      {
        ...(extra.filters && { filters: extra.filters }),
        group: group(''),
        kind: kind('Service'),
        name: objectName(),
        namespace: namespace(),
        port: port(),
        ...(extra.weight && { weight: extra.weight }),
      },
      { required: ['name'] },
    ),
    mustHavePort,
  );
