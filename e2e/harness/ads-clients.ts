import * as fs from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { CertificateDirectory } from '../../src/pki/certificate-directory';
import { AdsClient } from '../../test/support/ads-client';
import type { AdsClientOptions } from '../../test/support/ads-client';
import type { ConvoyProcess } from './convoy';

/**
 * Raw ADS clients (test/support/ads-client.ts) connected to a `convoy serve` process, standing
 * in for Envoys that misbehave in ways a real Envoy cannot be made to: never ACKing, never
 * reading. Every such client is made here, so a change to how the harness secures xDS applies
 * to them too.
 */

/**
 * Returns the channel credentials a client of `fleet` needs to reach `convoy`'s xDS port.
 *
 * With mTLS (the default) that is a client certificate naming the fleet's Gateway, issued from
 * Convoy's CA folder as `convoy bootstrap` would; plaintext only when Convoy serves plaintext.
 */
export async function xdsClientCredentials(
  convoy: ConvoyProcess,
  fleet: string,
): Promise<grpc.ChannelCredentials> {
  const dir = convoy.certsDir;
  if (dir === undefined) return grpc.credentials.createInsecure();
  const certs = new CertificateDirectory(dir);
  await certs.ensureCa({ create: false });
  const files = (await certs.ensureGateway(fleet)).files;
  return grpc.credentials.createSsl(
    fs.readFileSync(certs.caCertFile),
    fs.readFileSync(files.keyFile),
    fs.readFileSync(files.certFile),
  );
}

export interface ConvoyAdsClientOptions extends Omit<AdsClientOptions, 'address' | 'node' | 'credentials'> {
  fleet: string;
  nodeId: string;
  /** Connect here instead of Convoy's xDS address (e.g. a StallingProxy in front of it). */
  address?: string;
}

/** An ADS client of `fleet` named `nodeId`, connected to `convoy` (or through `address`). */
export async function connectAdsClient(
  convoy: ConvoyProcess,
  opts: ConvoyAdsClientOptions,
): Promise<AdsClient> {
  const { fleet, nodeId, address, ...rest } = opts;
  const credentials = await xdsClientCredentials(convoy, fleet);
  return AdsClient.connect({
    ...rest,
    address: address ?? convoy.xdsAddress,
    node: { id: nodeId, cluster: fleet },
    credentials,
  });
}
