/**
 * Renders a schema tree (schema.ts) as the OpenAPI v3 schema of a CRD, so a CRD Convoy defines
 * itself (crds/envoyfleet.ts) is written once and enforced the same way by the API server and by
 * file mode. Only structural keywords are rendered; CEL rules are not (Convoy's own CRDs have none).
 */
import type { SchemaNode } from './schema';

/** Returns the OpenAPI v3 form of a schema node, keys in a fixed order. */
export function toOpenApi(node: SchemaNode): Record<string, unknown> {
  if (node.rules?.some((r) => !r.structural)) throw new Error('CEL rules cannot be rendered');
  switch (node.type) {
    case 'string':
      return pick({ type: 'string' }, node, ['enum', 'maxLength', 'minLength', 'pattern', 'default']);
    case 'integer':
      return pick({ type: 'integer' }, node, ['format', 'minimum', 'maximum', 'enum', 'default']);
    case 'boolean':
      return pick({ type: 'boolean' }, node, ['default']);
    case 'map':
      return pick({ type: 'object', additionalProperties: toOpenApi(node.values) }, node, ['maxProperties']);
    case 'array':
      return pick({ type: 'array', items: toOpenApi(node.items) }, node, ['maxItems', 'minItems']);
    case 'object': {
      const properties: Record<string, unknown> = {};
      for (const k of Object.keys(node.properties).sort()) properties[k] = toOpenApi(node.properties[k]);
      return pick({ type: 'object', properties }, node, ['required', 'default']);
    }
  }
}

function pick(base: Record<string, unknown>, node: object, keys: string[]): Record<string, unknown> {
  const src = node as Record<string, unknown>;
  for (const k of keys) if (src[k] !== undefined) base[k] = src[k];
  return base;
}
