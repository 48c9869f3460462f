export { XdsCache } from './cache';
export type { SetFleetResult, FleetListener } from './cache';
export { AdsServer, adsServiceDefinition, ADS_SERVICE, SOTW_METHOD, DELTA_METHOD } from './server';
export type { AdsServerOptions } from './server';
export type { XdsDebugState, StreamDebug, TypeDebug, FleetDebug } from './debug-state';
export type { NodeInfo } from './stream';
export type { CacheEntry, FleetSnapshot, FleetChange } from './snapshot';
export type { FleetRejections, RejectedResource, RejectionFeed } from './rejections';
