import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';
import type * as tls from 'node:tls';

/**
 * Echo backends for e2e tests. Every response is JSON describing the request:
 * { backend, method, path, host, headers, query, sni? }. Query parameters change behaviour:
 *   ?sleep=MS    answer after MS milliseconds, or earlier on release() (in-flight requests
 *                across config changes without depending on how fast the change applies)
 *   ?status=N    answer with status N
 *   ?key=K&failFirst=N[&failWith=W]
 *                the first N requests carrying key K fail, the later ones succeed (and say which
 *                attempt they were, `attempt`): W is a status code (default 500), `reset` (the
 *                connection is destroyed without an answer) or `hang` (no answer until the client
 *                gives up or release())
 */

export interface EchoResponse {
  backend: string;
  method: string;
  path: string;
  host: string;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, string>;
  /** TLS backends only: the SNI the client sent. */
  sni?: string;
  /** TLS backends only. */
  tls?: boolean;
  /** With ?key=K: how many requests with that key this backend had received, this one included. */
  attempt?: number;
}

export interface Backend {
  name: string;
  port: number;
  host: string;
  /** Requests answered so far. */
  readonly requests: number;
  /** Requests received and not yet answered (e.g. sleeping). */
  readonly active: number;
  /** Answers every sleeping request now. */
  release(): void;
  /** How many requests carried `?key=<key>`. */
  attempts(key: string): number;
  close(): Promise<void>;
}

interface Counter {
  n: number;
  active: number;
  sleepers: Set<() => void>;
  /** Requests seen per ?key= value. */
  keys: Map<string, number>;
}

function handler(name: string, counter: Counter, tlsInfo: boolean) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    counter.active += 1;
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        counter.active -= 1;
      }
    };
    res.on('close', finish);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://backend.invalid');
      const query = Object.fromEntries(url.searchParams.entries());
      const body: EchoResponse = {
        backend: name,
        method: req.method ?? '',
        path: url.pathname,
        host: req.headers.host ?? '',
        headers: req.headers,
        query,
      };
      if (tlsInfo) {
        const socket = req.socket as tls.TLSSocket;
        body.tls = true;
        const sni = (socket as tls.TLSSocket & { servername?: string | false }).servername;
        if (typeof sni === 'string') body.sni = sni;
      }
      let status = Number(query.status ?? 200);
      let sleepMs = Math.min(Number(query.sleep ?? 0) || 0, 60_000);
      if (query.key !== undefined) {
        const attempt = (counter.keys.get(query.key) ?? 0) + 1;
        counter.keys.set(query.key, attempt);
        body.attempt = attempt;
        if (attempt <= Number(query.failFirst ?? 0)) {
          const how = query.failWith ?? '500';
          if (how === 'reset') {
            finish();
            req.socket.destroy();
            return;
          }
          if (how === 'hang') sleepMs = 60_000;
          else status = Number(how);
        }
      }
      const send = () => {
        counter.n += 1;
        finish();
        const text = JSON.stringify(body);
        res.writeHead(Number.isInteger(status) && status >= 100 && status < 600 ? status : 200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
          'x-backend': name,
        });
        res.end(text);
      };
      if (sleepMs > 0) {
        const wake = () => {
          clearTimeout(t);
          counter.sleepers.delete(wake);
          if (!res.destroyed) send();
        };
        const t = setTimeout(wake, sleepMs);
        counter.sleepers.add(wake);
        res.on('close', () => {
          clearTimeout(t);
          counter.sleepers.delete(wake);
        });
      } else send();
    });
  };
}

function listen(server: net.Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as net.AddressInfo).port));
  });
}

function closer(server: http.Server | https.Server): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
}

/** A plain HTTP/1.1 echo backend on 127.0.0.1 and a free port. */
export function startEchoBackend(name: string, host = '127.0.0.1'): Promise<Backend> {
  return serveEcho(name, host, (h) => http.createServer(h));
}

/** An HTTPS echo backend (for TLS passthrough): it terminates TLS itself with the given cert. */
export function startTlsEchoBackend(
  name: string,
  creds: { cert: string | Buffer; key: string | Buffer },
  host = '127.0.0.1',
): Promise<Backend> {
  return serveEcho(name, host, (h) => https.createServer({ cert: creds.cert, key: creds.key }, h), true);
}

async function serveEcho(
  name: string,
  host: string,
  create: (h: ReturnType<typeof handler>) => http.Server | https.Server,
  tlsInfo = false,
): Promise<Backend> {
  const counter: Counter = { n: 0, active: 0, sleepers: new Set(), keys: new Map() };
  const server = create(handler(name, counter, tlsInfo));
  const port = await listen(server, host);
  return {
    name,
    port,
    host,
    get requests() {
      return counter.n;
    },
    get active() {
      return counter.active;
    },
    release() {
      for (const wake of [...counter.sleepers]) wake();
    },
    attempts(key: string) {
      return counter.keys.get(key) ?? 0;
    },
    close: closer(server),
  };
}
