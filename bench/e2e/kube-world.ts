/**
 * The bench world in a real API server (e2e/cluster), as in bench/status-scale.ts: objects are
 * created with POSTs before Convoy starts, and changed afterwards with `kubectl apply`, as a user
 * would change them.
 */
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import type { KubeClient } from '../../src/kubernetes/client';
import { collectionPath, resourceForKind } from '../../src/kubernetes/resources';
import type { KubeObject } from '../../src/store/objects';
import { nowMs } from '../common';

const CREATE_CONCURRENCY = 32;

/**
 * Returns `o` without what the API server assigns itself (uid, resourceVersion, generation,
 * creationTimestamp, status). Services become headless: the local cluster's service range holds
 * fewer addresses than the large world has Services (Convoy routes to EndpointSlices either way).
 */
export function creatable(o: KubeObject): KubeObject {
  const copy = JSON.parse(JSON.stringify(o)) as KubeObject & { spec?: Record<string, unknown> };
  delete copy.metadata.uid;
  delete copy.metadata.resourceVersion;
  delete copy.metadata.generation;
  delete copy.metadata.creationTimestamp;
  delete (copy as { status?: unknown }).status;
  if (copy.kind === 'Service' && copy.spec) copy.spec.clusterIP = 'None';
  return copy;
}

/** Returns the collection path an object is created in. */
function createPath(o: KubeObject): string {
  if (o.kind === 'Namespace') return '/api/v1/namespaces';
  const r = resourceForKind(o.kind);
  if (!r) throw new Error(`kube-world: no resource for ${o.kind}`);
  return collectionPath(r, r.namespaced ? o.metadata.namespace : undefined);
}

/** Creates every object, a bounded number at a time; namespaces and the class first. */
export async function createWorld(client: KubeClient, objects: readonly KubeObject[]): Promise<void> {
  const first = objects.filter((o) => o.kind === 'Namespace' || o.kind === 'GatewayClass');
  const rest = objects.filter((o) => o.kind !== 'Namespace' && o.kind !== 'GatewayClass');
  for (const group of [first, rest]) {
    let next = 0;
    const worker = async () => {
      while (next < group.length) {
        const o = group[next++]!;
        await client.request('POST', createPath(o), { body: creatable(o) });
      }
    };
    await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
  }
}

/** `kubectl apply -f` (or `delete -f`) of `objects` (one multi-document file); resolves with its start and end times. */
export async function kubectlApply(
  kubectl: string,
  kubeconfig: string,
  dir: string,
  objects: readonly KubeObject[],
  verb: 'apply' | 'delete' = 'apply',
): Promise<{ startedAt: number; endedAt: number }> {
  const file = path.join(dir, 'change.yaml');
  fs.writeFileSync(file, objects.map((o) => stringify(creatable(o), { lineWidth: 0 })).join('---\n'));
  const startedAt = nowMs();
  await new Promise<void>((resolve, reject) => {
    childProcess.execFile(
      kubectl,
      ['--kubeconfig', kubeconfig, verb, '-f', file],
      { encoding: 'utf8' },
      (err, _stdout, stderr) =>
        err ? reject(new Error(`kubectl ${verb} failed: ${stderr || err.message}`)) : resolve(),
    );
  });
  return { startedAt, endedAt: nowMs() };
}
