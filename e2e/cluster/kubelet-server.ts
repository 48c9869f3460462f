import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { createCa, issueCert } from '../harness/certs';
import { renderLog } from './container-log';
import type { LogQuery } from './container-log';
import type { Container } from './container';

/**
 * The part of the kubelet's HTTPS API the API server proxies for `kubectl logs` (and the
 * conformance suite's mirror tests, which read echo-basic's logs since a time):
 * GET /containerLogs/NAMESPACE/POD/CONTAINER with sinceTime, sinceSeconds, tailLines,
 * timestamps, limitBytes and previous. `follow` answers with what is logged so far and ends.
 * The serving certificate is self-signed; the API server does not verify kubelets unless told
 * to (--kubelet-certificate-authority), and nothing else calls this server.
 */

export const KUBELET_PORT = 10250;

export type ContainerLookup = (namespace: string, pod: string, container: string) => Container | undefined;

/** Parses the query of a containerLogs request. */
export function logQuery(params: URLSearchParams): LogQuery & { previous: boolean } {
  const num = (k: string) =>
    params.has(k) && /^\d+$/.test(params.get(k)!) ? Number(params.get(k)) : undefined;
  return {
    sinceTime: params.get('sinceTime') ?? undefined,
    sinceSeconds: num('sinceSeconds'),
    tailLines: num('tailLines'),
    limitBytes: num('limitBytes'),
    timestamps: params.get('timestamps') === 'true',
    previous: params.get('previous') === 'true',
  };
}

export class KubeletServer {
  private constructor(private readonly server: https.Server) {}

  static async start(address: string, dir: string, lookup: ContainerLookup): Promise<KubeletServer> {
    const ca = createCa(path.join(dir, 'kubelet-pki'), 'convoy-kubelet-ca');
    const cert = issueCert(ca, { name: 'kubelet', ipAddresses: [address] });
    const server = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      const url = new URL(req.url ?? '/', 'https://kubelet');
      const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
      if (req.method !== 'GET' || !m) {
        res.writeHead(url.pathname === '/healthz' ? 200 : 404, { 'content-type': 'text/plain' });
        res.end(url.pathname === '/healthz' ? 'ok' : 'not found');
        return;
      }
      const [ns, pod, name] = m.slice(1).map(decodeURIComponent);
      const container = lookup(ns, pod, name);
      const q = logQuery(url.searchParams);
      const file = container?.logFile(q.previous);
      if (!container || !file || !fs.existsSync(file)) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end(`container "${name}" in pod "${pod}" has no ${q.previous ? 'previous ' : ''}logs`);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(renderLog(fs.readFileSync(file, 'utf8'), q));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(KUBELET_PORT, address, () => resolve());
    });
    return new KubeletServer(server);
  }

  stop(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}
