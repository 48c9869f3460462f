/**
 * Holds what gateway builds remember from one build to the next, so that unchanged inputs cost
 * almost nothing and their outputs keep their identity (which translation and encoding downstream
 * are memoized on).
 *
 * Every entry is checked against the current inputs before it is reused, so a memo never changes
 * what a build returns, only how fast; a build without one computes everything.
 *
 * The memo is state its owner passes in (the Controller keeps one for its store; a test makes its
 * own): nothing in src/gateway caches at module level, and two owners never share results.
 */
import { ClusterModelMemo } from './backends';
import { CompiledRouteMemo } from './routes/memo';
import { CertificateMemo } from './certificates';
import { FleetVirtualHosts } from './virtual-hosts';

/** Holds the memos of the gateway build, one per kind of result (see the file comment). */
export class BuildMemo {
  /** Compiled routes by route object, with what each compilation read (routes/memo.ts). */
  readonly routes = new CompiledRouteMemo();
  /** Certificate checks by Secret object (certificates.ts). */
  readonly certificates = new CertificateMemo();
  /** ClusterModels per fleet, with the Service and EndpointSlices each was built from (backends.ts). */
  readonly clusters = new ClusterModelMemo();
  /** Virtual hosts per fleet and route configuration, and the clusters they name (virtual-hosts.ts). */
  readonly virtualHosts = new FleetVirtualHosts();
}
