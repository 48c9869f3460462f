/**
 * Removes secret material from decoded Envoy resources (proto JSON, snake_case field names) before
 * they leave Convoy through CSDS or are printed by `convoy config-dump` (docs/security.md §2.6):
 * every inline value below a field that holds a private key, password or shared secret becomes
 * the text REDACTED. File names and environment variable names stay: they are not secret and
 * tell the operator where Envoy reads the material.
 */

export const REDACTED = '[redacted]';

/** Fields whose DataSource values (possibly in lists or maps) are secret. */
const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'private_key',
  'password',
  'pkcs12',
  'session_ticket_keys',
  'generic_secret',
  'hmac_secret',
  'secret',
  'secrets',
]);

/** The inline fields of an envoy.config.core.v3.DataSource. */
const INLINE_FIELDS = ['inline_bytes', 'inline_string'];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A copy of `value` with secret material redacted; `value` is not changed. A DataSource under a
 * secret field keeps its shape as `{ inline_string: REDACTED }`, so the result still encodes as
 * the same message type.
 */
export function redactSecrets<T>(value: T): T {
  return redact(value as Json, false) as T;
}

function redact(value: Json, secret: boolean): Json {
  if (Array.isArray(value)) return value.map((v) => redact(v, secret));
  if (value === null || typeof value !== 'object') return value;
  const out: { [key: string]: Json } = {};
  let inline = false;
  for (const [k, v] of Object.entries(value)) {
    if (secret && INLINE_FIELDS.includes(k)) inline = true;
    else out[k] = redact(v, secret || SECRET_FIELDS.has(k));
  }
  if (inline) out.inline_string = REDACTED;
  return out;
}
