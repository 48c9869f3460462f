import * as dgram from 'node:dgram';

/**
 * Forwards UDP for the test load-balancer controller (lb-controller.ts): datagrams that reach
 * `address:port` are relayed to an endpoint chosen per client session (client address and port),
 * and the endpoint's replies go back to that client from the listening socket, as a cloud load
 * balancer's UDP forwarding does. A session that stays idle for a minute is closed.
 */

const SESSION_IDLE_MS = 60_000;

interface Session {
  upstream: dgram.Socket;
  timer: NodeJS.Timeout;
}

export class UdpForwarder {
  private readonly sessions = new Map<string, Session>();

  private constructor(
    private readonly socket: dgram.Socket,
    private readonly pick: () => { ip: string; port: number } | undefined,
  ) {
    socket.on('message', (msg, rinfo) => this.relay(msg, rinfo));
    socket.on('error', () => undefined);
  }

  /**
   * Binds `address:port` (port 0: one the kernel picks, see `port`); `pick` chooses the endpoint of
   * each new session (undefined: drop).
   */
  static async bind(
    address: string,
    port: number,
    pick: () => { ip: string; port: number } | undefined,
  ): Promise<UdpForwarder> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, address, () => resolve());
    });
    return new UdpForwarder(socket, pick);
  }

  /** The UDP port the forwarder listens on. */
  get port(): number {
    return this.socket.address().port;
  }

  /** Sends one client datagram upstream, opening the client's session on its first datagram. */
  private relay(msg: Buffer, client: dgram.RemoteInfo): void {
    const key = `${client.address}:${client.port}`;
    let session = this.sessions.get(key);
    if (!session) {
      const ep = this.pick();
      if (!ep) return;
      const upstream = dgram.createSocket('udp4');
      upstream.on('message', (reply) => {
        this.touch(key);
        this.socket.send(reply, client.port, client.address);
      });
      upstream.on('error', () => this.end(key));
      upstream.connect(ep.port, ep.ip);
      session = { upstream, timer: setTimeout(() => this.end(key), SESSION_IDLE_MS) };
      this.sessions.set(key, session);
      upstream.once('connect', () => upstream.send(msg));
      return;
    }
    this.touch(key);
    session.upstream.send(msg);
  }

  /** Restarts a session's idle timer. */
  private touch(key: string): void {
    this.sessions.get(key)?.timer.refresh();
  }

  /** Closes one session. */
  private end(key: string): void {
    const s = this.sessions.get(key);
    if (!s) return;
    clearTimeout(s.timer);
    this.sessions.delete(key);
    try {
      s.upstream.close();
    } catch {
      // already closed
    }
  }

  /** Closes the listening socket and every session. */
  close(): void {
    for (const key of [...this.sessions.keys()]) this.end(key);
    this.socket.close();
  }
}
