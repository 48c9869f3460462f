/**
 * Resolves the ListenerPortRange policies of one Gateway (docs/gateway-api.md §30): which range
 * each listener of its merged list serves, which policies are accepted, and which listeners lose
 * their port to an accepted range.
 *
 * A range on listener T (port P) claims every port P..endPort for T alone. Precedence is the
 * listeners' (the Gateway's own, then its ListenerSets', as merged): a range loses (Conflicted) to
 * any listener of higher precedence on one of its ports and to any accepted range it overlaps;
 * a listener of lower precedence on a claimed port loses to the range (it is Conflicted). Two
 * policies on one listener: the older one (creationTimestamp, then namespace/name) wins.
 */
import type { KubeObject } from '../store/objects';
import { objectNamespace, namespacedName } from '../store/objects';
import { compareStrings } from '../util/compare';
import type { ListenerOwner } from './resolved';

/** Convoy's default bound on a range's size (ports, both ends included); `--max-port-range-ports`. */
export const DEFAULT_MAX_RANGE_PORTS = 1024;

/** The policy reasons this policy reports (docs/gateway-api.md §30). */
export type PortRangeReason = 'Accepted' | 'Conflicted' | 'Invalid' | 'TargetNotFound';

/** Describes one policy after resolution against the Gateway its target belongs to. */
export interface ResolvedPortRange {
  object: KubeObject;
  /** The targeted Gateway or ListenerSet, and the listener's name. */
  ancestor: ListenerOwner & { sectionName: string };
  reason: PortRangeReason;
  message: string;
}

interface PortRangeSpec {
  targetRef?: { kind?: string; name?: string; sectionName?: string };
  endPort?: number;
}

/** Returns the policy's target as `Kind/namespace/name` (a policy targets objects of its own namespace). */
export function portRangeTargetKey(policy: KubeObject): string {
  const ref = (policy.spec as PortRangeSpec | undefined)?.targetRef;
  return `${ref?.kind ?? ''}/${namespacedName(objectNamespace(policy), ref?.name ?? '')}`;
}

/** Returns the key portRangeTargetKey gives policies that target this owner. */
export function ownerKey(owner: ListenerOwner): string {
  return `${owner.kind}/${namespacedName(owner.namespace, owner.name)}`;
}

/** Indexes the policies that are not being deleted by the owner they target, each list oldest first. */
export function portRangesByTarget(policies: readonly KubeObject[]): Map<string, KubeObject[]> {
  const out = new Map<string, KubeObject[]>();
  for (const p of [...policies].filter((p) => !p.metadata.deletionTimestamp).sort(comparePolicies)) {
    const key = portRangeTargetKey(p);
    const list = out.get(key);
    if (list) list.push(p);
    else out.set(key, [p]);
  }
  return out;
}

/** Orders policies oldest first, then by namespace/name (the precedence of two ranges on one listener). */
function comparePolicies(a: KubeObject, b: KubeObject): number {
  return (
    compareStrings(a.metadata.creationTimestamp ?? '', b.metadata.creationTimestamp ?? '') ||
    compareStrings(
      namespacedName(objectNamespace(a), a.metadata.name),
      namespacedName(objectNamespace(b), b.metadata.name),
    )
  );
}

/** One listener of a Gateway's merged, precedence-ordered list, as ranges see it. */
export interface RangeListener {
  owner: ListenerOwner;
  name: string;
  port: number;
  /** The listener lost to another on its own port (conflicts.ts): a range on it serves nothing. */
  conflicted?: boolean;
}

/** Holds what ranges decide for one Gateway. */
export interface PortRangeResult {
  ranges: ResolvedPortRange[];
  /** Per merged index: the end of the accepted range the listener serves, if any. */
  endPorts: (number | undefined)[];
  /** Per merged index: why the listener lost its port to a range, if it did. */
  conflicts: (string | undefined)[];
}

/**
 * Resolves the policies `policies` (those targeting the Gateway or one of its ListenerSets, oldest
 * first per target) against the Gateway's merged listener list `listeners`; `maxPorts` bounds a
 * range's size. See the file comment for the rules; the result is deterministic in its inputs.
 */
export function resolvePortRanges(
  listeners: readonly RangeListener[],
  policies: readonly KubeObject[],
  maxPorts: number,
): PortRangeResult {
  const endPorts: (number | undefined)[] = new Array<number | undefined>(listeners.length);
  const conflicts: (string | undefined)[] = new Array<string | undefined>(listeners.length);
  const ranges: ResolvedPortRange[] = [];
  // The common case, and Gateways with thousands of listeners: nothing to index.
  if (policies.length === 0) return { ranges, endPorts, conflicts };
  const index = new Map<string, number>();
  listeners.forEach((l, i) => {
    const key = `${ownerKey(l.owner)}/${l.name}`;
    if (!index.has(key)) index.set(key, i);
  });
  const candidates: { policy: KubeObject; target: number; order: number }[] = [];
  policies.forEach((policy, order) => {
    const spec = (policy.spec ?? {}) as PortRangeSpec;
    const ancestor = ancestorOf(policy);
    const target = index.get(`${portRangeTargetKey(policy)}/${spec.targetRef?.sectionName ?? ''}`);
    const out = (reason: PortRangeReason, message: string) =>
      ranges.push({ object: policy, ancestor, reason, message });
    if (target === undefined) {
      out('TargetNotFound', `${ancestor.kind} ${ancestor.name} has no listener ${ancestor.sectionName}`);
      return;
    }
    if (listeners[target].conflicted) {
      out('Conflicted', `listener ${ancestor.sectionName} is Conflicted on its own port`);
      return;
    }
    const port = listeners[target].port;
    const endPort = spec.endPort;
    if (typeof endPort !== 'number' || !Number.isInteger(endPort) || endPort <= port || endPort > 65535) {
      out('Invalid', `endPort ${String(endPort)} must be greater than the listener's port ${port}`);
      return;
    }
    if (endPort - port + 1 > maxPorts) {
      out('Invalid', `the range ${port}-${endPort} has ${endPort - port + 1} ports, more than ${maxPorts}`);
      return;
    }
    candidates.push({ policy, target, order });
  });
  candidates.sort((a, b) => a.target - b.target || a.order - b.order);
  const accepted: { target: number; port: number; endPort: number; policy: KubeObject }[] = [];
  for (const c of candidates) {
    const port = listeners[c.target].port;
    const endPort = (c.policy.spec as PortRangeSpec).endPort!;
    const ancestor = ancestorOf(c.policy);
    const lost = (message: string) =>
      ranges.push({ object: c.policy, ancestor, reason: 'Conflicted', message });
    const overlap = accepted.find((a) => a.target === c.target || (a.port <= endPort && port <= a.endPort));
    if (overlap) {
      lost(
        overlap.target === c.target
          ? `the listener already has the range of ListenerPortRange ${policyName(overlap.policy)}`
          : `ports ${Math.max(port, overlap.port)}-${Math.min(endPort, overlap.endPort)} are in the range of ListenerPortRange ${policyName(overlap.policy)}, which has precedence`,
      );
      continue;
    }
    const before = listeners.findIndex((l, i) => i < c.target && l.port >= port && l.port <= endPort);
    if (before >= 0) {
      const l = listeners[before];
      lost(
        `port ${l.port} is used by listener ${l.name} of ${l.owner.kind} ${l.owner.name}, which has precedence`,
      );
      continue;
    }
    accepted.push({ target: c.target, port, endPort, policy: c.policy });
    endPorts[c.target] = endPort;
    ranges.push({
      object: c.policy,
      ancestor,
      reason: 'Accepted',
      message: `listener serves ports ${port}-${endPort}`,
    });
  }
  for (const a of accepted) {
    const holder = listeners[a.target];
    listeners.forEach((l, i) => {
      if (i === a.target || l.port < a.port || l.port > a.endPort || conflicts[i]) return;
      conflicts[i] =
        `port ${l.port} is in the range ${a.port}-${a.endPort} of listener ${holder.name} of ` +
        `${holder.owner.kind} ${holder.owner.name} (ListenerPortRange ${policyName(a.policy)}), which has precedence`;
    });
  }
  return { ranges, endPorts, conflicts };
}

/** Returns the ancestor a policy reports its status under: its target and listener name. */
export function ancestorOf(policy: KubeObject): ListenerOwner & { sectionName: string } {
  const ref = (policy.spec as PortRangeSpec | undefined)?.targetRef;
  return {
    kind: ref?.kind === 'ListenerSet' ? 'ListenerSet' : 'Gateway',
    namespace: objectNamespace(policy),
    name: ref?.name ?? '',
    sectionName: ref?.sectionName ?? '',
  };
}

function policyName(p: KubeObject): string {
  return namespacedName(objectNamespace(p), p.metadata.name);
}
