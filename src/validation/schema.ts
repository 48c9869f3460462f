/**
 * A small structural-schema engine: the subset of OpenAPI v3 that the Gateway API CRDs use
 * (types, required, enum, lengths, patterns, ranges, item counts, list-type set/map uniqueness,
 * defaults), plus CEL rules written as TypeScript predicates. Schemas are written by hand in
 * crds/; this file only interprets them.
 *
 * Semantics follow kube-apiserver: null fields are dropped, then defaults are applied (to the
 * defaulted values too), then the schema is checked, then the rules. Rules must tolerate values
 * whose insides failed the schema (they run anyway, as in kube-apiserver; a rule that throws on
 * such a value is skipped). Unknown fields are refused, as `kubectl apply` (field validation
 * Strict) refuses them.
 */

/** A CEL rule from a CRD's x-kubernetes-validations, ported to TypeScript. */
export interface Rule {
  /** The CRD's message, verbatim: users see the same text as from kube-apiserver. */
  message: string;
  /**
   * true: valid. false: invalid at this node. A list of relative paths (e.g. `[2]`): invalid,
   * and these elements are the culprits (reported as `path[2]: …`).
   */
  check: (self: never) => boolean | string[];
  /** Transition rules (oldSelf) only apply to updates; file mode has none. Kept for parity. */
  transition?: boolean;
  /** A structural constraint expressed as a rule (oneOf, …): not a CEL rule of the CRD. */
  structural?: boolean;
}

interface Base {
  default?: unknown;
  rules?: Rule[];
  /**
   * A field only the experimental-channel CRD has (e.g. HTTPRoute `rules[].retry`): Convoy reads
   * it in both modes; a cluster with the standard CRDs prunes it before Convoy sees it.
   */
  channel?: 'experimental';
}
export interface StringNode extends Base {
  type: 'string';
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: string[];
}
export interface IntegerNode extends Base {
  type: 'integer';
  format?: 'int32' | 'int64';
  minimum?: number;
  maximum?: number;
  enum?: number[];
}
export interface BooleanNode extends Base {
  type: 'boolean';
}
export interface ObjectNode extends Base {
  type: 'object';
  properties: Record<string, SchemaNode>;
  required?: string[];
}
/** An object used as a map (additionalProperties). */
export interface MapNode extends Base {
  type: 'map';
  values: SchemaNode;
  maxProperties?: number;
}
export interface ArrayNode extends Base {
  type: 'array';
  items: SchemaNode;
  minItems?: number;
  maxItems?: number;
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
}
export type SchemaNode = StringNode | IntegerNode | BooleanNode | ObjectNode | MapNode | ArrayNode;

// ---------------------------------------------------------------------------------------------
// Builders, to keep the schemas in crds/ readable.

export const str = (o: Omit<StringNode, 'type'> = {}): StringNode => ({ type: 'string', ...o });
export const int = (o: Omit<IntegerNode, 'type'> = {}): IntegerNode => ({ type: 'integer', ...o });
export const bool = (o: Omit<BooleanNode, 'type'> = {}): BooleanNode => ({ type: 'boolean', ...o });
export const obj = (
  properties: Record<string, SchemaNode>,
  o: Omit<ObjectNode, 'type' | 'properties'> = {},
): ObjectNode => ({ type: 'object', properties, ...o });
export const map = (values: SchemaNode, o: Omit<MapNode, 'type' | 'values'> = {}): MapNode => ({
  type: 'map',
  values,
  ...o,
});
export const arr = (items: SchemaNode, o: Omit<ArrayNode, 'type' | 'items'> = {}): ArrayNode => ({
  type: 'array',
  items,
  listType: 'atomic',
  ...o,
});
/** Adds rules to a node (returns a copy). */
export function withRules<T extends SchemaNode>(node: T, ...rules: Rule[]): T {
  return { ...node, rules: [...(node.rules ?? []), ...rules] };
}
/** Typed rule constructor: `rule<Listener[]>('msg', (ls) => …)`. */
export function rule<T>(message: string, check: (self: T) => boolean | string[]): Rule {
  return { message, check: check as (self: never) => boolean | string[] };
}

// ---------------------------------------------------------------------------------------------
// Defaulting

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Returns value with nulls dropped and schema defaults applied, copying only what that changes:
 * a node whose value needs neither is returned as it is, shared with the input. Only validation
 * reads the result (validateWithSchema), and neither it nor the rules change what they read, so
 * the input stays untouched; copying every node was most of defaulting's cost in a cold start.
 */
export function applyDefaults(node: SchemaNode, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  switch (node.type) {
    case 'object': {
      if (!isPlainObject(value)) return value;
      // The copy, once something differs: the input's fields without nulls, in their order; the
      // defaults then follow in the schema's order, as when every node was copied.
      let out: Record<string, unknown> | undefined;
      for (const k of Object.keys(value)) {
        if (value[k] === null) {
          out = withoutNulls(value);
          break;
        }
      }
      const properties = node.properties;
      for (const k of facts(node).keys) {
        const child = properties[k];
        if ((out ?? value)[k] === undefined && child.default !== undefined) {
          out ??= withoutNulls(value);
          out[k] = copyOf(child.default);
        }
        const current = (out ?? value)[k];
        if (current === undefined) continue;
        const defaulted = applyDefaults(child, current);
        if (defaulted !== current) {
          out ??= withoutNulls(value);
          out[k] = defaulted;
        }
      }
      return out ?? value;
    }
    case 'map': {
      if (!isPlainObject(value)) return value;
      let out: Record<string, unknown> | undefined;
      for (const [k, v] of Object.entries(value)) {
        const defaulted = applyDefaults(node.values, v);
        if (defaulted === v) continue;
        out ??= { ...value };
        out[k] = defaulted;
      }
      return out ?? value;
    }
    case 'array': {
      if (!Array.isArray(value)) return value;
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        const defaulted = applyDefaults(node.items, v);
        if (defaulted === v) continue;
        out ??= value.slice();
        out[i] = defaulted;
      }
      return out ?? value;
    }
    default:
      return value;
  }
}

/** A shallow copy of `value` without its null fields, in their order. */
function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = v;
  return out;
}

/** A default's own copy: a primitive is its own copy, an object or array is cloned. */
function copyOf(v: unknown): unknown {
  return v !== null && typeof v === 'object' ? structuredClone(v) : v;
}

// ---------------------------------------------------------------------------------------------
// Validation

const q = (v: unknown): string => JSON.stringify(v);

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeError(path: string, expected: string, v: unknown): string {
  return `${path}: Invalid value: "${typeName(v)}": ${path} in body must be of type ${expected}: "${typeName(v)}"`;
}

const regexCache = new Map<string, RegExp>();
function regex(pattern: string): RegExp {
  let r = regexCache.get(pattern);
  if (!r) {
    r = new RegExp(pattern);
    regexCache.set(pattern, r);
  }
  return r;
}

/**
 * The path of the node being validated, kept as a stack of segments and turned into text only
 * when an error is reported: a valid object (nearly every one) then builds no path strings at
 * all, which was a large part of validation's cost in a cold start (docs/architecture.md §10.4).
 * `render()` gives the same text the paths were built with before: `a.b`, `a[2]`, `a[key]`.
 */
class PathStack {
  /** Field names (joined with "."), list indices and map keys (both in brackets). */
  private readonly segments: (string | number)[] = [];
  /** Per segment: true for a map key, whose brackets hold a string. */
  private readonly mapKeys: boolean[] = [];
  private root = '';

  reset(root: string): void {
    this.root = root;
    this.segments.length = 0;
    this.mapKeys.length = 0;
  }

  push(segment: string | number, mapKey = false): void {
    this.segments.push(segment);
    this.mapKeys.push(mapKey);
  }

  pop(): void {
    this.segments.pop();
    this.mapKeys.pop();
  }

  render(): string {
    let path = this.root;
    for (let i = 0; i < this.segments.length; i++) {
      const s = this.segments[i];
      if (typeof s === 'number' || this.mapKeys[i]) path = `${path}[${s}]`;
      else path = join(path, s);
    }
    return path;
  }
}

/** What validateNode() needs of a node beyond the node itself, computed once per node. */
interface NodeFacts {
  /** An object node's property names, in the schema's order. */
  keys: string[];
  required: string[];
  min?: number;
  max?: number;
}

const factsOf = new WeakMap<SchemaNode, NodeFacts>();

function facts(node: SchemaNode): NodeFacts {
  let f = factsOf.get(node);
  if (!f) {
    f = {
      keys: node.type === 'object' ? Object.keys(node.properties) : [],
      required: node.type === 'object' ? (node.required ?? []) : [],
    };
    if (node.type === 'integer') {
      f.min = node.minimum ?? (node.format === 'int32' ? -2147483648 : undefined);
      f.max = node.maximum ?? (node.format === 'int32' ? 2147483647 : undefined);
    }
    factsOf.set(node, f);
  }
  return f;
}

/** Validates an already-defaulted value. Returns the number of errors added. */
export function validateNode(node: SchemaNode, value: unknown, path: string, errors: string[]): number {
  const stack = new PathStack();
  stack.reset(path);
  return check(node, value, stack, errors);
}

/** validateNode() with the path as a stack (see PathStack). */
function check(node: SchemaNode, value: unknown, at: PathStack, errors: string[]): number {
  const before = errors.length;
  /** Errors that keep the rules from running: all of them, except duplicate list entries. */
  let blocking = -1;
  switch (node.type) {
    case 'string': {
      if (typeof value !== 'string') {
        errors.push(typeError(at.render(), 'string', value));
        break;
      }
      if (node.enum && !node.enum.includes(value)) {
        errors.push(
          `${at.render()}: Unsupported value: ${q(value)}: supported values: ${node.enum.map((e) => q(e)).join(', ')}`,
        );
        break;
      }
      // Characters are code points: counted only when the UTF-16 length cannot decide (a string
      // has at least half as many code points as UTF-16 units, and at most as many).
      const uncertain =
        (node.maxLength !== undefined && value.length > node.maxLength) ||
        (node.minLength !== undefined && value.length < 2 * node.minLength);
      const len = uncertain ? [...value].length : value.length;
      if (node.maxLength !== undefined && len > node.maxLength) {
        errors.push(`${at.render()}: Too long: may not be more than ${node.maxLength} characters`);
      } else if (node.minLength !== undefined && len < node.minLength) {
        const path = at.render();
        errors.push(
          `${path}: Invalid value: ${q(value)}: ${path} in body should be at least ${node.minLength} chars long`,
        );
      } else if (node.pattern !== undefined && !regex(node.pattern).test(value)) {
        const path = at.render();
        errors.push(`${path}: Invalid value: ${q(value)}: ${path} in body should match '${node.pattern}'`);
      }
      break;
    }
    case 'integer': {
      if (typeof value !== 'number' || !Number.isInteger(value)) {
        errors.push(typeError(at.render(), 'integer', value));
        break;
      }
      if (node.enum && !node.enum.includes(value)) {
        errors.push(
          `${at.render()}: Unsupported value: ${value}: supported values: ${node.enum.map((e) => q(e)).join(', ')}`,
        );
        break;
      }
      const { min, max } = facts(node);
      if (max !== undefined && value > max) {
        const path = at.render();
        errors.push(
          `${path}: Invalid value: ${value}: ${path} in body should be less than or equal to ${max}`,
        );
      } else if (min !== undefined && value < min) {
        const path = at.render();
        errors.push(
          `${path}: Invalid value: ${value}: ${path} in body should be greater than or equal to ${min}`,
        );
      }
      break;
    }
    case 'boolean':
      if (typeof value !== 'boolean') errors.push(typeError(at.render(), 'boolean', value));
      break;
    case 'object': {
      if (!isPlainObject(value)) {
        errors.push(typeError(at.render(), 'object', value));
        break;
      }
      const { keys, required } = facts(node);
      const properties = node.properties;
      for (const k of Object.keys(value)) {
        if (!(k in properties) && value[k] !== null)
          errors.push(`${join(at.render(), k)}: unknown field ${q(k)}`);
      }
      for (const r of required) {
        if (value[r] === undefined || value[r] === null)
          errors.push(`${join(at.render(), r)}: Required value`);
      }
      for (const k of keys) {
        const v = value[k];
        if (v === undefined || v === null) continue;
        at.push(k);
        check(properties[k], v, at, errors);
        at.pop();
      }
      break;
    }
    case 'map': {
      if (!isPlainObject(value)) {
        errors.push(typeError(at.render(), 'object', value));
        break;
      }
      const keys = Object.keys(value);
      const n = keys.length;
      if (node.maxProperties !== undefined && n > node.maxProperties) {
        errors.push(`${at.render()}: Too many: ${n}: must have at most ${node.maxProperties} items`);
      }
      for (const k of keys) {
        at.push(k, true);
        check(node.values, value[k], at, errors);
        at.pop();
      }
      break;
    }
    case 'array': {
      if (!Array.isArray(value)) {
        errors.push(typeError(at.render(), 'array', value));
        break;
      }
      if (node.maxItems !== undefined && value.length > node.maxItems) {
        errors.push(`${at.render()}: Too many: ${value.length}: must have at most ${node.maxItems} items`);
        // Like the API server, do not go on checking thousands of items.
        break;
      }
      if (node.minItems !== undefined && value.length < node.minItems) {
        const path = at.render();
        errors.push(
          `${path}: Invalid value: ${value.length}: ${path} in body should have at least ${node.minItems} items`,
        );
      }
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        at.push(i);
        if (v === null || v === undefined) errors.push(typeError(at.render(), schemaTypeName(node.items), v));
        else check(node.items, v, at, errors);
        at.pop();
      }
      blocking = errors.length - before;
      // A list of one item has no duplicates: its key text is not built (most lists are short).
      if (errors.length === before && node.listType === 'set' && value.length > 1) {
        const seen = new Set<string>();
        for (let i = 0; i < value.length; i++) {
          const k = q(value[i]);
          if (seen.has(k)) errors.push(`${at.render()}[${i}]: Duplicate value: ${k}`);
          seen.add(k);
        }
      }
      if (errors.length === before && node.listType === 'map' && node.listMapKeys && value.length > 1) {
        const keys = node.listMapKeys;
        const seen = new Set<string>();
        for (let i = 0; i < value.length; i++) {
          const item = value[i] as Record<string, unknown>;
          const keyObj = Object.fromEntries(keys.map((k) => [k, item[k]]));
          const k = q(keyObj);
          if (seen.has(k)) errors.push(`${at.render()}[${i}]: Duplicate value: ${k}`);
          seen.add(k);
        }
      }
      break;
    }
  }
  if (blocking < 0) blocking = errors.length - before;
  if (node.rules && (blocking === 0 || isPlainObject(value) || Array.isArray(value))) {
    // Like kube-apiserver, rules also run when something inside already failed the schema (so
    // users see every message at once); a rule that then cannot evaluate is skipped.
    for (const r of node.rules) {
      if (r.transition) continue;
      let result: boolean | string[];
      try {
        result = r.check(value as never);
      } catch {
        // A CEL rule that cannot evaluate on a well-formed value refuses the object, as
        // kube-apiserver does.
        if (blocking > 0) continue;
        result = false;
      }
      if (result === true || (Array.isArray(result) && result.length === 0)) continue;
      const path = at.render();
      if (result === false) errors.push(`${path}: Invalid value: "${schemaTypeName(node)}": ${r.message}`);
      else for (const sub of result) errors.push(`${path}${sub}: Invalid value: ${r.message}`);
    }
  }
  return errors.length - before;
}

function schemaTypeName(node: SchemaNode): string {
  return node.type === 'map' ? 'object' : node.type;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Defaults then validates `value` against `node`; returns the errors (empty = valid). */
export function validateWithSchema(node: SchemaNode, value: unknown, path: string): string[] {
  const errors: string[] = [];
  validateNode(node, applyDefaults(node, value), path, errors);
  return errors;
}
