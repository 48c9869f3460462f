import * as grpc from '@grpc/grpc-js';
import { AdsClient } from '../../test/support/ads-client';
import type { AdsClientOptions } from '../../test/support/ads-client';
import type { ConvoyProcess } from './convoy';

/**
 * Raw ADS clients (test/support/ads-client.ts) connected to a `convoy serve` process, standing
 * in for Envoys that misbehave in ways a real Envoy cannot be made to: never ACKing, never
 * reading. Every such client is made here, so a change to how the harness secures xDS applies
 * to them too.
 */

/** The channel credentials a client of `fleet` needs to reach `convoy`'s xDS port. */
export function xdsClientCredentials(convoy: ConvoyProcess, fleet: string): grpc.ChannelCredentials {
  void convoy;
  void fleet;
  return grpc.credentials.createInsecure();
}

export interface ConvoyAdsClientOptions extends Omit<AdsClientOptions, 'address' | 'node' | 'credentials'> {
  fleet: string;
  nodeId: string;
  /** Connect here instead of Convoy's xDS address (e.g. a StallingProxy in front of it). */
  address?: string;
}

/** An ADS client of `fleet` named `nodeId`, connected to `convoy` (or through `address`). */
export function connectAdsClient(convoy: ConvoyProcess, opts: ConvoyAdsClientOptions): AdsClient {
  const { fleet, nodeId, address, ...rest } = opts;
  return AdsClient.connect({
    ...rest,
    address: address ?? convoy.xdsAddress,
    node: { id: nodeId, cluster: fleet },
    credentials: xdsClientCredentials(convoy, fleet),
  });
}
