import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as dgram from 'node:dgram';
import { UdpForwarder } from '../../e2e/cluster/udp-forwarder';
import { startUdpEcho, udpExchange } from '../../e2e/harness';

/** The test load balancer's UDP forwarding, on loopback: sessions, round robin, replies to the client. */

/** Binds a UDP client socket on a kernel-chosen loopback port. */
function bindClient(): Promise<dgram.Socket> {
  const socket = dgram.createSocket('udp4');
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve(socket));
  });
}

/** Sends `payload` from `client` to `port` and returns the first reply, or undefined after `timeoutMs`. */
function exchange(
  client: dgram.Socket,
  port: number,
  payload: string,
  timeoutMs: number,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const onMessage = (msg: Buffer) => {
      clearTimeout(timer);
      resolve(msg.toString('utf8'));
    };
    const timer = setTimeout(() => {
      client.off('message', onMessage);
      resolve(undefined);
    }, timeoutMs);
    client.once('message', onMessage);
    client.send(payload, port, '127.0.0.1');
  });
}

describe('UdpForwarder', () => {
  test('each client session goes to the next endpoint; replies come back to the client', async () => {
    const a = await startUdpEcho('a');
    const b = await startUdpEcho('b');
    const endpoints = [a, b].map((e) => ({ ip: '127.0.0.1', port: e.port }));
    let next = 0;
    // Port 0 and clients that stay bound until the end: a port another test process holds, or a
    // client port the kernel hands out twice, would otherwise merge two sessions into one.
    const forwarder = await UdpForwarder.bind('127.0.0.1', 0, () => endpoints[next++ % endpoints.length]);
    const clients = await Promise.all([0, 1, 2, 3].map(() => bindClient()));
    try {
      const replies = [];
      for (const [i, client] of clients.entries()) {
        replies.push(await exchange(client, forwarder.port, `m${i}`, 10_000));
      }
      assert.deepEqual(replies, ['a:m0', 'b:m1', 'a:m2', 'b:m3']);
      // A second datagram from the first client stays in its session, on endpoint a.
      assert.equal(await exchange(clients[0], forwarder.port, 'again', 10_000), 'a:again');
    } finally {
      for (const client of clients) client.close();
      forwarder.close();
      await a.close();
      await b.close();
    }
  });

  test('without an endpoint the datagram is dropped', async () => {
    const forwarder = await UdpForwarder.bind('127.0.0.1', 0, () => undefined);
    try {
      assert.equal(await udpExchange(forwarder.port, 'lost', 500), undefined);
    } finally {
      forwarder.close();
    }
  });
});
