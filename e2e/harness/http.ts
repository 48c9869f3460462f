import * as http from 'node:http';
import * as https from 'node:https';
import type * as tls from 'node:tls';

/**
 * One-shot HTTP(S) requests through Envoy. Each request uses a new connection (no agent), so a
 * config change is observed by the next request and not hidden by a pooled connection, unless
 * the caller passes a keep-alive agent (load.ts does, for half of its workers).
 */

export interface HttpRequest {
  port: number;
  /** Address to connect to. Default 127.0.0.1. */
  address?: string;
  path?: string;
  method?: string;
  /** Host header (HTTP) — also the default SNI for HTTPS. */
  host?: string;
  headers?: Record<string, string>;
  body?: string;
  /**
   * HTTPS: connect with TLS, sending `servername` as SNI; certificates are not verified. With
   * `cert` and `key`, the client presents that certificate when the server asks for one.
   */
  tls?: { servername?: string; ca?: string | Buffer; cert?: string; key?: string };
  timeoutMs?: number;
  /** Plain HTTP only: a connection pool to use instead of a new connection per request. */
  agent?: http.Agent;
}

export interface PeerCertificateInfo {
  subjectCN?: string;
  subject: Record<string, unknown>;
  /** e.g. "DNS:a.example.com, DNS:b.example.com" */
  subjectAltName?: string;
  issuerCN?: string;
  fingerprint256?: string;
}

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Parses the body as JSON (throws with the body text when it is not JSON). */
  json<T = unknown>(): T;
  peerCertificate?: PeerCertificateInfo;
}

export function request(req: HttpRequest): Promise<HttpResult> {
  const timeoutMs = req.timeoutMs ?? 10_000;
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (req.host && !Object.keys(headers).some((h) => h.toLowerCase() === 'host')) headers.host = req.host;
  if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
  const base = {
    host: req.address ?? '127.0.0.1',
    port: req.port,
    path: req.path ?? '/',
    method: req.method ?? 'GET',
    headers,
    agent: req.agent ?? (false as const),
  };
  return new Promise((resolve, reject) => {
    const onResponse = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      let peer: PeerCertificateInfo | undefined;
      const socket = res.socket as tls.TLSSocket;
      if (req.tls && typeof socket.getPeerCertificate === 'function') {
        const c = socket.getPeerCertificate();
        if (c && Object.keys(c).length > 0) {
          peer = {
            subject: { ...(c.subject ?? {}) },
            subjectCN: typeof c.subject?.CN === 'string' ? c.subject.CN : undefined,
            subjectAltName: c.subjectaltname,
            issuerCN: typeof c.issuer?.CN === 'string' ? c.issuer.CN : undefined,
            fingerprint256: c.fingerprint256,
          };
        }
      }
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          peerCertificate: peer,
          json<T>() {
            try {
              return JSON.parse(body) as T;
            } catch {
              throw new Error(`response ${res.statusCode} is not JSON: ${body.slice(0, 300)}`);
            }
          },
        });
      });
    };
    const r = req.tls
      ? https.request(
          {
            ...base,
            servername: req.tls.servername ?? req.host,
            rejectUnauthorized: false,
            ca: req.tls.ca,
            ...(req.tls.cert ? { cert: req.tls.cert, key: req.tls.key } : {}),
          },
          onResponse,
        )
      : http.request(base, onResponse);
    r.setTimeout(timeoutMs, () =>
      r.destroy(
        new Error(`request ${base.method} ${base.path} to port ${req.port} timed out after ${timeoutMs} ms`),
      ),
    );
    r.on('error', reject);
    r.end(req.body);
  });
}
