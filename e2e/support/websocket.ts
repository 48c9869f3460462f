import * as crypto from 'node:crypto';
import * as http from 'node:http';
import * as net from 'node:net';
import type { Backend } from '../harness';

/**
 * A WebSocket backend for e2e tests: it accepts the upgrade (101 with the RFC 6455 accept key) and
 * then echoes every byte back, which is all a proxy in the middle can be shown to carry: after the
 * upgrade Envoy forwards the connection's bytes without reading frames.
 */

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC11B85';

/** Returns the Sec-WebSocket-Accept value for a Sec-WebSocket-Key. */
export function websocketAccept(key: string): string {
  return crypto
    .createHash('sha1')
    .update(key + WS_GUID)
    .digest('base64');
}

/** Starts the upgrade-and-echo backend on 127.0.0.1; plain requests get 426 Upgrade Required. */
export async function startWebSocketEchoBackend(name: string): Promise<Backend> {
  let upgrades = 0;
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => res.writeHead(426).end());
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    const key = req.headers['sec-websocket-key'];
    if (req.headers.upgrade?.toLowerCase() !== 'websocket' || typeof key !== 'string') {
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    upgrades += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Accept: ${websocketAccept(key)}\r\nx-backend: ${name}\r\n\r\n`,
    );
    if (head.length) socket.write(head);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    name,
    port,
    host: '127.0.0.1',
    get requests() {
      return upgrades;
    },
    get active() {
      return sockets.size;
    },
    release() {},
    attempts: () => 0,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Opens a WebSocket through `port` (upgrade request for `path` with Host `host`), sends `payload`
 * after the 101 and resolves with the status line, the response head, the bytes echoed back and
 * the Sec-WebSocket-Key it sent.
 */
export function websocketRoundTrip(
  port: number,
  host: string,
  path: string,
  payload: Buffer,
): Promise<{ statusLine: string; head: string; echoed: Buffer; key: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const key = crypto.randomBytes(16).toString('base64');
    let buf = Buffer.alloc(0);
    let head: string | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`websocket round trip timed out; received ${JSON.stringify(buf.toString('latin1'))}`));
    }, 20_000);
    socket.on('connect', () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (head === undefined) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        head = buf.subarray(0, end).toString('latin1');
        buf = buf.subarray(end + 4);
        if (!head.startsWith('HTTP/1.1 101')) {
          clearTimeout(timer);
          socket.destroy();
          resolve({ statusLine: head.split('\r\n')[0] ?? '', head, echoed: Buffer.alloc(0), key });
          return;
        }
        socket.write(payload);
      }
      if (buf.length >= payload.length) {
        clearTimeout(timer);
        socket.destroy();
        resolve({ statusLine: head.split('\r\n')[0] ?? '', head, echoed: buf, key });
      }
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
