import http from 'node:http';
import https from 'node:https';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * Talks to the Kubernetes API: a small HTTP client that the provider, the status writer and the
 * lease share (docs/architecture.md §11).
 *
 * @kubernetes/client-node loads the kubeconfig and applies credentials (tokens, client
 * certificates, exec plugins, the in-cluster token file, re-read on every request); the requests
 * themselves go through node:http(s) with one keep-alive agent, so LIST pagination, streaming
 * WATCH, subresources and preconditions are all under our control.
 */

/** Names Convoy in API server audit logs and as the default field manager of its writes. */
export const USER_AGENT = `convoy/${process.version} (${process.platform}/${process.arch})`;

/** Reports a non-2xx answer of the API server, with its status code, reason and body. */
export class KubeApiError extends Error {
  constructor(
    message: string,
    readonly statusCode: number,
    readonly reason?: string,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** Returns whether an error means "the API server could not be reached or did not answer". */
export function isTransportError(err: unknown): boolean {
  return !(err instanceof KubeApiError);
}

/**
 * Returns how long the API server asked us to wait before retrying (429 Too Many Requests from
 * API Priority and Fairness carries `details.retryAfterSeconds`), in ms; undefined when it did not say.
 */
export function retryAfterMsOf(err: unknown): number | undefined {
  if (!(err instanceof KubeApiError) || typeof err.body !== 'object' || err.body === null) return undefined;
  const seconds = (err.body as { details?: { retryAfterSeconds?: unknown } }).details?.retryAfterSeconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/** Returns the HTTP status of a KubeApiError; undefined for any other error. */
export function statusCodeOf(err: unknown): number | undefined {
  return err instanceof KubeApiError ? err.statusCode : undefined;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** Client-side timeout for the whole request; default 30 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Record<string, unknown>;
}

export interface WatchOptions {
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
  /** Abort the stream when nothing (not even a bookmark) arrived for this long. */
  idleTimeoutMs?: number;
}

/**
 * Loads a kubeconfig in the documented order: the explicit path, then $KUBECONFIG, then the
 * in-cluster service account (when KUBERNETES_SERVICE_HOST is set), then ~/.kube/config.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  const load = (what: string, loader: () => void) => {
    try {
      loader();
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const reason = e.code === 'ENOENT' ? 'no such file' : e.message.split('\n')[0];
      throw new Error(`cannot load ${what}: ${reason}`, { cause: err });
    }
  };
  const home = join(homedir(), '.kube', 'config');
  if (path) {
    load(`kubeconfig ${path}`, () => kc.loadFromFile(path));
  } else if (process.env.KUBECONFIG) {
    // loadFromDefault merges a colon-separated KUBECONFIG list the way kubectl does.
    load(`KUBECONFIG=${process.env.KUBECONFIG}`, () => kc.loadFromDefault());
  } else if (process.env.KUBERNETES_SERVICE_HOST) {
    load('the in-cluster configuration', () => kc.loadFromCluster());
  } else if (existsSync(home)) {
    load(`kubeconfig ${home}`, () => kc.loadFromFile(home));
  } else {
    throw new Error(
      'no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, or run inside a cluster',
    );
  }
  if (!kc.getCurrentCluster()) throw new Error('the kubeconfig has no current cluster');
  return kc;
}

/** Sends requests and streams watches to the API server of a kubeconfig's current cluster. */
export class KubeClient {
  readonly server: URL;
  private agent?: http.Agent;
  private agentKey = '';

  constructor(readonly kubeConfig: KubeConfig) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
  }

  /** Creates a client from the kubeconfig found as loadKubeConfig finds it. */
  static fromKubeconfig(path?: string): KubeClient {
    return new KubeClient(loadKubeConfig(path));
  }

  /** Sends one request and parses the JSON answer; throws KubeApiError for non-2xx answers. */
  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<T> {
    const res = await this.open(method, path, options.query, options, options.timeoutMs ?? 30_000);
    const text = await readBody(res);
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) throw toApiError(status, text, method, path);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Streams a watch, passing each event to onEvent.
   *
   * Resolves when the server ends the stream (timeoutSeconds reached), rejects on a transport error,
   * an idle stream, or a non-200 answer (KubeApiError, e.g. 410 Gone). ERROR events are passed to
   * onEvent; the caller decides what they mean.
   */
  async watch(path: string, onEvent: (event: WatchEvent) => void, options: WatchOptions = {}): Promise<void> {
    const query = { ...options.query, watch: true };
    const res = await this.open('GET', path, query, { signal: options.signal }, 0);
    const status = res.statusCode ?? 0;
    if (status !== 200) {
      const text = await readBody(res);
      throw toApiError(status, text, 'WATCH', path);
    }
    await new Promise<void>((resolve, reject) => {
      let buffered = '';
      let settled = false;
      let idle: NodeJS.Timeout | undefined;
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        if (idle) clearTimeout(idle);
        options.signal?.removeEventListener('abort', onAbort);
        res.destroy();
        if (err) reject(err);
        else resolve();
      };
      const armIdle = () => {
        if (!options.idleTimeoutMs) return;
        if (idle) clearTimeout(idle);
        idle = setTimeout(
          () => finish(new Error(`watch ${path}: no data for ${options.idleTimeoutMs} ms`)),
          options.idleTimeoutMs,
        );
        idle.unref();
      };
      const onAbort = () => finish();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      armIdle();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        armIdle();
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (!line) continue;
          let event: WatchEvent;
          try {
            event = JSON.parse(line) as WatchEvent;
          } catch {
            finish(new Error(`watch ${path}: malformed event`));
            return;
          }
          try {
            onEvent(event);
          } catch (err) {
            finish(err instanceof Error ? err : new Error(String(err)));
            return;
          }
        }
      });
      res.on('end', () => finish());
      res.on('error', (err) => finish(err));
      res.on('close', () =>
        finish(options.signal?.aborted ? undefined : new Error(`watch ${path}: connection closed`)),
      );
    });
  }

  private async open(
    method: string,
    path: string,
    query: RequestOptions['query'],
    options: Pick<RequestOptions, 'body' | 'contentType' | 'signal'>,
    timeoutMs: number,
  ): Promise<http.IncomingMessage> {
    const url = new URL(this.server.pathname.replace(/\/$/, '') + path, this.server);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const opts: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT };
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
    }
    if (opts.auth) headers.authorization = 'Basic ' + Buffer.from(opts.auth).toString('base64');
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] = options.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const isHttps = url.protocol === 'https:';
    const agent = this.agentFor(opts, isHttps);
    return new Promise((resolve, reject) => {
      const req = (isHttps ? https : http).request(
        url,
        { method, headers, agent, signal: options.signal, timeout: timeoutMs || undefined },
        resolve,
      );
      req.on('error', reject);
      if (timeoutMs)
        req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out after ${timeoutMs} ms`)));
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** Returns the keep-alive agent of the current TLS identity; rebuilt only when certificates change. */
  private agentFor(opts: https.RequestOptions, isHttps: boolean): http.Agent {
    const key = JSON.stringify([
      isHttps,
      bufKey(opts.ca),
      bufKey(opts.cert),
      bufKey(opts.key),
      opts.rejectUnauthorized,
      opts.servername,
    ]);
    if (this.agent && key === this.agentKey) return this.agent;
    this.agent?.destroy();
    this.agentKey = key;
    this.agent = isHttps
      ? new https.Agent({
          keepAlive: true,
          ca: opts.ca,
          cert: opts.cert,
          key: opts.key,
          rejectUnauthorized: opts.rejectUnauthorized,
          servername: opts.servername,
        })
      : new http.Agent({ keepAlive: true });
    return this.agent;
  }

  /** Closes idle keep-alive sockets so the process can exit. */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
    this.agentKey = '';
  }
}

/** Returns a string form of a credential field (Buffer as base64) for the agent key. */
function bufKey(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (Buffer.isBuffer(v)) return v.toString('base64');
  return String(v);
}

/** Reads a whole response body as UTF-8. */
function readBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/** Builds the KubeApiError of a non-2xx answer, taking message and reason from a Status body. */
function toApiError(status: number, text: string, method: string, path: string): KubeApiError {
  let body: unknown = text;
  let message = text.slice(0, 300) || http.STATUS_CODES[status] || 'error';
  let reason: string | undefined;
  try {
    const parsed = JSON.parse(text) as { message?: string; reason?: string };
    body = parsed;
    if (parsed.message) message = parsed.message;
    reason = parsed.reason;
  } catch {
    // not JSON; keep the text
  }
  return new KubeApiError(`${method} ${path}: ${status} ${message}`, status, reason, body);
}
