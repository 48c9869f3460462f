import { TypeUrl, messageNameOf } from '../envoy/resources';

/** Push order within one stream: secrets first, then CDS, EDS, LDS, RDS (docs/xds.md §7). */
export const PUSH_ORDER: readonly TypeUrl[] = [
  TypeUrl.Secret,
  TypeUrl.Cluster,
  TypeUrl.Endpoint,
  TypeUrl.Listener,
  TypeUrl.Route,
];

/** Types whose SotW responses must carry the full state (wildcard-capable). */
export const FULL_STATE_TYPES: ReadonlySet<string> = new Set([TypeUrl.Listener, TypeUrl.Cluster]);

/** Types whose removals wait until the rest of a push was sent, in this order. */
export const DEFERRED_REMOVAL_TYPES: readonly string[] = [TypeUrl.Cluster, TypeUrl.Endpoint];

/** The short name of a type URL's message (Cluster, Listener, ...), the `type` label of metrics and logs. */
export function typeLabel(typeUrl: string): string {
  const name = messageNameOf(typeUrl);
  return name.slice(name.lastIndexOf('.') + 1);
}
