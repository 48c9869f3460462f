import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics } from 'prom-client';
import { isLoopbackHost } from '../util/address-class';
import { parseHostPort } from '../util/host-port';
import type { Logger } from './logger';
import type { ConvoyMetrics } from './metrics';
import { bearerMatches } from './admin-token';
import { EventStreams } from './event-stream';
import type { EventSource } from './event-stream';

/**
 * Convoy's own HTTP surface: health, readiness, Prometheus metrics and read-only JSON debug
 * endpoints. Loopback by default (docs/security.md §3): it reveals configuration. Paths are
 * matched exactly; anything with dot segments or encoded slashes is refused, so no path trick
 * reaches an endpoint under another name.
 */

/** Supplies the body of a JSON endpoint; undefined means "not available" (404). */
export type Provider = () => unknown;

/** A static page or asset (HTML, CSS, JavaScript) served as it is. */
export interface Page {
  contentType: string;
  body: string;
}

export interface AdminServerOptions {
  /** `host:port`; port 0 picks a free port. Default 127.0.0.1:9090. */
  address?: string;
  logger: Logger;
  metrics: ConvoyMetrics;
  /** /readyz answers 200 once this returns true (e.g. after the first complete build). */
  isReady?: () => boolean;
  /** Extra GET endpoints answering JSON, e.g. { '/status': () => view.list() }. */
  routes?: Record<string, Provider>;
  /**
   * Plain-text renderings of JSON endpoints, by path, chosen by `?format=text` or
   * `Accept: text/plain` (e.g. the proxy-status table for '/debug/xds').
   */
  textRenderers?: Record<string, (data: unknown) => string>;
  /**
   * When set, every endpoint except /healthz and /readyz requires `Authorization: Bearer <token>`.
   * A function is asked on each such request (an AdminTokenFile re-reads a rotated token).
   */
  token?: string | (() => Promise<string>);
  /** 'health': serve only /healthz and /readyz (a probe address beside a loopback admin). */
  endpoints?: 'all' | 'health';
  /**
   * Pages and their assets by path (the fleet page). They are served with a Content-Security-Policy
   * that allows only scripts, styles and connections of this server, and never in a frame.
   */
  pages?: Record<string, () => Page | Promise<Page>>;
  /** Server-sent event streams by path (event-stream.ts), e.g. the fleet page's live updates. */
  eventStreams?: Record<string, EventSource>;
}

export const DEFAULT_ADMIN_SERVER_ADDRESS = '127.0.0.1:9090';

const BUILTIN = ['/healthz', '/readyz', '/metrics'];

export class AdminServer {
  private readonly server: http.Server;
  private readonly routes: Record<string, Provider>;
  private readonly text: Record<string, (data: unknown) => string>;
  private readonly pages: Record<string, () => Page | Promise<Page>>;
  private readonly eventSources: Record<string, EventSource>;
  private readonly streams = new EventStreams();
  private readonly address: { host: string; port: number };
  private boundPort: number | undefined;

  constructor(private readonly options: AdminServerOptions) {
    this.address = parseHostPort(options.address ?? DEFAULT_ADMIN_SERVER_ADDRESS, 'admin-address');
    this.routes = { ...(options.routes ?? {}) };
    this.pages = { ...(options.pages ?? {}) };
    this.eventSources = { ...(options.eventStreams ?? {}) };
    const paths = [
      ...Object.keys(this.routes),
      ...Object.keys(this.pages),
      ...Object.keys(this.eventSources),
    ];
    for (const path of paths) {
      if (!path.startsWith('/') || BUILTIN.includes(path) || path === '/')
        throw new Error(`admin route ${path}: invalid or reserved`);
    }
    if (new Set(paths).size !== paths.length) throw new Error('admin routes: a path is given twice');
    this.text = { ...(options.textRenderers ?? {}) };
    // Process metrics (CPU, memory, event loop lag) unless the registry already has them.
    const registry = options.metrics.registry;
    if (!registry.getSingleMetric('convoy_process_cpu_seconds_total')) {
      collectDefaultMetrics({ register: registry, prefix: 'convoy_' });
    }
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        options.logger.error({ err, path: req.url }, 'admin request failed');
        if (!res.headersSent) send(res, 500, 'text/plain', 'internal error\n');
        else res.destroy();
      });
    });
    // Debug clients are humans and scrapers; don't let idle sockets pin shutdown.
    this.server.keepAliveTimeout = 5000;
  }

  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.server.once('error', onError);
      this.server.listen(this.address.port, this.address.host, () => {
        this.server.off('error', onError);
        this.boundPort = (this.server.address() as AddressInfo).port;
        this.options.logger.info(
          {
            address: `${this.address.host}:${this.boundPort}`,
            endpoints: this.options.endpoints ?? 'all',
            token: this.options.token !== undefined,
          },
          this.options.endpoints === 'health' ? 'health server listening' : 'admin server listening',
        );
        resolve(this.boundPort);
      });
    });
  }

  get port(): number | undefined {
    return this.boundPort;
  }

  /** Stops accepting, closes idle keep-alive sockets and waits for in-flight requests. */
  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.streams.stop();
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }

  private paths(): string[] {
    return [
      ...BUILTIN,
      ...Object.keys(this.routes),
      ...Object.keys(this.pages),
      ...Object.keys(this.eventSources),
    ].sort();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const raw = req.url ?? '/';
    const rawPath = raw.split('?')[0];
    if (/(^|\/)\.\.?(\/|$)|%2e|%2f|%5c|\\|\/\//i.test(rawPath)) {
      return send(res, 400, 'text/plain', 'bad path\n');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return send(res, 405, 'text/plain', 'method not allowed\n');
    }
    const url = new URL(raw, 'http://admin.invalid');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/$/, '') : url.pathname;

    if (path === '/healthz') return send(res, 200, 'text/plain', 'ok\n');
    if (path === '/readyz') {
      let ready = false;
      try {
        ready = this.options.isReady ? this.options.isReady() === true : true;
      } catch (err) {
        this.options.logger.warn({ err }, 'readiness check failed');
      }
      return send(res, ready ? 200 : 503, 'text/plain', ready ? 'ready\n' : 'not ready\n');
    }

    if (this.options.endpoints === 'health') {
      return send(res, 404, 'text/plain', 'not found; this address serves only /healthz and /readyz\n');
    }

    // DNS rebinding: a web page on another name must not read a loopback admin through a browser.
    if (isLoopbackHost(this.address.host) && !loopbackHostHeader(req.headers.host)) {
      return send(res, 421, 'text/plain', 'this admin address answers only to loopback host names\n');
    }

    const token = this.options.token;
    if (token !== undefined) {
      const expected = typeof token === 'string' ? token : await token();
      if (!bearerMatches(req.headers.authorization, expected)) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        return send(res, 401, 'text/plain', 'unauthorized\n');
      }
    }

    if (path === '/') {
      return send(
        res,
        200,
        'text/plain',
        `Convoy admin endpoints:\n${this.paths()
          .map((p) => `  ${p}\n`)
          .join('')}`,
      );
    }
    if (path === '/metrics') {
      const registry = this.options.metrics.registry;
      return sendParts(res, 200, registry.contentType, this.options.metrics.textParts());
    }
    const page = this.pages[path];
    if (page) {
      const { contentType, body } = await page();
      res.setHeader('Content-Security-Policy', PAGE_POLICY);
      res.setHeader('X-Frame-Options', 'DENY');
      res.setHeader('Referrer-Policy', 'no-referrer');
      return send(res, 200, contentType, body);
    }
    const source = this.eventSources[path];
    if (source) {
      if (!this.streams.serve(req, res, source)) {
        res.setHeader('Retry-After', '10');
        return send(res, 503, 'text/plain', 'too many event-stream clients\n');
      }
      return;
    }
    const provider = this.routes[path];
    if (!provider) return send(res, 404, 'text/plain', `not found; try one of: ${this.paths().join(' ')}\n`);
    const data = await provider();
    if (data === undefined) return send(res, 404, 'text/plain', `${path}: not available\n`);
    const renderer = this.text[path];
    if (renderer && wantsText(url, req)) return send(res, 200, 'text/plain; charset=utf-8', renderer(data));
    const pretty = url.searchParams.has('pretty') || wantsText(url, req);
    return send(res, 200, 'application/json', JSON.stringify(data, null, pretty ? 2 : undefined) + '\n');
  }
}

/** Pages may load scripts, styles and data from this server only, and may not be framed. */
const PAGE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** True when a Host header names a loopback address (with any port), as a local browser sends. */
function loopbackHostHeader(host: string | undefined): boolean {
  if (host === undefined) return true;
  const name = /^\[([^\]]*)\](?::\d+)?$/.exec(host)?.[1] ?? host.replace(/:\d+$/, '');
  return isLoopbackHost(name);
}

function wantsText(url: URL, req: http.IncomingMessage): boolean {
  const format = url.searchParams.get('format');
  if (format !== null) return format === 'text' || format === 'table';
  const accept = req.headers.accept ?? '';
  return /^\s*text\/plain/i.test(accept);
}

/**
 * Sends a body made in parts (the /metrics text, made over several turns): each part becomes bytes
 * in the turn that made it, and the response goes out whole, with its length, at the end, so that
 * no single turn encodes the whole body (docs/operations.md §8 "Scrape cost (session 18)").
 */
async function sendParts(
  res: http.ServerResponse,
  status: number,
  contentType: string,
  parts: AsyncIterable<string>,
): Promise<void> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const part of parts) {
    const chunk = Buffer.from(part, 'utf8');
    chunks.push(chunk);
    length += chunk.length;
  }
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', length);
  res.end(res.req.method === 'HEAD' ? undefined : Buffer.concat(chunks, length));
}

function send(res: http.ServerResponse, status: number, contentType: string, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
