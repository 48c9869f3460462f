import * as net from 'node:net';

/**
 * Free loopback ports. The kernel picks an unused port for a listen on port 0; we close it and
 * hand the number out. Ports handed out by this process are never handed out twice, which avoids
 * the common case of two servers in one test racing for the same ephemeral port.
 */

const handedOut = new Set<number>();

export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = net.createServer();
      srv.unref();
      srv.once('error', reject);
      srv.listen(0, host, () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('could not find a free port after 50 attempts');
}

export async function freePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await freePort(host));
  return out;
}

/** True when something accepts TCP connections on host:port. */
export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.setTimeout(1000, () => {
      s.destroy();
      resolve(false);
    });
  });
}
