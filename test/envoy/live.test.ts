import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { FleetModel, RouteModel } from '../../src/model/fleet';
import { translateFleet } from '../../src/envoy/translate';
import { encodeMessage } from '../../src/envoy/protos';
import { requireEnvoy, staticBootstrap } from './helpers';
import { EXAMPLE_CERT, EXAMPLE_KEY, TENANT_CERT, TENANT_KEY } from '../support/certs';

/**
 * The translation serving real traffic: Envoy runs the translated listeners (bound to 127.0.0.1,
 * ephemeral ports) with a Node upstream, and requests check Gateway API semantics end to end:
 * element-wise PathPrefix, Host matching with a port, header/query/method matches, rewrites,
 * header modifiers, redirects, and SNI isolation between HTTPS chains.
 */

const direct = (name: string, match: RouteModel['match'], body: string, status = 200): RouteModel => ({
  name,
  match,
  action: { kind: 'direct', status, body },
});
const prefix = (value: string) => ({ path: { type: 'PathPrefix' as const, value } });
const UPSTREAM = 'default/echo/80';

function liveFleet(upstreamPort: number): FleetModel {
  const forward = (
    name: string,
    match: RouteModel['match'],
    extra: Partial<RouteModel> = {},
    rewrite = {},
  ): RouteModel => ({
    name,
    match,
    action: { kind: 'forward', backends: [{ cluster: UPSTREAM, weight: 1 }], ...rewrite },
    ...extra,
  });
  return {
    fleet: 'infra/live',
    gateway: { namespace: 'infra', name: 'live' },
    ports: [
      {
        name: 'http-live',
        port: 0,
        http: {
          routeConfigName: 'http-live',
          virtualHosts: [
            {
              name: 'live.test',
              domains: ['live.test'],
              routes: [
                {
                  ...direct('foo', prefix('/foo/'), 'foo'),
                  responseHeaders: { set: [{ name: 'x-route', value: 'foo' }] },
                },
                direct('exact', { path: { type: 'Exact', value: '/exact' } }, 'exact'),
                forward(
                  'strip',
                  prefix('/strip'),
                  {},
                  { rewrite: { path: { type: 'ReplacePrefixMatch', value: '/' } } },
                ),
                forward(
                  'api',
                  prefix('/api'),
                  {
                    requestHeaders: {
                      set: [{ name: 'x-env', value: 'prod' }],
                      add: [{ name: 'x-add', value: 'a' }],
                      remove: ['x-remove'],
                    },
                  },
                  {
                    rewrite: {
                      hostname: 'backend.internal',
                      path: { type: 'ReplacePrefixMatch', value: '/v2' },
                    },
                  },
                ),
                forward(
                  'full',
                  prefix('/full'),
                  {},
                  { rewrite: { path: { type: 'ReplaceFullPath', value: '/replaced' } } },
                ),
                {
                  name: 'moved',
                  match: prefix('/moved'),
                  action: {
                    kind: 'redirect',
                    path: { type: 'ReplacePrefixMatch', value: '/new' },
                    statusCode: 302,
                  },
                },
                direct(
                  'hdr',
                  { ...prefix('/hdr'), headers: [{ name: 'X-A', type: 'Exact', value: 'yes' }] },
                  'hdr',
                ),
                direct('hdr-post', { ...prefix('/hdr'), method: 'POST' }, 'hdr-post'),
                direct('hdr-none', prefix('/hdr'), 'hdr-none'),
                direct(
                  'q',
                  {
                    ...prefix('/q'),
                    queryParams: [{ name: 'debug', type: 'RegularExpression', value: '^[12]$' }],
                  },
                  'q',
                ),
                direct('default', {}, 'live-default', 404),
              ],
            },
            { name: '*', domains: ['*'], routes: [direct('catch-all', {}, 'catch-all')] },
          ],
        },
        filterChains: [],
      },
      {
        name: 'https-live',
        port: 0,
        filterChains: [
          {
            name: 'ListenerSet/team-a/ls/a',
            serverNames: ['a.tenant.test'],
            mode: 'Terminate',
            protocol: 'HTTPS',
            secretNames: ['team-a/cert'],
            routeConfigName: 'https-live/a.tenant.test',
            virtualHosts: [
              { name: 'a.tenant.test', domains: ['a.tenant.test'], routes: [direct('a', {}, 'tenant-a')] },
            ],
          },
          {
            name: 'Gateway/infra/live/wild',
            serverNames: ['*.example.com'],
            mode: 'Terminate',
            protocol: 'HTTPS',
            secretNames: ['infra/cert'],
            routeConfigName: 'https-live/*.example.com',
            virtualHosts: [
              { name: '*.example.com', domains: ['*.example.com'], routes: [direct('w', {}, 'wildcard')] },
            ],
          },
          {
            name: 'Gateway/infra/live/dead',
            serverNames: ['dead.example.com'],
            mode: 'Passthrough',
            protocol: 'TLS',
            secretNames: [],
            tcpBackends: [],
          },
          {
            name: 'Gateway/infra/live/default',
            serverNames: [],
            mode: 'Terminate',
            protocol: 'HTTPS',
            secretNames: ['infra/cert'],
            routeConfigName: 'https-live/*',
            virtualHosts: [{ name: '*', domains: ['*'], routes: [direct('d', {}, 'https-default')] }],
          },
        ],
      },
    ],
    clusters: [
      {
        name: UPSTREAM,
        protocol: 'http1',
        endpoints: [{ address: '127.0.0.1', port: upstreamPort, ready: true }],
      },
    ],
    secrets: [
      { name: 'infra/cert', certificateChain: EXAMPLE_CERT, privateKey: EXAMPLE_KEY },
      { name: 'team-a/cert', certificateChain: TENANT_CERT, privateKey: TENANT_KEY },
    ],
  };
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function collect(res: http.IncomingMessage): Promise<Reply> {
  return new Promise((resolve, reject) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (body += c));
    res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    res.on('error', reject);
  });
}

describe('live Envoy serves the translation', () => {
  let envoy: ChildProcess | undefined;
  let upstream: http.Server;
  let dir: string;
  let envoyLog = '';
  const ports: Record<string, number> = {};

  before(async () => {
    const bin = requireEnvoy();
    upstream = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ path: req.url, headers: req.headers }));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const upstreamPort = (upstream.address() as AddressInfo).port;

    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-envoy-live-'));
    const bootstrap = {
      ...staticBootstrap(translateFleet(liveFleet(upstreamPort), { bindAddress: '127.0.0.1' })),
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    };
    const config = path.join(dir, 'bootstrap.pb');
    fs.writeFileSync(config, encodeMessage('envoy.config.bootstrap.v3.Bootstrap', bootstrap));
    const adminPath = path.join(dir, 'admin');
    envoy = spawn(
      bin,
      [
        '-c',
        config,
        '--disable-hot-restart',
        '--concurrency',
        '1',
        '--log-level',
        'warn',
        '--admin-address-path',
        adminPath,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    envoy.stderr!.on('data', (c: Buffer) => (envoyLog += c.toString()));

    const deadline = Date.now() + 30_000;
    for (;;) {
      if (envoy.exitCode !== null) throw new Error(`envoy exited ${envoy.exitCode}:\n${envoyLog}`);
      if (Date.now() > deadline) throw new Error(`envoy not ready in 30s:\n${envoyLog}`);
      try {
        const admin = fs.readFileSync(adminPath, 'utf8').trim();
        const res = await new Promise<Reply>((resolve, reject) =>
          http
            .get(`http://${admin}/listeners?format=json`, (r) => collect(r).then(resolve, reject))
            .on('error', reject),
        );
        const statuses = (JSON.parse(res.body) as { listener_statuses?: Obj[] }).listener_statuses ?? [];
        for (const s of statuses) {
          const addr = (s.local_address as Obj)?.socket_address as Obj | undefined;
          if (addr?.port_value) ports[s.name as string] = addr.port_value as number;
        }
        if (ports['http-live'] && ports['https-live']) break;
      } catch {
        // admin not up yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  after(async () => {
    envoy?.kill('SIGTERM');
    await new Promise((r) => upstream?.close(r));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  type Obj = Record<string, unknown>;
  const get = (p: string, host = 'live.test', headers: Obj = {}, method = 'GET'): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: ports['http-live'],
          path: p,
          method,
          headers: { host, ...headers },
          agent: false,
        },
        (res) => collect(res).then(resolve, reject),
      );
      req.on('error', reject);
      req.end();
    });
  const echo = async (p: string, headers: Obj = {}): Promise<{ path: string; headers: Obj }> => {
    const r = await get(p, 'live.test', headers);
    assert.equal(r.status, 200, `${p}: ${r.status} ${r.body}`);
    return JSON.parse(r.body) as { path: string; headers: Obj };
  };
  const tls = (servername: string, host: string): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port: ports['https-live'],
          path: '/',
          servername,
          headers: { host },
          rejectUnauthorized: false,
          agent: false,
        },
        (res) => collect(res).then(resolve, reject),
      );
      req.on('error', reject);
      req.end();
    });

  test('PathPrefix is element-wise', async () => {
    assert.equal((await get('/foo')).body, 'foo');
    assert.equal((await get('/foo/bar')).body, 'foo');
    assert.equal((await get('/foo/')).headers['x-route'], 'foo');
    const foobar = await get('/foobar');
    assert.deepEqual([foobar.status, foobar.body], [404, 'live-default']);
  });

  test('Exact, and Host matching ignores the port', async () => {
    assert.equal((await get('/exact')).body, 'exact');
    assert.equal((await get('/exact/')).body, 'live-default');
    assert.equal((await get('/foo', 'live.test:31337')).body, 'foo');
    assert.equal((await get('/foo', 'other.test')).body, 'catch-all');
  });

  test('header, method and query matches', async () => {
    assert.equal((await get('/hdr', 'live.test', { 'x-a': 'yes' })).body, 'hdr');
    assert.equal((await get('/hdr', 'live.test', {}, 'POST')).body, 'hdr-post');
    assert.equal((await get('/hdr')).body, 'hdr-none');
    assert.equal((await get('/q?debug=2')).body, 'q');
    assert.equal((await get('/q?debug=3')).body, 'live-default');
  });

  test('ReplacePrefixMatch with "/" strips the prefix', async () => {
    assert.equal((await echo('/strip/x/y')).path, '/x/y');
    assert.equal((await echo('/strip')).path, '/');
    assert.equal((await echo('/strip/')).path, '/');
  });

  test('ReplacePrefixMatch, host rewrite and request header modifiers', async () => {
    const r = await echo('/api/users?id=3', { 'x-env': 'dev', 'x-remove': '1', 'x-add': 'z' });
    assert.equal(r.path, '/v2/users?id=3');
    assert.equal(r.headers.host, 'backend.internal');
    assert.equal(r.headers['x-env'], 'prod');
    assert.equal(r.headers['x-remove'], undefined);
    assert.equal(r.headers['x-add'], 'z, a'); // appended, not overwritten
    assert.equal((await echo('/api')).path, '/v2');
  });

  test('ReplaceFullPath keeps the query string', async () => {
    assert.equal((await echo('/full/a/b?q=1')).path, '/replaced?q=1');
  });

  test('redirect with prefix replacement', async () => {
    const r = await get('/moved/x?k=v');
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, 'http://live.test/new/x?k=v');
  });

  test('SNI picks the chain; a chain answers only its own hostnames', async () => {
    assert.equal((await tls('a.tenant.test', 'a.tenant.test')).body, 'tenant-a');
    const crossed = await tls('a.tenant.test', 'www.example.com');
    assert.equal(crossed.status, 404, 'Host of another SNI must not reach its routes');
    assert.equal((await tls('www.example.com', 'www.example.com')).body, 'wildcard');
    assert.equal((await tls('unknown.test', 'unknown.test')).body, 'https-default');
  });

  test('a chain without backends closes the connection', async () => {
    await assert.rejects(tls('dead.example.com', 'dead.example.com'));
  });
});
