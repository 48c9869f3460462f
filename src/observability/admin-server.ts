import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics } from 'prom-client';
import { parseHostPort } from '../util/host-port';
import type { Logger } from './logger';
import type { ConvoyMetrics } from './metrics';
import { bearerMatches } from './admin-token';

/**
 * Convoy's own HTTP surface: health, readiness, Prometheus metrics and read-only JSON debug
 * endpoints. Loopback by default (docs/security.md §3): it reveals configuration. Paths are
 * matched exactly; anything with dot segments or encoded slashes is refused, so no path trick
 * reaches an endpoint under another name.
 */

/** Supplies the body of a JSON endpoint; undefined means "not available" (404). */
export type Provider = () => unknown;

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
}

export const DEFAULT_ADMIN_SERVER_ADDRESS = '127.0.0.1:9090';

const BUILTIN = ['/healthz', '/readyz', '/metrics'];

export class AdminServer {
  private readonly server: http.Server;
  private readonly routes: Record<string, Provider>;
  private readonly text: Record<string, (data: unknown) => string>;
  private readonly address: { host: string; port: number };
  private boundPort: number | undefined;

  constructor(private readonly options: AdminServerOptions) {
    this.address = parseHostPort(options.address ?? DEFAULT_ADMIN_SERVER_ADDRESS, 'admin-address');
    this.routes = { ...(options.routes ?? {}) };
    for (const path of Object.keys(this.routes)) {
      if (!path.startsWith('/') || BUILTIN.includes(path))
        throw new Error(`admin route ${path}: invalid or reserved`);
    }
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
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }

  private paths(): string[] {
    return [...BUILTIN, ...Object.keys(this.routes)].sort();
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
      return send(res, 200, registry.contentType, await registry.metrics());
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

function wantsText(url: URL, req: http.IncomingMessage): boolean {
  const format = url.searchParams.get('format');
  if (format !== null) return format === 'text' || format === 'table';
  const accept = req.headers.accept ?? '';
  return /^\s*text\/plain/i.test(accept);
}

function send(res: http.ServerResponse, status: number, contentType: string, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
