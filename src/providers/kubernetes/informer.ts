import type { Logger } from '../../observability/logger';
import type { ObjectStore } from '../../store/store';
import type { KubeObject } from '../../store/objects';
import { objectNamespace } from '../../store/objects';
import { Backoff, sleep } from '../../kubernetes/backoff';
import type { KubeClient, WatchEvent } from '../../kubernetes/client';
import { KubeApiError, statusCodeOf } from '../../kubernetes/client';
import type { ResourceType } from '../../kubernetes/resources';
import { collectionPath, trimObject } from '../../kubernetes/resources';
import type { KubernetesMetrics } from '../../kubernetes/metrics';

export interface InformerOptions {
  client: KubeClient;
  resource: ResourceType;
  store: ObjectStore;
  logger: Logger;
  metrics?: KubernetesMetrics;
  /** Called once, after the first complete LIST (or the first 404 of an optional CRD). */
  onSynced: () => void;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** How often a missing Gateway API CRD is looked for again. */
  missingRetryMs?: number;
  pageSize?: number;
  /** Server-side watch timeout range; each watch picks a random value in it. */
  watchTimeoutSeconds?: [number, number];
  /**
   * Called with every object a watch event carries (not bookmarks, not LISTs): the status writer
   * times the echoes of its writes with it (kubernetes/write-window.ts). Must be cheap and not throw.
   */
  onObserved?: ObservedHook;
}

/** Receives an object's kind, namespace, name and resourceVersion as a watch delivered it. */
export type ObservedHook = (kind: string, namespace: string, name: string, resourceVersion: string) => void;

/** A watch or LIST answer that means our resourceVersion is too old: relist from scratch. */
class GoneError extends Error {}

type Phase = 'idle' | 'listing' | 'watching' | 'missing' | 'backoff' | 'stopped';

/**
 * One reflector per kind: LIST (paginated) into store.replaceKind, then WATCH from the list's
 * resourceVersion with bookmarks, resuming from the last seen resourceVersion after a dropped
 * stream and relisting when the server answers 410 Gone/Expired. Failures back off
 * exponentially with jitter. A Gateway API CRD that is not installed (404) is skipped with a
 * warning and looked for again every missingRetryMs.
 */
export class Informer {
  private readonly abort = new AbortController();
  private readonly backoff: Backoff;
  private resourceVersion = '';
  private loop?: Promise<void>;
  private hasSynced = false;
  private missingWarned = false;
  phase: Phase = 'idle';
  lastError?: string;

  constructor(private readonly o: InformerOptions) {
    this.backoff = new Backoff(o.backoffBaseMs ?? 500, o.backoffMaxMs ?? 15_000);
  }

  get kind(): string {
    return this.o.resource.kind;
  }

  get synced(): boolean {
    return this.hasSynced;
  }

  start(): void {
    if (!this.loop) this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    this.phase = 'stopped';
  }

  private get log(): Logger {
    return this.o.logger;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      let watchStarted = 0;
      try {
        if (!this.resourceVersion) {
          this.phase = 'listing';
          await this.list(signal);
          this.backoff.reset();
        }
        if (signal.aborted) break;
        this.phase = 'watching';
        watchStarted = Date.now();
        await this.watch(signal);
        // The server ended the stream at timeoutSeconds: resume from the last resourceVersion.
        this.backoff.reset();
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof GoneError) {
          this.log.info({ kind: this.kind }, 'resourceVersion expired; relisting');
          this.resourceVersion = '';
          continue;
        }
        const code = statusCodeOf(err);
        if (code === 404 && this.o.resource.optional) {
          // Not installed (LIST), or removed while we watched it (WATCH): list again to find out.
          if (this.phase === 'listing') await this.markMissing(signal);
          else this.resourceVersion = '';
          continue;
        }
        this.o.metrics?.watchErrors.inc({ kind: this.kind });
        this.lastError = err instanceof Error ? err.message : String(err);
        // A watch that ran for a while before failing counts as progress.
        if (watchStarted && Date.now() - watchStarted > 10_000) this.backoff.reset();
        const delay = this.backoff.next();
        const level = this.backoff.attempts > 3 || code === 403 ? 'warn' : 'info';
        this.log[level](
          { kind: this.kind, phase: this.phase, err: this.lastError, retryInMs: delay },
          this.phase === 'listing' ? 'list failed' : 'watch interrupted',
        );
        this.phase = 'backoff';
        await sleep(delay, signal);
      }
    }
    this.phase = 'stopped';
  }

  private async list(signal: AbortSignal): Promise<void> {
    const r = this.o.resource;
    const items: KubeObject[] = [];
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      let page: {
        metadata?: { resourceVersion?: string; continue?: string };
        items?: Record<string, unknown>[];
      };
      try {
        page = await this.o.client.request('GET', collectionPath(r), {
          query: { limit: this.o.pageSize ?? 500, continue: continueToken, fieldSelector: r.fieldSelector },
          signal,
          timeoutMs: 60_000,
        });
      } catch (err) {
        // An expired continue token: start the list over.
        if (continueToken && statusCodeOf(err) === 410) throw new GoneError();
        throw err;
      }
      for (const raw of page.items ?? []) items.push(trimObject(r, raw));
      continueToken = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    } while (continueToken && !signal.aborted);
    if (signal.aborted) return;
    if (this.phase === 'listing' && this.missingWarned) {
      this.log.info({ kind: this.kind }, 'CRD is now installed; watching it');
      this.missingWarned = false;
    }
    this.o.store.replaceKind(r.kind, items);
    this.resourceVersion = resourceVersion;
    this.o.metrics?.relists.inc({ kind: this.kind });
    this.log.debug({ kind: this.kind, count: items.length, resourceVersion }, 'listed');
    this.markSynced();
  }

  private async markMissing(signal: AbortSignal): Promise<void> {
    this.phase = 'missing';
    const r = this.o.resource;
    if (!this.missingWarned) {
      this.log.warn(
        { kind: this.kind, group: r.group, version: r.version, retryInMs: this.o.missingRetryMs ?? 30_000 },
        'CRD not installed; skipping this kind until it appears',
      );
      this.missingWarned = true;
    }
    // The CRD may have been removed while we watched it: forget what we had.
    this.o.store.replaceKind(r.kind, []);
    this.markSynced();
    await sleep(this.o.missingRetryMs ?? 30_000, signal);
  }

  private markSynced(): void {
    this.o.metrics?.synced.set({ kind: this.kind }, 1);
    if (this.hasSynced) return;
    this.hasSynced = true;
    this.o.onSynced();
  }

  private async watch(signal: AbortSignal): Promise<void> {
    const r = this.o.resource;
    const [lo, hi] = this.o.watchTimeoutSeconds ?? [300, 600];
    const timeoutSeconds = Math.round(lo + Math.random() * (hi - lo));
    await this.o.client
      .watch(collectionPath(r), (event) => this.onEvent(event), {
        query: {
          resourceVersion: this.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
          fieldSelector: r.fieldSelector,
        },
        signal,
        // Bookmarks arrive about once a minute, so a stream silent for much longer than the
        // server-side timeout is dead even if its TCP connection looks alive.
        idleTimeoutMs: (timeoutSeconds + 60) * 1000,
      })
      .catch((err: unknown) => {
        if (err instanceof KubeApiError && err.statusCode === 410) throw new GoneError();
        throw err;
      });
  }

  private onEvent(event: WatchEvent): void {
    const r = this.o.resource;
    if (event.type === 'ERROR') {
      const status = event.object as { code?: number; reason?: string; message?: string };
      if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone')
        throw new GoneError();
      throw new KubeApiError(
        `watch ${r.plural}: ${status.message ?? 'error event'}`,
        status.code ?? 500,
        status.reason,
        status,
      );
    }
    const meta = (event.object.metadata ?? {}) as { resourceVersion?: string };
    if (meta.resourceVersion) this.resourceVersion = meta.resourceVersion;
    this.o.metrics?.events.inc({ kind: this.kind, type: event.type });
    if (event.type === 'BOOKMARK') return;
    const obj = trimObject(r, event.object);
    if (meta.resourceVersion && event.type !== 'DELETED')
      this.o.onObserved?.(r.kind, objectNamespace(obj), obj.metadata.name, meta.resourceVersion);
    const changed =
      event.type === 'DELETED'
        ? this.o.store.delete(r.kind, objectNamespace(obj), obj.metadata.name)
        : this.o.store.put(obj);
    // Only effective changes: the echo of a status write changes nothing (docs/operations.md §8).
    if (changed)
      this.log.debug(
        {
          kind: this.kind,
          object: `${objectNamespace(obj)}/${obj.metadata.name}`,
          resourceVersion: meta.resourceVersion,
        },
        'watch change',
      );
  }
}
