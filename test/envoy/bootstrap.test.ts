import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import {
  buildBootstrap,
  parseGatewayRef,
  renderBootstrapYaml,
  renderXdsSdsFiles,
} from '../../src/envoy/bootstrap';
import type { BootstrapOptions } from '../../src/envoy/bootstrap';
import { envoyBinary } from '../../e2e/harness/envoy';
import { createCa, issueCert } from '../../e2e/harness/certs';
import { tempDir } from '../../e2e/harness/util';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const base: BootstrapOptions = {
  xdsAddress: 'convoy.convoy-system:18000',
  gateway: 'default/web',
  nodeId: 'web-0',
};

function xdsCluster(b: Obj): Obj {
  const c = b.static_resources.clusters.find((x: Obj) => x.name === 'convoy_xds');
  assert.ok(c, 'static cluster convoy_xds');
  return c;
}

describe('buildBootstrap', () => {
  test('defaults: delta ADS, node identity, loopback admin, wait for the control plane', () => {
    const b = buildBootstrap(base) as Obj;
    assert.deepEqual(b.node, { id: 'web-0', cluster: 'default/web' });
    assert.deepEqual(b.admin.address.socket_address, { address: '127.0.0.1', port_value: 19000 });
    const ads = b.dynamic_resources.ads_config;
    assert.equal(ads.api_type, 'DELTA_GRPC');
    assert.equal(ads.transport_api_version, 'V3');
    assert.equal(ads.set_node_on_first_message_only, true);
    assert.equal(ads.grpc_services[0].envoy_grpc.cluster_name, 'convoy_xds');
    for (const key of ['lds_config', 'cds_config']) {
      assert.deepEqual(b.dynamic_resources[key], {
        ads: {},
        resource_api_version: 'V3',
        initial_fetch_timeout: '0s',
      });
    }
  });

  test('--sotw selects GRPC', () => {
    const b = buildBootstrap({ ...base, sotw: true }) as Obj;
    assert.equal(b.dynamic_resources.ads_config.api_type, 'GRPC');
  });

  test('the SNI-dispatch layout adds its runtime layer below the admin layer; chains adds none', () => {
    const layers = (o: BootstrapOptions) => (buildBootstrap(o) as Obj).layered_runtime.layers as Obj[];
    assert.deepEqual(layers(base), [{ name: 'admin', admin_layer: {} }]);
    assert.deepEqual(layers({ ...base, listenerLayout: 'chains' }), layers(base));
    const sni = layers({ ...base, listenerLayout: 'sni-dispatch' });
    assert.deepEqual(
      sni.map((l) => l.name),
      ['sni-dispatch', 'admin'],
    );
    assert.equal(
      sni[0].static_layer['envoy.reloadable_features.propagate_upstream_rst_through_tunneled_tcp_proxy'],
      false,
    );
    // auto dispatches a port once it reaches the threshold, possibly long after Envoy started.
    assert.deepEqual(layers({ ...base, listenerLayout: 'auto' }), sni);
  });

  test('hostname → STRICT_DNS with IPv4 preferred; IP → STATIC', () => {
    const dns = xdsCluster(buildBootstrap(base) as Obj);
    assert.equal(dns.type, 'STRICT_DNS');
    assert.equal(dns.dns_lookup_family, 'V4_PREFERRED');
    assert.deepEqual(dns.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address, {
      address: 'convoy.convoy-system',
      port_value: 18000,
    });
    const ip = xdsCluster(buildBootstrap({ ...base, xdsAddress: '10.0.0.7:18000' }) as Obj);
    assert.equal(ip.type, 'STATIC');
    assert.equal(ip.dns_lookup_family, undefined);
    const v6 = xdsCluster(buildBootstrap({ ...base, xdsAddress: '[fd00::7]:18000' }) as Obj);
    assert.equal(v6.type, 'STATIC');
    assert.equal(
      v6.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address,
      'fd00::7',
    );
  });

  test('xDS cluster speaks HTTP/2 with keepalive', () => {
    const c = xdsCluster(buildBootstrap(base) as Obj);
    const opts = c.typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'];
    assert.equal(opts['@type'], 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions');
    assert.deepEqual(opts.explicit_http_config.http2_protocol_options.connection_keepalive, {
      interval: '30s',
      timeout: '5s',
    });
    assert.deepEqual(c.upstream_connection_options, { tcp_keepalive: {} });
    assert.equal(c.transport_socket, undefined, 'plaintext without TLS flags');
  });

  const tlsFiles = {
    certFile: '/c/tls.crt',
    keyFile: '/c/tls.key',
    caFile: '/c/ca.crt',
    sdsDir: '/etc/envoy',
    sdsPrefix: 'bootstrap.',
  };

  test('TLS to a hostname: client cert and CA through SDS files, SNI and DNS SAN match', () => {
    const c = xdsCluster(buildBootstrap({ ...base, tls: tlsFiles }) as Obj);
    const ctx = c.transport_socket.typed_config;
    assert.equal(
      ctx['@type'],
      'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
    );
    assert.equal(ctx.sni, 'convoy.convoy-system');
    assert.deepEqual(ctx.common_tls_context.tls_certificate_sds_secret_configs, [
      {
        name: 'convoy_xds_client_certificate',
        sds_config: {
          path_config_source: { path: '/etc/envoy/bootstrap.xds-client-certificate.yaml' },
          resource_api_version: 'V3',
        },
      },
    ]);
    const v = ctx.common_tls_context.combined_validation_context;
    assert.equal(v.validation_context_sds_secret_config.name, 'convoy_xds_trusted_ca');
    assert.equal(
      v.validation_context_sds_secret_config.sds_config.path_config_source.path,
      '/etc/envoy/bootstrap.xds-trusted-ca.yaml',
    );
    assert.deepEqual(v.default_validation_context.match_typed_subject_alt_names, [
      { san_type: 'DNS', matcher: { exact: 'convoy.convoy-system' } },
    ]);
    assert.deepEqual(ctx.common_tls_context.alpn_protocols, ['h2']);
  });

  test('the SDS files name the PEM files and watch their folders', () => {
    const files = renderXdsSdsFiles(tlsFiles);
    assert.deepEqual(Object.keys(files).sort(), [
      'bootstrap.xds-client-certificate.yaml',
      'bootstrap.xds-trusted-ca.yaml',
    ]);
    const cert = parse(files['bootstrap.xds-client-certificate.yaml']!).resources[0];
    assert.equal(cert['@type'], 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret');
    assert.deepEqual(cert.tls_certificate, {
      certificate_chain: { filename: '/c/tls.crt' },
      private_key: { filename: '/c/tls.key' },
      watched_directory: { path: '/c' },
    });
    const ca = parse(files['bootstrap.xds-trusted-ca.yaml']!).resources[0];
    assert.deepEqual(ca.validation_context, {
      trusted_ca: { filename: '/c/ca.crt' },
      watched_directory: { path: '/c' },
    });
  });

  test('TLS paths must be absolute (Envoy would resolve them against its working directory)', () => {
    assert.throws(
      () => buildBootstrap({ ...base, tls: { ...tlsFiles, certFile: 'tls.crt' } }),
      /tls.certFile must be an absolute path/,
    );
    assert.throws(() => buildBootstrap({ ...base, tls: { ...tlsFiles, sdsDir: 'etc' } }), /tls.sdsDir/);
  });

  test('TLS to an IP: no SNI, IP SAN match; serverName overrides both', () => {
    const tls = tlsFiles;
    const ip = xdsCluster(buildBootstrap({ ...base, xdsAddress: '127.0.0.1:18000', tls }) as Obj);
    assert.equal(ip.transport_socket.typed_config.sni, undefined);
    assert.deepEqual(
      ip.transport_socket.typed_config.common_tls_context.combined_validation_context
        .default_validation_context.match_typed_subject_alt_names,
      [{ san_type: 'IP_ADDRESS', matcher: { exact: '127.0.0.1' } }],
    );
    const named = xdsCluster(
      buildBootstrap({
        ...base,
        xdsAddress: '127.0.0.1:18000',
        tls: { ...tls, serverName: 'convoy.internal' },
      }) as Obj,
    );
    assert.equal(named.transport_socket.typed_config.sni, 'convoy.internal');
  });

  test('rejects bad input with the flag name', () => {
    assert.throws(() => buildBootstrap({ ...base, xdsAddress: 'nohost' }), /xds-address: expected HOST:PORT/);
    assert.throws(() => buildBootstrap({ ...base, xdsAddress: 'h:70000' }), /xds-address: port out of range/);
    assert.throws(() => buildBootstrap({ ...base, xdsAddress: 'h:0' }), /xds-address: port 0/);
    assert.throws(() => buildBootstrap({ ...base, gateway: 'web' }), /gateway: expected NAMESPACE\/NAME/);
    assert.throws(() => buildBootstrap({ ...base, gateway: 'Default/web' }), /gateway/);
    assert.throws(() => buildBootstrap({ ...base, adminAddress: '[nope]:1' }), /admin-address/);
    assert.throws(() => buildBootstrap({ ...base, nodeId: '' }), /node-id/);
  });

  test('node id defaults to the hostname', () => {
    const b = buildBootstrap({ xdsAddress: '127.0.0.1:1', gateway: 'a/b' }) as Obj;
    assert.equal(typeof b.node.id, 'string');
    assert.ok(b.node.id.length > 0);
  });

  test('rendering is deterministic YAML without anchors and round-trips', () => {
    const a = renderBootstrapYaml(base);
    assert.equal(a, renderBootstrapYaml({ ...base }));
    assert.ok(!/[&*]a\d/.test(a), 'no YAML aliases');
    assert.deepEqual(parse(a), buildBootstrap(base));
  });

  test('gateway reference parsing', () => {
    assert.deepEqual(parseGatewayRef('ns-1/gw.v2'), { namespace: 'ns-1', name: 'gw.v2' });
  });
});

describe('envoy --mode validate accepts every bootstrap variant', () => {
  let dir: string;
  let cleanup: () => void;
  let tls: { certFile: string; keyFile: string; caFile: string; sdsDir: string };
  let envoy: string;
  let seq = 0;

  before(() => {
    envoy = envoyBinary();
    ({ dir, cleanup } = tempDir('bootstrap-validate'));
    const ca = createCa(path.join(dir, 'pki'));
    const client = issueCert(ca, { name: 'envoy-client', usage: 'client' });
    tls = { certFile: client.certFile, keyFile: client.keyFile, caFile: ca.certFile, sdsDir: dir };
  });
  after(() => cleanup());

  function validate(options: BootstrapOptions): void {
    seq += 1;
    const file = path.join(dir, `bootstrap-${seq}.yaml`);
    fs.writeFileSync(file, renderBootstrapYaml(options));
    if (options.tls)
      for (const [name, text] of Object.entries(renderXdsSdsFiles(options.tls)))
        fs.writeFileSync(path.join(dir, name), text);
    const r = childProcess.spawnSync(
      envoy,
      ['--mode', 'validate', '-c', file, '--base-id', String((process.pid % 100_000) * 100 + 90 + seq)],
      { encoding: 'utf8', timeout: 60_000 },
    );
    const out = `${r.stdout}\n${r.stderr}`;
    assert.equal(r.status, 0, `envoy rejected ${file}:\n${out.slice(-3000)}`);
    assert.match(out, /OK/);
    assert.doesNotMatch(out, /\]\[(warning|error|critical)\]/, `warnings while validating:\n${out}`);
  }

  test('delta, hostname', () => validate(base));
  test('sotw, IPv4', () => validate({ ...base, xdsAddress: '127.0.0.1:18000', sotw: true }));
  test('delta, IPv6 and a custom admin address', () =>
    validate({ ...base, xdsAddress: '[::1]:18000', adminAddress: '127.0.0.1:0' }));
  test('mTLS to a hostname', () => validate({ ...base, tls }));
  test('mTLS to an IP, sotw', () => validate({ ...base, xdsAddress: '127.0.0.1:18000', sotw: true, tls }));
  test('with the readiness listener of managed fleets', () =>
    validate({ ...base, tls, readinessAddress: '0.0.0.0:19001' }));
});
