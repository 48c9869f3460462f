/**
 * When the bench world's status is complete in the API server: the kinds Convoy writes status
 * for, whether a listed object carries Convoy's status for its generation, and Convoy's own
 * write counter (bench/status-scale.ts, bench/status-cost.ts).
 */
import type { KubeClient } from '../../src/kubernetes/client';
import { collectionPath, resourceForKind } from '../../src/kubernetes/resources';
import type { KubeObject } from '../../src/store/objects';
import { CONTROLLER_NAME } from '../world';

/** The kinds whose status Convoy writes, with the collection they are listed from. */
export const STATUS_KINDS = ['GatewayClass', 'Gateway', 'ListenerSet', 'HTTPRoute'] as const;
/** Returns whether a listed object carries Convoy's status for its current generation. */
export function hasCurrentStatus(o: KubeObject): boolean {
  const generation = o.metadata.generation;
  const status = (o as { status?: Record<string, unknown> }).status ?? {};
  const current = (conditions: unknown) =>
    Array.isArray(conditions) &&
    (conditions as { observedGeneration?: number }[]).some((c) => c.observedGeneration === generation);
  if (o.kind === 'HTTPRoute') {
    const parents = (status.parents ?? []) as { controllerName?: string; conditions?: unknown }[];
    return parents.some((p) => p.controllerName === CONTROLLER_NAME && current(p.conditions));
  }
  return current(status.conditions);
}

/** Counts the objects of the status kinds that carry current status (paginated LISTs). */
export async function countCurrent(client: KubeClient): Promise<number> {
  return (await countStatus(client)).current;
}

/** Counts the objects of the status kinds, and those of them that carry current status. */
export async function countStatus(client: KubeClient): Promise<{ current: number; total: number }> {
  let n = 0;
  let total = 0;
  for (const kind of STATUS_KINDS) {
    const r = resourceForKind(kind)!;
    let cont: string | undefined;
    do {
      const page = await client.request<{
        items: Omit<KubeObject, 'kind'>[];
        metadata: { continue?: string };
      }>('GET', collectionPath(r), { query: { limit: 2000, continue: cont } });
      total += page.items.length;
      for (const item of page.items) if (hasCurrentStatus({ ...item, kind } as KubeObject)) n++;
      cont = page.metadata.continue || undefined;
    } while (cont);
  }
  return { current: n, total };
}

/** Parses convoy_status_writes_total by result from a Prometheus text page. */
export function statusWrites(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(/^convoy_status_writes_total\{result="([a-z]+)"\} (\d+)/gm))
    out[m[1]!] = Number(m[2]);
  return out;
}
