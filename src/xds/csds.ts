/**
 * The Client Status Discovery Service (envoy.service.status.v3.ClientStatusDiscoveryService) on
 * the xDS port (docs/xds.md §15): per connected Envoy, per resource of interest, the version it
 * holds and its status (csds-state.ts), as ClientConfig.generic_xds_configs, so Envoy's own tools
 * and `convoy proxy-status` / `convoy config-dump` can read it. Only an operator identity may ask:
 * the answer covers every fleet (docs/security.md §2.6). Secrets are redacted before they leave.
 */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../observability/logger';
import type { ConvoyMetrics } from '../observability/metrics';
import { decodeMessage, messageType } from '../envoy/protos';
import { TypeUrl, messageNameOf } from '../envoy/resources';
import type { XdsAuthenticator } from './authorization';
import type { ResourceStatus } from './csds-state';
import { redactSecrets } from './redact';
import type { NodeInfo } from './stream';
import { lenField } from './wire';

export const CSDS_SERVICE = 'envoy.service.status.v3.ClientStatusDiscoveryService';
const FETCH_METHOD = `/${CSDS_SERVICE}/FetchClientStatus`;
const STREAM_METHOD = `/${CSDS_SERVICE}/StreamClientStatus`;
const REQUEST_TYPE = 'envoy.service.status.v3.ClientStatusRequest';
const CLIENT_CONFIG_TYPE = 'envoy.service.status.v3.ClientConfig';
/** ClientStatusResponse.config is field 1. */
const CONFIG_FIELD = 1;
/** Clients described per event-loop turn, so a fleet of thousands never blocks serving. */
const CLIENTS_PER_TURN = 32;

/** One connected Envoy as CSDS sees it (an attached ADS stream). */
export interface CsdsClient {
  node: NodeInfo;
  clientStatus(): { typeUrl: string; resources: ResourceStatus[] }[];
}

/** The decoded request fields the service honours. */
export interface ClientStatusQuery {
  /** OR-ed matchers on node.id; empty: every client. */
  nodeIds: StringMatch[];
  excludeContents: boolean;
}

/** envoy.type.matcher.v3.StringMatcher without safe_regex (refused: an unbounded program). */
export interface StringMatch {
  exact?: string;
  prefix?: string;
  suffix?: string;
  contains?: string;
  ignore_case?: boolean;
}

/** Thrown for a request the service cannot answer; becomes INVALID_ARGUMENT. */
class BadRequest extends Error {}

/** Reads a ClientStatusRequest; throws BadRequest for matchers the service does not support. */
export function parseClientStatusRequest(bytes: Buffer): ClientStatusQuery {
  const req = decodeMessage<{
    node_matchers?: { node_id?: StringMatch & { safe_regex?: unknown }; node_metadatas?: unknown[] }[];
    exclude_resource_contents?: boolean;
  }>(REQUEST_TYPE, bytes);
  const nodeIds: StringMatch[] = [];
  for (const m of req.node_matchers ?? []) {
    if ((m.node_metadatas?.length ?? 0) > 0)
      throw new BadRequest('node_metadatas matchers are not supported');
    if (!m.node_id) throw new BadRequest('a node matcher needs node_id');
    if (m.node_id.safe_regex !== undefined)
      throw new BadRequest('safe_regex node_id matchers are not supported');
    nodeIds.push(m.node_id);
  }
  return { nodeIds, excludeContents: req.exclude_resource_contents === true };
}

/** True when `value` matches the StringMatcher (a matcher without a pattern matches nothing). */
export function stringMatches(m: StringMatch, value: string): boolean {
  const fold = (s: string) => (m.ignore_case ? s.toLowerCase() : s);
  const v = fold(value);
  if (m.exact !== undefined) return v === fold(m.exact);
  if (m.prefix !== undefined) return v.startsWith(fold(m.prefix));
  if (m.suffix !== undefined) return v.endsWith(fold(m.suffix));
  if (m.contains !== undefined) return v.includes(fold(m.contains));
  return false;
}

/** The proto timestamp of epoch ms. */
function timestamp(ms: number): { seconds: number; nanos: number } {
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 };
}

/**
 * Encodes a message built here or decoded from Convoy's own bytes. Not encodeMessage: its optional
 * schema check takes enum values as numbers only, and these carry proto-JSON enum names.
 */
function encode(fullName: string, message: object): Buffer {
  const type = messageType(fullName);
  return Buffer.from(type.encode(type.fromObject(message)).finish());
}

/** A resource's bytes as CSDS may show them: Secrets decoded, redacted and encoded again. */
function shownBytes(typeUrl: string, bytes: Buffer): Buffer {
  if (typeUrl !== TypeUrl.Secret) return bytes;
  const name = messageNameOf(typeUrl);
  return encode(name, redactSecrets(decodeMessage(name, bytes)));
}

/** One Envoy's ClientConfig message, encoded. */
export function encodeClientConfig(client: CsdsClient, excludeContents: boolean): Buffer {
  const node = client.node;
  const generic = client.clientStatus().flatMap(({ typeUrl, resources }) =>
    resources.map((r) => ({
      type_url: typeUrl,
      name: r.name,
      version_info: r.version,
      ...(!excludeContents && r.bytes
        ? { xds_config: { type_url: typeUrl, value: shownBytes(typeUrl, r.bytes) } }
        : {}),
      ...(r.lastUpdated !== undefined ? { last_updated: timestamp(r.lastUpdated) } : {}),
      config_status: r.config,
      client_status: r.client,
      ...(r.error
        ? {
            error_state: {
              details: r.error.message,
              version_info: r.error.version,
              last_update_attempt: timestamp(r.error.time),
            },
          }
        : {}),
    })),
  );
  return encode(CLIENT_CONFIG_TYPE, {
    node: {
      id: node.id ?? '',
      cluster: node.cluster ?? '',
      ...(node.user_agent_name ? { user_agent_name: node.user_agent_name } : {}),
      ...(node.user_agent_version ? { user_agent_version: node.user_agent_version } : {}),
    },
    generic_xds_configs: generic,
  });
}

/**
 * The encoded ClientStatusResponse for `query`: one ClientConfig per matching client, sorted by
 * cluster then node id. Yields to the event loop between batches of clients.
 */
export async function buildClientStatusResponse(
  clients: () => Iterable<CsdsClient>,
  query: ClientStatusQuery,
): Promise<Buffer> {
  const matching = [...clients()]
    .filter((c) => query.nodeIds.length === 0 || query.nodeIds.some((m) => stringMatches(m, c.node.id ?? '')))
    .sort(
      (a, b) =>
        (a.node.cluster ?? '').localeCompare(b.node.cluster ?? '') ||
        (a.node.id ?? '').localeCompare(b.node.id ?? ''),
    );
  const parts: Buffer[] = [];
  for (let i = 0; i < matching.length; i++) {
    if (i > 0 && i % CLIENTS_PER_TURN === 0) await new Promise((r) => setImmediate(r));
    parts.push(lenField(CONFIG_FIELD, encodeClientConfig(matching[i], query.excludeContents)));
  }
  return Buffer.concat(parts);
}

const identity = (b: Buffer): Buffer => b;

export function csdsServiceDefinition(): grpc.ServiceDefinition {
  const method = (path: string, stream: boolean, originalName: string) => ({
    path,
    requestStream: stream,
    responseStream: stream,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
    originalName,
  });
  return {
    FetchClientStatus: method(FETCH_METHOD, false, 'fetchClientStatus'),
    StreamClientStatus: method(STREAM_METHOD, true, 'streamClientStatus'),
  };
}

export interface CsdsOptions {
  authenticator: XdsAuthenticator;
  logger: Logger;
  metrics: ConvoyMetrics;
  /** The connected Envoys (attached ADS streams) at the time of asking. */
  clients: () => Iterable<CsdsClient>;
}

type AnyCall = grpc.ServerUnaryCall<Buffer, Buffer> | grpc.ServerDuplexStream<Buffer, Buffer>;

/** The service's handlers: each call is authorized first (operator identity), then answered. */
export function csdsHandlers(opts: CsdsOptions): grpc.UntypedServiceImplementation {
  const refuse = (call: AnyCall): grpc.ServiceError | undefined => {
    let id;
    try {
      id = opts.authenticator.identify(call as unknown as grpc.ServerDuplexStream<unknown, unknown>);
    } catch {
      id = undefined;
    }
    if (id?.operator) return undefined;
    const unauthenticated = id === undefined;
    opts.metrics.xdsStreamsRefused.inc({ reason: unauthenticated ? 'unauthenticated' : 'permission_denied' });
    opts.logger.warn(
      { peer: call.getPeer(), identity: id?.description },
      'csds: refused a client status request: only an operator identity may read every fleet',
    );
    return Object.assign(new Error('csds refused'), {
      code: unauthenticated ? grpc.status.UNAUTHENTICATED : grpc.status.PERMISSION_DENIED,
      details: unauthenticated
        ? 'no client identity'
        : 'client status is only for the operator identity (convoy certgen --operator)',
      metadata: new grpc.Metadata(),
    });
  };
  const answer = async (bytes: Buffer): Promise<Buffer> =>
    buildClientStatusResponse(opts.clients, parseClientStatusRequest(bytes));
  const failure = (err: unknown): Partial<grpc.StatusObject> =>
    err instanceof BadRequest
      ? { code: grpc.status.INVALID_ARGUMENT, details: err.message }
      : (opts.logger.error({ err }, 'csds: answering failed'),
        { code: grpc.status.INTERNAL, details: 'internal error building the client status' });
  return {
    FetchClientStatus: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      const refused = refuse(call);
      if (refused) return callback(refused);
      answer(call.request).then(
        (res) => callback(null, res),
        (err: unknown) => callback(failure(err)),
      );
    },
    StreamClientStatus: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      const refused = refuse(call);
      if (refused) return call.emit('error', refused);
      // One response per request, in order.
      let chain = Promise.resolve();
      call.on('data', (bytes: Buffer) => {
        chain = chain.then(async () => {
          try {
            call.write(await answer(bytes));
          } catch (err) {
            call.emit('error', failure(err));
          }
        });
      });
      call.on('end', () => void chain.then(() => call.end()));
      call.on('error', () => undefined);
    },
  };
}
