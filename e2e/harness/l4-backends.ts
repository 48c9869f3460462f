import * as dgram from 'node:dgram';
import * as net from 'node:net';

/**
 * TCP and UDP echo backends on loopback for the TCPRoute/UDPRoute tests, and one-shot clients:
 * each backend answers `<name>:<what it got>`, so a reply tells which backend served it.
 */

export interface L4Backend {
  name: string;
  port: number;
  close(): Promise<void>;
}

/** Starts a TCP server that answers every chunk it reads with `<name>:<chunk>`. */
export function startTcpEcho(name: string): Promise<L4Backend> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk) => socket.write(`${name}:${chunk.toString('utf8')}`));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      resolve({
        name,
        port,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Starts a UDP socket that answers every datagram with `<name>:<datagram>` to its sender. */
export function startUdpEcho(name: string): Promise<L4Backend> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg, rinfo) =>
    socket.send(`${name}:${msg.toString('utf8')}`, rinfo.port, rinfo.address),
  );
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      resolve({
        name,
        port: socket.address().port,
        close: () => new Promise<void>((done) => socket.close(() => done())),
      });
    });
  });
}

/**
 * Connects to `port` on loopback, sends `payload` and returns the first reply, or `closed` when the
 * peer closes (or resets) the connection without answering within `timeoutMs`.
 */
export function tcpExchange(port: number, payload: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    let done = false;
    const finish = (result: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (chunk) => finish(chunk.toString('utf8')));
    socket.on('end', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    socket.on('error', () => finish('closed'));
  });
}

/** Sends one datagram to `port` on loopback and returns the first reply, or undefined after `timeoutMs`. */
export function udpExchange(port: number, payload: string, timeoutMs = 2000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    const finish = (result: string | undefined) => {
      clearTimeout(timer);
      socket.close();
      resolve(result);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    socket.on('message', (msg) => finish(msg.toString('utf8')));
    socket.on('error', () => finish(undefined));
    socket.send(payload, port, '127.0.0.1');
  });
}
