import type * as http from 'node:http';

/**
 * Server-sent events (the browser's EventSource) for the admin server: one long response per
 * client, each message a `data:` block. Used by the fleet page's live updates (docs/operations.md
 * §14). The number of clients is bounded, every client gets a comment line as a heartbeat (so a
 * vanished client is noticed by a failed write), and stop() ends every stream so shutdown never
 * waits for a browser tab.
 */

/**
 * Subscribes one client: `send` delivers a message (any text; JSON for the fleet page). Returns the
 * function that unsubscribes it, called when the client goes away or the server stops.
 */
export type EventSource = (send: (data: string) => void) => () => void;

/** Most concurrent event-stream clients per admin server; more get 503. */
export const MAX_EVENT_CLIENTS = 32;
const HEARTBEAT_MS = 15_000;
/** What a browser waits before reconnecting a dropped stream. */
const RETRY_MS = 2_000;

export class EventStreams {
  private readonly clients = new Set<() => void>();

  constructor(private readonly maxClients = MAX_EVENT_CLIENTS) {}

  get size(): number {
    return this.clients.size;
  }

  /** Serves `source` on `res` until the client leaves or stop(); false when at the client limit. */
  serve(req: http.IncomingMessage, res: http.ServerResponse, source: EventSource): boolean {
    if (this.clients.size >= this.maxClients) return false;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      // Proxies (nginx) would otherwise buffer the stream.
      'X-Accel-Buffering': 'no',
    });
    if (req.method === 'HEAD') {
      res.end();
      return true;
    }
    res.write(`retry: ${RETRY_MS}\n\n`);
    let closed = false;
    let unsubscribe: () => void = () => {};
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    const close = () => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      this.clients.delete(close);
      unsubscribe();
      if (!res.writableEnded) res.end();
    };
    this.clients.add(close);
    res.on('close', close);
    res.on('error', close);
    unsubscribe = source((data) => {
      if (closed) return;
      res.write(
        `${data
          .split(/\r\n|\r|\n/)
          .map((line) => `data: ${line}`)
          .join('\n')}\n\n`,
      );
    });
    if (closed) unsubscribe();
    return true;
  }

  /** Ends every stream (server shutdown). */
  stop(): void {
    for (const close of [...this.clients]) close();
  }
}
