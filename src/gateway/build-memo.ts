/**
 * Holds what gateway builds remember from one build to the next, so that unchanged inputs cost
 * almost nothing and their outputs keep their identity (which translation and encoding downstream
 * are memoized on).
 *
 * Every entry is checked against the current inputs before it is reused, so a memo never changes
 * what a build returns, only how fast; a build without one computes everything. The one exception
 * is `lastGoodCertificates`, which is history rather than a cache: what listeners have served
 * (last-good-certificates.ts), which an oracle build must be given a copy of.
 *
 * The memo is state its owner passes in (the Controller keeps one for its store; a test makes its
 * own): nothing in src/gateway caches at module level, and two owners never share results.
 */
import { ClusterModelMemo } from './backends';
import { CompiledRouteMemo } from './routes/memo';
import { CertificateMemo } from './certificates';
import { FleetVirtualHosts } from './virtual-hosts';
import { LastGoodCertificates } from './last-good-certificates';

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
  /** The certificates each listener has served, kept while their Secret is invalid (last-good-certificates.ts). */
  readonly lastGoodCertificates: LastGoodCertificates;

  /** Starts with `lastGood` as the memory of served certificates (an empty one by default). */
  constructor(lastGood: LastGoodCertificates = new LastGoodCertificates()) {
    this.lastGoodCertificates = lastGood;
  }
}
