import * as http from 'node:http';
import * as net from 'node:net';

/**
 * A managed Envoy's admin listener (docs/operations.md §14): a free loopback port for it, and a
 * POST such as /healthcheck/fail or /drain_listeners?graceful. Every call is bounded by a
 * timeout: a stuck Envoy must not stall shutdown, which goes on to a signal anyway.
 */

/** POSTs `pathAndQuery` to the admin listener on 127.0.0.1:port; resolves with the HTTP status (0 on failure). */
export function postAdmin(port: number, pathAndQuery: string, timeoutMs = 2_000): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: pathAndQuery, method: 'POST', timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** A loopback TCP port that was free a moment ago (bound to port 0, then released). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}
