import type { AnyExtension } from '@grpc/proto-loader';
import type { CorsPolicy } from '../../generated/envoy/extensions/filters/http/cors/v3/CorsPolicy';
import type { StringMatcher } from '../../generated/envoy/type/matcher/v3/StringMatcher';
import type { CorsModel } from '../../model/fleet';
import { ExtensionNames, ExtensionTypeUrl, typed } from './common';

/**
 * Translates a route's CORS policy (docs/gateway-api.md §20) to the per-route configuration of
 * the CORS filter every HCM carries (listeners.ts), keyed by the filter's name in
 * typed_per_filter_config.
 *
 * Envoy answers a matching preflight itself (200, echoing the Origin) and adds the allow-origin,
 * credentials and expose headers to responses of matching simple requests. With `*` methods or
 * headers and credentials allowed, Envoy echoes the requested method and headers instead of `*`,
 * as the Gateway API requires. Preflights from other origins are answered by Envoy too, without
 * CORS headers: the route's policy refuses them, so the backend is not asked (the conformance test
 * HTTPRouteCORS expects no backend answer).
 */
export function corsPerFilterConfig(cors: CorsModel): Record<string, AnyExtension> {
  const policy: CorsPolicy = {
    allow_origin_string_match: cors.origins.map((o): StringMatcher =>
      o.type === 'Exact' ? { exact: o.value, ignore_case: true } : { safe_regex: { regex: o.value } },
    ),
    forward_not_matching_preflights: { value: false },
  };
  if (cors.allowMethods.length) policy.allow_methods = cors.allowMethods.join(', ');
  if (cors.allowHeaders.length) policy.allow_headers = cors.allowHeaders.join(', ');
  if (cors.exposeHeaders.length) policy.expose_headers = cors.exposeHeaders.join(', ');
  if (cors.maxAgeSeconds !== undefined) policy.max_age = String(cors.maxAgeSeconds);
  if (cors.allowCredentials) policy.allow_credentials = { value: true };
  return { [ExtensionNames.Cors]: typed<CorsPolicy>(ExtensionTypeUrl.CorsPolicy, policy) };
}
