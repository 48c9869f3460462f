import { TypeUrl } from '../envoy/resources';

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
