/**
 * The kinds the Kubernetes provisioner writes, where the API server serves them, and a watch of
 * the provisioner's own objects (selected by its label) so an object deleted or edited by hand is
 * noticed and restored (docs/architecture.md §13).
 */
import type { KubeClient, WatchEvent } from '../../kubernetes/client';
import { statusCodeOf } from '../../kubernetes/client';
import { Backoff, sleep } from '../../kubernetes/backoff';
import { collectionPath, objectPath } from '../../kubernetes/resources';
import type { Logger } from '../../observability/logger';
import { OWNED_SELECTOR } from './labels';

export interface OwnedKind {
  kind: string;
  group: string;
  version: string;
  plural: string;
  namespaced: true;
}

const core = (kind: string, plural: string): OwnedKind => ({
  kind,
  group: '',
  version: 'v1',
  plural,
  namespaced: true,
});

export const OWNED_KINDS: readonly OwnedKind[] = [
  core('ServiceAccount', 'serviceaccounts'),
  core('Secret', 'secrets'),
  core('ConfigMap', 'configmaps'),
  core('Service', 'services'),
  { kind: 'Deployment', group: 'apps', version: 'v1', plural: 'deployments', namespaced: true },
  { kind: 'DaemonSet', group: 'apps', version: 'v1', plural: 'daemonsets', namespaced: true },
  {
    kind: 'PodDisruptionBudget',
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    namespaced: true,
  },
];

/** Returns the owned kind of `kind`; throws for a kind the provisioner does not write. */
export function ownedKind(kind: string): OwnedKind {
  const k = OWNED_KINDS.find((o) => o.kind === kind);
  if (!k) throw new Error(`not a kind the provisioner writes: ${kind}`);
  return k;
}

/** Returns the API path of one owned object. */
export function ownedObjectPath(kind: string, namespace: string, name: string): string {
  return objectPath(ownedKind(kind), namespace, name);
}

/** `Kind/namespace/name` of an owned object. */
export function ownedKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** A watch ended by an ERROR event (typically 410 Gone): relist. */
class WatchExpired extends Error {}

interface Meta {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/**
 * Lists and watches one owned kind in every namespace, keeping `Kind/ns/name → resourceVersion`
 * and calling onChange after every change once listed. Retries with backoff; relists on 410.
 */
export class OwnedKindWatch {
  readonly objects = new Map<string, string>();
  synced = false;
  private readonly abort = new AbortController();
  private readonly backoff = new Backoff(500, 30_000);
  private done?: Promise<void>;

  constructor(
    private readonly client: KubeClient,
    private readonly kind: OwnedKind,
    private readonly log: Logger,
    private readonly onChange: () => void,
  ) {}

  start(): void {
    this.done = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.done;
  }

  private async run(): Promise<void> {
    const path = collectionPath(this.kind);
    while (!this.abort.signal.aborted) {
      try {
        const list = await this.client.request<{ items: Meta[]; metadata: { resourceVersion: string } }>(
          'GET',
          path,
          { query: { labelSelector: OWNED_SELECTOR }, signal: this.abort.signal },
        );
        this.objects.clear();
        for (const item of list.items) this.remember(item);
        this.synced = true;
        this.onChange();
        let rv = list.metadata.resourceVersion;
        for (;;) {
          await this.client.watch(path, (e) => (rv = this.apply(e) ?? rv), {
            query: {
              labelSelector: OWNED_SELECTOR,
              resourceVersion: rv,
              allowWatchBookmarks: true,
              timeoutSeconds: 300 + Math.floor(Math.random() * 300),
            },
            signal: this.abort.signal,
            idleTimeoutMs: 660_000,
          });
          if (this.abort.signal.aborted) return;
          this.backoff.reset();
        }
      } catch (err) {
        if (this.abort.signal.aborted) return;
        if (statusCodeOf(err) !== 410 && !(err instanceof WatchExpired))
          this.log.warn({ err, kind: this.kind.kind }, 'owned-object watch failed');
        await sleep(this.backoff.next(), this.abort.signal);
      }
    }
  }

  /** Records one event; returns its resourceVersion. A 410 ERROR ends the watch (relist). */
  private apply(e: WatchEvent): string | undefined {
    const obj = e.object as Meta & { code?: number };
    if (e.type === 'ERROR')
      throw new WatchExpired(`watch ${this.kind.plural}: error event ${obj.code ?? ''}`);
    if (e.type === 'BOOKMARK') return obj.metadata?.resourceVersion;
    const key = ownedKey(this.kind.kind, obj.metadata?.namespace ?? '', obj.metadata?.name ?? '');
    if (e.type === 'DELETED') this.objects.delete(key);
    else this.remember(obj);
    this.onChange();
    return obj.metadata?.resourceVersion;
  }

  private remember(item: Meta): void {
    const m = item.metadata ?? {};
    this.objects.set(ownedKey(this.kind.kind, m.namespace ?? '', m.name ?? ''), m.resourceVersion ?? '');
  }
}
