import { KubeApiError } from '../../src/kubernetes/client';
import type { KubeClient, WatchEvent } from '../../src/kubernetes/client';

/**
 * A minimal list-and-watch cache of one resource for the e2e cluster's test-only controllers
 * (load balancer, fleet stand-in): it keeps every object by namespace/name, relists after a
 * watch expires or fails, and calls `onChange` after each list and each event, so a controller
 * reconciles from the whole cache instead of tracking events.
 */
export class Informer<
  T extends { metadata: { name: string; namespace?: string; resourceVersion?: string } },
> {
  readonly objects = new Map<string, T>();
  private readonly abort = new AbortController();
  private running?: Promise<void>;
  private synced!: () => void;
  /** Resolves after the first list. */
  readonly ready = new Promise<void>((r) => (this.synced = r));

  constructor(
    private readonly client: KubeClient,
    /** A collection path such as /api/v1/services. */
    private readonly path: string,
    private readonly onChange: () => void,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  static key(o: { metadata: { name: string; namespace?: string } }): string {
    return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  }

  start(): this {
    this.running = this.loop();
    return this;
  }

  private async loop(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        const list = await this.client.request<{ metadata: { resourceVersion: string }; items: T[] }>(
          'GET',
          this.path,
        );
        this.objects.clear();
        for (const o of list.items) this.objects.set(Informer.key(o), o);
        this.synced();
        this.onChange();
        let rv = list.metadata.resourceVersion;
        for (;;) {
          await this.client.watch(
            this.path,
            (ev: WatchEvent) => {
              if (ev.type === 'ERROR') throw new KubeApiError('watch expired', 410);
              const o = ev.object as unknown as T;
              rv = o.metadata.resourceVersion ?? rv;
              if (ev.type === 'BOOKMARK') return;
              if (ev.type === 'DELETED') this.objects.delete(Informer.key(o));
              else this.objects.set(Informer.key(o), o);
              this.onChange();
            },
            {
              query: { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 300 },
              signal: this.abort.signal,
            },
          );
          if (this.abort.signal.aborted) return;
        }
      } catch (err) {
        if (this.abort.signal.aborted) return;
        if (!(err instanceof KubeApiError && err.statusCode === 410))
          this.log(`watch ${this.path}: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running?.catch(() => undefined);
  }
}
