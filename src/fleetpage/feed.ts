/**
 * Keeps the fleet page's clients current: computes the fleet view when something may have changed
 * (a status publication, a change of Envoys' rejections) and, while any client is connected, at a
 * fixed interval for what has no event (an Envoy's ACK, a connection). A view is sent only when its
 * JSON differs from the last one sent, so idle pages cost one computation per interval and no
 * traffic, and every client sees the same sequence of views.
 */
import type { FleetView } from './view';

export interface FleetFeedOptions {
  /** How often the view is recomputed while a client is connected. */
  intervalMs?: number;
  /** Quiet time after a poke() before recomputing (a build publishes several things at once). */
  pokeDelayMs?: number;
  onError: (err: unknown) => void;
}

export class FleetFeed {
  private readonly clients = new Set<(json: string) => void>();
  private last: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pokeTimer: NodeJS.Timeout | undefined;
  private readonly intervalMs: number;
  private readonly pokeDelayMs: number;

  constructor(
    private readonly compute: () => FleetView,
    private readonly options: FleetFeedOptions,
  ) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.pokeDelayMs = options.pokeDelayMs ?? 50;
  }

  /** The view now (GET /fleet/view). */
  view(): FleetView {
    return this.compute();
  }

  /** Adds a client: it gets the current view at once, then every change. Returns its removal. */
  subscribe(send: (json: string) => void): () => void {
    // Clients already connected catch up first, so every client always holds the last view sent.
    if (this.clients.size > 0) this.refresh();
    else this.last = this.render();
    if (this.last !== undefined) send(this.last);
    this.clients.add(send);
    if (!this.timer) {
      this.timer = setInterval(() => this.refresh(), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      this.clients.delete(send);
      if (this.clients.size === 0) this.stop();
    };
  }

  /** Something the view shows may have changed: recompute shortly, if anyone is watching. */
  poke(): void {
    if (this.clients.size === 0 || this.pokeTimer) return;
    this.pokeTimer = setTimeout(() => {
      this.pokeTimer = undefined;
      this.refresh();
    }, this.pokeDelayMs);
    this.pokeTimer.unref();
  }

  /** Recomputes the view and sends it to every client when it changed. */
  refresh(): void {
    if (this.clients.size === 0) return;
    const json = this.render();
    if (json === undefined || json === this.last) return;
    this.last = json;
    for (const send of this.clients) {
      try {
        send(json);
      } catch (err) {
        this.options.onError(err);
      }
    }
  }

  /** Stops the timers (the clients' streams are ended by the admin server). */
  stop(): void {
    clearInterval(this.timer);
    clearTimeout(this.pokeTimer);
    this.timer = undefined;
    this.pokeTimer = undefined;
    this.last = undefined;
  }

  private render(): string | undefined {
    try {
      return JSON.stringify(this.compute());
    } catch (err) {
      this.options.onError(err);
      return undefined;
    }
  }
}
