import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UdpForwarder } from '../../e2e/cluster/udp-forwarder';
import { freePort, startUdpEcho, udpExchange } from '../../e2e/harness';

/** The test load balancer's UDP forwarding, on loopback: sessions, round robin, replies to the client. */

describe('UdpForwarder', () => {
  test('each client session goes to the next endpoint; replies come back to the client', async () => {
    const a = await startUdpEcho('a');
    const b = await startUdpEcho('b');
    const endpoints = [a, b].map((e) => ({ ip: '127.0.0.1', port: e.port }));
    let next = 0;
    const port = await freePort();
    const forwarder = await UdpForwarder.bind('127.0.0.1', port, () => endpoints[next++ % endpoints.length]);
    try {
      const replies = [];
      for (let i = 0; i < 4; i++) replies.push(await udpExchange(port, `m${i}`, 10_000));
      assert.deepEqual(replies, ['a:m0', 'b:m1', 'a:m2', 'b:m3']);
    } finally {
      forwarder.close();
      await a.close();
      await b.close();
    }
  });

  test('without an endpoint the datagram is dropped', async () => {
    const port = await freePort();
    const forwarder = await UdpForwarder.bind('127.0.0.1', port, () => undefined);
    try {
      assert.equal(await udpExchange(port, 'lost', 500), undefined);
    } finally {
      forwarder.close();
    }
  });
});
