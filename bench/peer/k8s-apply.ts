/**
 * Writes bench world objects into a real API server with server-side apply, as
 * `kubectl apply --server-side` would: one call creates or updates, so the world's changes
 * (a Secret replaced, a route edited, a ListenerSet added) go through the same path as its start.
 */
import type { KubeClient } from '../../src/kubernetes/client';
import { objectPath, resourceForKind } from '../../src/kubernetes/resources';
import type { KubeObject } from '../../src/store/objects';

const APPLY_CONCURRENCY = 16;
const FIELD_MANAGER = 'bench-peer';

/**
 * Removes what the API server assigns itself. Services become headless: the local cluster's
 * service range is a /24, smaller than the larger worlds' Service count, and both controllers
 * route to the EndpointSlices either way.
 */
export function applicable(o: KubeObject): KubeObject {
  const copy = structuredClone(o) as KubeObject & { spec?: Record<string, unknown>; status?: unknown };
  delete copy.metadata.uid;
  delete copy.metadata.resourceVersion;
  delete copy.metadata.generation;
  delete copy.metadata.creationTimestamp;
  delete copy.status;
  if (copy.kind === 'Service' && copy.spec) copy.spec.clusterIP = 'None';
  return copy;
}

/** The object URL an apply of `o` goes to. */
function applyPath(o: KubeObject): string {
  if (o.kind === 'Namespace') return `/api/v1/namespaces/${o.metadata.name}`;
  const r = resourceForKind(o.kind);
  if (!r) throw new Error(`bench peer: no resource for ${o.kind}`);
  return objectPath(r, r.namespaced ? o.metadata.namespace : undefined, o.metadata.name);
}

/** Server-side applies one object (create or update). */
export async function applyObject(client: KubeClient, o: KubeObject): Promise<void> {
  await client.request('PATCH', applyPath(o), {
    query: { fieldManager: FIELD_MANAGER, force: true },
    contentType: 'application/apply-patch+yaml',
    body: applicable(o),
  });
}

/** Applies objects in order, one at a time (a change: Secret before the ListenerSet naming it). */
export async function applyInOrder(client: KubeClient, objects: readonly KubeObject[]): Promise<void> {
  for (const o of objects) await applyObject(client, o);
}

/** Applies a whole world, a bounded number at a time; namespaces and cluster-scoped kinds first. */
export async function applyWorld(client: KubeClient, objects: readonly KubeObject[]): Promise<void> {
  const first = objects.filter((o) => o.kind === 'Namespace' || o.kind === 'GatewayClass');
  const rest = objects.filter((o) => o.kind !== 'Namespace' && o.kind !== 'GatewayClass');
  for (const group of [first, rest]) {
    let next = 0;
    const worker = async () => {
      while (next < group.length) await applyObject(client, group[next++]!);
    };
    await Promise.all(Array.from({ length: APPLY_CONCURRENCY }, worker));
  }
}
