/**
 * What the Client Status Discovery Service reports for one resource of one connected Envoy
 * (docs/xds.md §15): the Envoy's side (ClientResourceStatus: REQUESTED, DOES_NOT_EXIST, ACKED,
 * NACKED) and Convoy's side (ConfigStatus: SYNCED, NOT_SENT, STALE, ERROR), decided from the
 * stream's own bookkeeping (type-state.ts) and the fleet's current snapshot. Pure: the unit tests
 * drive every rule.
 */
import type { StreamRejection } from './rejections';

/** envoy.admin.v3.ClientResourceStatus, as the proto names its values. */
export type ClientResourceStatus = 'REQUESTED' | 'DOES_NOT_EXIST' | 'ACKED' | 'NACKED';
/** envoy.service.status.v3.ConfigStatus, as the proto names its values. */
export type ConfigStatus = 'SYNCED' | 'NOT_SENT' | 'STALE' | 'ERROR';

/** A version a client holds (or was sent), with its bytes when Convoy still has them. */
export interface HeldVersion {
  readonly version: string;
  readonly bytes?: Buffer;
}

/** What the mapping reads of one type of one stream. */
export interface TypeStatusInput {
  /** Names the Envoy is interested in: its explicit subscriptions, or the whole snapshot for a wildcard. */
  names: Iterable<string>;
  /** The version the Envoy holds (or was last sent); 'absent' when it was told the name does not exist. */
  held(name: string): HeldVersion | 'absent' | undefined;
  /** The Envoy's rejection of this resource, while it has not accepted a newer version. */
  rejected(name: string): StreamRejection | undefined;
  /** The fleet's current version of the resource, undefined when the fleet has none. */
  current(name: string): HeldVersion | undefined;
  /** True while a response that brought this resource to the Envoy has not been answered. */
  unanswered(name: string): boolean;
  /** Epoch ms of the Envoy's last ACK of this type, if any. */
  ackedAt?: number;
}

export interface ResourceStatus {
  name: string;
  /** The version the Envoy holds ('' when none). */
  version: string;
  client: ClientResourceStatus;
  config: ConfigStatus;
  /** Epoch ms: the ACK (ACKED) or the NACK (NACKED) this status comes from. */
  lastUpdated?: number;
  /** For NACKED: the rejected version and what Envoy said. */
  error?: { version: string; message: string; time: number };
  /** The bytes of the version the Envoy holds, when known. */
  bytes?: Buffer;
}

/**
 * The status of every resource of interest, sorted by name.
 *
 * - NACKED/ERROR: the Envoy rejected this resource and has not accepted a version of it since.
 * - ACKED: the Envoy holds a version and every response that brought it was answered; SYNCED
 *   when that is the fleet's current version, STALE when the fleet has a newer one (or none).
 * - REQUESTED: the Envoy asked for it and holds nothing confirmed yet: STALE while a response
 *   is on its way unanswered, NOT_SENT while the fleet has it and nothing was sent.
 * - DOES_NOT_EXIST: the fleet has no such resource; SYNCED once the Envoy was told so, NOT_SENT
 *   before.
 */
export function resourceStatuses(input: TypeStatusInput): ResourceStatus[] {
  const out: ResourceStatus[] = [];
  for (const name of [...new Set(input.names)].sort()) {
    const held = input.held(name);
    const current = input.current(name);
    const rejection = input.rejected(name);
    const holds = held !== undefined && held !== 'absent' ? held : undefined;
    const base = { name, version: holds?.version ?? '', ...(holds?.bytes ? { bytes: holds.bytes } : {}) };
    if (rejection) {
      // A rejected version is what was sent, not what the Envoy runs: report no held bytes.
      out.push({
        name,
        version: holds && holds.version !== rejection.version ? holds.version : '',
        client: 'NACKED',
        config: 'ERROR',
        lastUpdated: rejection.time,
        error: { version: rejection.version, message: rejection.message, time: rejection.time },
      });
    } else if (holds && !input.unanswered(name)) {
      const synced = current !== undefined && current.version === holds.version;
      out.push({
        ...base,
        client: 'ACKED',
        config: synced ? 'SYNCED' : 'STALE',
        ...(input.ackedAt !== undefined ? { lastUpdated: input.ackedAt } : {}),
      });
    } else if (holds) {
      out.push({ name, version: '', client: 'REQUESTED', config: 'STALE' });
    } else if (current === undefined) {
      out.push({
        name,
        version: '',
        client: 'DOES_NOT_EXIST',
        config: held === 'absent' ? 'SYNCED' : 'NOT_SENT',
      });
    } else {
      out.push({ name, version: '', client: 'REQUESTED', config: 'NOT_SENT' });
    }
  }
  return out;
}

/**
 * The short per-type summary `convoy proxy-status` shows, from the statuses of its resources:
 * rejected when any is NACKED, stale when any is STALE, not sent when any is NOT_SENT (nothing
 * sent for it yet), synced otherwise (also when the type has no resource of interest).
 */
export type TypeSummary = 'synced' | 'stale' | 'not sent' | 'rejected';

export function summarizeType(configs: readonly { config: ConfigStatus }[]): TypeSummary {
  let summary: TypeSummary = 'synced';
  for (const c of configs) {
    if (c.config === 'ERROR') return 'rejected';
    if (c.config === 'STALE') summary = 'stale';
    else if (c.config === 'NOT_SENT' && summary === 'synced') summary = 'not sent';
  }
  return summary;
}
