import * as net from 'node:net';

/**
 * A loopback TCP proxy that can freeze its connections, as a peer whose process hangs would:
 * stall() stops reading from both sockets of every connection (the kernel buffers fill, then the
 * other end's writes block and its pings go unanswered); resume() reads again. Transparent to
 * what it carries, TLS included.
 */
export class StallingProxy {
  private readonly server: net.Server;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private stalled = false;
  private boundPort = 0;

  private constructor(private readonly target: { host: string; port: number }) {
    this.server = net.createServer((downstream) => this.accept(downstream));
  }

  /** Listens on 127.0.0.1 and a free port and forwards every connection to `target`. */
  static async start(target: { host: string; port: number }): Promise<StallingProxy> {
    const proxy = new StallingProxy(target);
    proxy.boundPort = await new Promise<number>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', () => resolve((proxy.server.address() as net.AddressInfo).port));
    });
    return proxy;
  }

  get port(): number {
    return this.boundPort;
  }

  get address(): string {
    return `127.0.0.1:${this.boundPort}`;
  }

  /** Stops reading from every socket, now and for connections accepted later. */
  stall(): void {
    this.stalled = true;
    for (const pair of this.pairs) for (const s of pair) s.pause();
  }

  resume(): void {
    this.stalled = false;
    for (const pair of this.pairs) for (const s of pair) s.resume();
  }

  /** Closes the listener and every connection. */
  close(): Promise<void> {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    this.pairs.clear();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(downstream: net.Socket): void {
    const upstream = net.connect(this.target);
    const pair: [net.Socket, net.Socket] = [downstream, upstream];
    this.pairs.add(pair);
    // Forwarding by hand rather than pipe(): pipe() resumes a source when its destination
    // drains, which would undo stall().
    const forward = (from: net.Socket, to: net.Socket) => {
      from.on('data', (chunk: Buffer) => {
        if (!to.write(chunk)) {
          from.pause();
          to.once('drain', () => {
            if (!this.stalled) from.resume();
          });
        }
      });
      from.on('end', () => to.end());
    };
    forward(downstream, upstream);
    forward(upstream, downstream);
    if (this.stalled) for (const s of pair) s.pause();
    const close = () => {
      this.pairs.delete(pair);
      downstream.destroy();
      upstream.destroy();
    };
    for (const s of pair) {
      s.on('error', close);
      s.on('close', close);
    }
  }
}
