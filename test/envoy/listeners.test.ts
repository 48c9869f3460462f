import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FilterChain } from '../../src/generated/envoy/config/listener/v3/FilterChain';
import type { FilterChainModel, FleetModel, PortModel } from '../../src/model/fleet';
import { translateFleet } from '../../src/envoy/translate';
import {
  PER_CONNECTION_BUFFER_LIMIT_BYTES,
  assignServerNames,
  translateListener,
} from '../../src/envoy/translate/listeners';
import type { ListenerOptions } from '../../src/envoy/translate/listeners';
import { ExtensionTypeUrl } from '../../src/envoy/translate/common';
import { encodeMessage } from '../../src/envoy/protos';
import { httpsFleet, mixedFleet } from './fixtures';

type Obj = Record<string, unknown>;
const typedConfig = (chain: FilterChain, i = 0) => chain.filters![i].typed_config as unknown as Obj;

function https(name: string, serverNames: string[], extra: Partial<FilterChainModel> = {}): FilterChainModel {
  return {
    name,
    serverNames,
    mode: 'Terminate',
    protocol: 'HTTPS',
    secretNames: ['ns/cert'],
    routeConfigName: `https-443/${serverNames[0] ?? '*'}`,
    virtualHosts: [],
    ...extra,
  };
}

function port(filterChains: FilterChainModel[], extra: Partial<PortModel> = {}): PortModel {
  return { name: 'https-443', port: 443, filterChains, ...extra };
}

const opts = { bindAddress: '127.0.0.1' };

describe('listener', () => {
  test('HTTP port: address, buffer limit, one HCM chain on RDS, no listener filters', () => {
    const l = translateListener(
      { name: 'http-80', port: 80, http: { routeConfigName: 'http-80', virtualHosts: [] }, filterChains: [] },
      opts,
    )!;
    assert.deepEqual(l.address, { socket_address: { address: '127.0.0.1', port_value: 80 } });
    assert.deepEqual(l.per_connection_buffer_limit_bytes, { value: PER_CONNECTION_BUFFER_LIMIT_BYTES });
    assert.equal(l.stat_prefix, 'http-80');
    assert.equal(l.listener_filters, undefined);
    assert.equal(l.filter_chains?.length, 1);
    const chain = l.filter_chains![0];
    assert.equal(chain.filter_chain_match, undefined);
    const hcm = typedConfig(chain);
    assert.equal(hcm['@type'], ExtensionTypeUrl.HttpConnectionManager);
    assert.equal(hcm.stat_prefix, 'http-80');
    assert.deepEqual(hcm.rds, {
      config_source: { ads: {}, resource_api_version: 2 },
      route_config_name: 'http-80',
    });
    assert.equal(hcm.codec_type, undefined, 'AUTO is the default and is left out');
    assert.deepEqual(hcm.use_remote_address, { value: true });
    assert.deepEqual(hcm.normalize_path, { value: true });
    assert.equal(hcm.merge_slashes, true);
    assert.deepEqual(
      (hcm.http_filters as Obj[]).map((f) => (f.typed_config as Obj)['@type']),
      [ExtensionTypeUrl.Cors, ExtensionTypeUrl.Router],
      'the CORS filter is always present, so route CORS policies never change the Listener',
    );
  });

  test('default bind address is 0.0.0.0', () => {
    const res = translateFleet(httpsFleet());
    for (const l of res.listeners) assert.equal(l.address?.socket_address?.address, '0.0.0.0');
  });

  test('HTTPS chains: tls_inspector, SNI match, SDS over ADS, ALPN, HCM on the chain route config', () => {
    const l = translateListener(
      port([https('Gateway/ns/gw/a', ['a.example.com', '*.a.example.com'])]),
      opts,
    )!;
    assert.deepEqual(
      l.listener_filters?.map((f) => f.name),
      ['envoy.filters.listener.tls_inspector'],
    );
    const chain = l.filter_chains![0];
    assert.equal(chain.name, 'Gateway/ns/gw/a');
    assert.deepEqual(chain.filter_chain_match, { server_names: ['a.example.com', '*.a.example.com'] });
    const tls = chain.transport_socket!.typed_config as unknown as Obj;
    assert.equal(tls['@type'], ExtensionTypeUrl.DownstreamTlsContext);
    assert.deepEqual(tls.common_tls_context, {
      tls_certificate_sds_secret_configs: [
        { name: 'ns/cert', sds_config: { ads: {}, resource_api_version: 2 } },
      ],
      alpn_protocols: ['h2', 'http/1.1'],
    });
    assert.equal((typedConfig(chain).rds as Obj).route_config_name, 'https-443/a.example.com');
    assert.equal(typedConfig(chain).stat_prefix, 'https-443');
  });

  test('catch-all chain matches any TLS connection, not plaintext', () => {
    const l = translateListener(port([https('Gateway/ns/gw/any', [])]), opts)!;
    assert.deepEqual(l.filter_chains![0].filter_chain_match, { transport_protocol: 'tls' });
  });

  test('TLS passthrough: tcp_proxy, no transport socket, stat_prefix = chain name', () => {
    const l = translateListener(
      port([
        {
          name: 'Gateway/ns/gw/t',
          serverNames: ['t.example.com'],
          mode: 'Passthrough',
          protocol: 'TLS',
          secretNames: [],
          tcpBackends: [
            { cluster: 'ns/a/443', weight: 1 },
            { cluster: 'ns/b/443', weight: 0 },
          ],
        },
      ]),
      { ...opts, accessLog: { format: 'off' } },
    )!;
    const chain = l.filter_chains![0];
    assert.equal(chain.transport_socket, undefined);
    assert.deepEqual(typedConfig(chain), {
      '@type': ExtensionTypeUrl.TcpProxy,
      stat_prefix: 'Gateway/ns/gw/t',
      cluster: 'ns/a/443',
    });
  });

  test('TLS terminate: TLS context without ALPN, weighted tcp_proxy', () => {
    const [chain] = translateListener(
      port([
        {
          name: 'Gateway/ns/gw/t',
          serverNames: ['t.example.com'],
          mode: 'Terminate',
          protocol: 'TLS',
          secretNames: ['ns/cert'],
          tcpBackends: [
            { cluster: 'ns/a/7000', weight: 1 },
            { cluster: 'ns/b/7000', weight: 3 },
          ],
        },
      ]),
      opts,
    )!.filter_chains!;
    const tls = chain.transport_socket!.typed_config as unknown as Obj;
    assert.equal((tls.common_tls_context as Obj).alpn_protocols, undefined);
    assert.deepEqual(typedConfig(chain).weighted_clusters, {
      clusters: [
        { name: 'ns/a/7000', weight: 1 },
        { name: 'ns/b/7000', weight: 3 },
      ],
    });
  });

  test('a chain that cannot forward keeps its SNI and closes connections', () => {
    const l = translateListener(
      port([
        {
          name: 'Gateway/ns/gw/dead',
          serverNames: ['dead.example.com'],
          mode: 'Passthrough',
          protocol: 'TLS',
          secretNames: [],
          tcpBackends: [],
        },
        https('Gateway/ns/gw/nocert', ['nocert.example.com'], { secretNames: [] }),
        https('Gateway/ns/gw/any', []),
      ]),
      opts,
    )!;
    for (const chain of l.filter_chains!.slice(0, 2)) {
      assert.equal(chain.filters!.length, 1);
      assert.equal(chain.filters![0].name, 'envoy.filters.network.direct_response');
      assert.equal(chain.transport_socket, undefined);
    }
    assert.deepEqual(l.filter_chains![0].filter_chain_match, { server_names: ['dead.example.com'] });
  });

  test('duplicate server names, names and catch-alls: first chain wins, emptied chains dropped', () => {
    const chains = [
      https('A', ['a.com', 'b.com']),
      https('B', ['B.com', 'c.com']),
      https('C', ['a.com']),
      https('A', ['d.com']),
      https('any1', []),
      https('any2', []),
    ];
    assert.deepEqual(assignServerNames(chains), [
      ['a.com', 'b.com'],
      ['c.com'],
      undefined,
      undefined,
      [],
      undefined,
    ]);
    const l = translateListener(port(chains), opts)!;
    assert.deepEqual(
      l.filter_chains!.map((c) => c.name),
      ['A', 'B', 'any1'],
    );
  });

  test('a port with HTTP and TLS chains: plaintext goes to the HTTP chain', () => {
    const l = translateListener(
      port([https('A', ['a.com'])], { http: { routeConfigName: 'https-443-plain', virtualHosts: [] } }),
      opts,
    )!;
    assert.deepEqual(l.filter_chains![0].filter_chain_match, { transport_protocol: 'raw_buffer' });
    assert.ok(l.listener_filters);
  });

  test('a port with nothing to serve produces no listener', () => {
    assert.equal(translateListener(port([]), opts), undefined);
    const fleet: FleetModel = { ...mixedFleet(), ports: [port([])] };
    assert.deepEqual(translateFleet(fleet).listeners, []);
  });

  test('chains are memoized per model node', () => {
    const fc = https('A', ['a.com']);
    const a = translateListener(port([fc]), opts)!;
    const b = translateListener(port([fc]), { bindAddress: '0.0.0.0' })!;
    assert.equal(a.filter_chains![0], b.filter_chains![0]);
    const other = translateListener({ ...port([fc]), name: 'https-8443' }, opts)!;
    assert.notEqual(other.filter_chains![0], a.filter_chains![0], 'stat prefix differs, so must the chain');
  });
});

const OFF = { format: 'off' as const };

describe('compactness', () => {
  test('bytes per filter chain at scale', (t) => {
    const n = 2000;
    // Access logs (on by default) are measured apart, below: these bounds guard the chain itself.
    const measure = (
      make: (i: number) => FilterChainModel,
      options: ListenerOptions = { ...opts, accessLog: OFF },
    ): number => {
      const one = encodeMessage(
        'envoy.config.listener.v3.Listener',
        translateListener(port([make(0)]), options)!,
      ).length;
      const many = encodeMessage(
        'envoy.config.listener.v3.Listener',
        translateListener(port(Array.from({ length: n }, (_, i) => make(i))), options)!,
      ).length;
      return (many - one) / (n - 1);
    };
    const httpsPer = measure((i) =>
      https(`ListenerSet/tenant-${i}/ls/https`, [`app-${i}.tenant.example.com`], {
        secretNames: [`tenant-${i}/cert`],
        routeConfigName: `https-443/app-${i}.tenant.example.com`,
      }),
    );
    const passthroughPer = measure((i) => ({
      name: `ListenerSet/tenant-${i}/ls/tls`,
      serverNames: [`db-${i}.tenant.example.com`],
      mode: 'Passthrough',
      protocol: 'TLS',
      secretNames: [],
      tcpBackends: [{ cluster: `tenant-${i}/db/5432`, weight: 1 }],
    }));
    const line = `bytes per filter chain (${n} chains): HTTPS terminate ${httpsPer.toFixed(1)}, TLS passthrough ${passthroughPer.toFixed(1)}`;
    t.diagnostic(line);
    console.log(line);
    // Names alone (chain, SNI, secret, RDS) are ~150 bytes; a regression that repeats defaults or
    // inlines config per chain would blow well past these bounds. An HTTPS chain's HCM carries
    // the CORS filter (~90 bytes) ahead of the router.
    assert.ok(httpsPer < 800, line);
    assert.ok(passthroughPer < 250, line);
    // The default JSON access log is one fixed format per HCM or TCP proxy (translate/access-log.ts).
    const logged = (make: (i: number) => FilterChainModel) => measure(make, opts);
    const httpsLogged = logged((i) =>
      https(`ListenerSet/tenant-${i}/ls/https`, [`app-${i}.tenant.example.com`], {
        secretNames: [`tenant-${i}/cert`],
        routeConfigName: `https-443/app-${i}.tenant.example.com`,
      }),
    );
    const logLine = `with the default JSON access log: HTTPS terminate ${httpsLogged.toFixed(1)} bytes per chain`;
    t.diagnostic(logLine);
    assert.ok(httpsLogged - httpsPer < 600, logLine);
  });
});
