import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { FilterChainModel, FleetModel } from '../../src/model/fleet';
import { reuseUnchanged } from '../../src/model/reuse';

function chain(host: string, path = '/'): FilterChainModel {
  return {
    name: `ListenerSet/ns/${host}/https`,
    serverNames: [host],
    mode: 'Terminate',
    protocol: 'HTTPS',
    secretNames: [`ns/${host}`],
    routeConfigName: `https-8443/${host}`,
    virtualHosts: [
      {
        name: host,
        domains: [host],
        routes: [
          {
            name: `HTTPRoute/ns/${host}/rule/0/match/0`,
            match: { path: { type: 'PathPrefix', value: path } },
            action: { kind: 'forward', backends: [{ cluster: 'ns/svc/80', weight: 1 }] },
          },
        ],
      },
    ],
  };
}

function fleet(
  hosts: string[],
  opts: { path?: string; endpoint?: string; secret?: string } = {},
): FleetModel {
  return {
    fleet: 'ns/gw',
    gateway: { namespace: 'ns', name: 'gw' },
    ports: [
      {
        name: 'http-8080',
        port: 8080,
        http: { routeConfigName: 'http-8080', virtualHosts: [] },
        filterChains: [],
      },
      {
        name: 'https-8443',
        port: 8443,
        filterChains: hosts.map((h, i) => chain(h, i === 0 ? (opts.path ?? '/') : '/')),
      },
    ],
    clusters: [
      {
        name: 'ns/svc/80',
        protocol: 'http1',
        endpoints: [{ address: opts.endpoint ?? '10.0.0.1', port: 8080, ready: true }],
      },
    ],
    secrets: hosts.map((h, i) => ({
      name: `ns/${h}`,
      certificateChain: i === 0 ? (opts.secret ?? 'CERT') : 'CERT',
      privateKey: 'KEY',
    })),
  };
}

describe('reuseUnchanged', () => {
  test('an identical rebuild returns the previous model itself', () => {
    const prev = fleet(['a.example.com', 'b.example.com']);
    const next = fleet(['a.example.com', 'b.example.com']);
    assert.equal(reuseUnchanged(prev, next), prev);
    assert.equal(reuseUnchanged(undefined, next), next);
  });

  test('a route edit replaces only its chain and port; everything else is the previous node', () => {
    const prev = fleet(['a.example.com', 'b.example.com']);
    const next = reuseUnchanged(prev, fleet(['a.example.com', 'b.example.com'], { path: '/v2' }));
    assert.notEqual(next, prev);
    assert.equal(next.ports[0], prev.ports[0]);
    assert.notEqual(next.ports[1], prev.ports[1]);
    assert.notEqual(next.ports[1].filterChains[0], prev.ports[1].filterChains[0]);
    assert.equal(next.ports[1].filterChains[0].virtualHosts![0].routes[0].match.path!.value, '/v2');
    assert.equal(next.ports[1].filterChains[1], prev.ports[1].filterChains[1]);
    assert.equal(next.clusters, prev.clusters);
    assert.equal(next.secrets, prev.secrets);
  });

  test('a rotation replaces only its secret; an endpoint change only its cluster', () => {
    const prev = fleet(['a.example.com', 'b.example.com']);
    const rotated = reuseUnchanged(prev, fleet(['a.example.com', 'b.example.com'], { secret: 'NEW' }));
    assert.equal(rotated.ports, prev.ports);
    assert.notEqual(rotated.secrets[0], prev.secrets[0]);
    assert.equal(rotated.secrets[1], prev.secrets[1]);
    const moved = reuseUnchanged(prev, fleet(['a.example.com', 'b.example.com'], { endpoint: '10.0.0.2' }));
    assert.equal(moved.ports, prev.ports);
    assert.notEqual(moved.clusters[0], prev.clusters[0]);
  });

  test('an added chain keeps the existing chains, matched by name rather than position', () => {
    const prev = fleet(['b.example.com', 'c.example.com']);
    const next = reuseUnchanged(prev, fleet(['a.example.com', 'b.example.com', 'c.example.com']));
    const chains = next.ports[1].filterChains;
    assert.equal(chains.length, 3);
    assert.equal(chains[1], prev.ports[1].filterChains[0]);
    assert.equal(chains[2], prev.ports[1].filterChains[1]);
    assert.deepEqual(next, fleet(['a.example.com', 'b.example.com', 'c.example.com']));
  });

  test('the result always equals the new model', () => {
    const prev = fleet(['a.example.com']);
    const next = fleet(['a.example.com'], { path: '/x', endpoint: '10.0.0.9', secret: 'S' });
    assert.deepEqual(reuseUnchanged(prev, next), next);
    const removed = fleet([]);
    assert.deepEqual(reuseUnchanged(prev, removed), removed);
  });
});
