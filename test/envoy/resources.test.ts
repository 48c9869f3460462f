import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { translateCluster } from '../../src/envoy/translate/clusters';
import { translateEndpoints } from '../../src/envoy/translate/endpoints';
import { translateSecret } from '../../src/envoy/translate/secrets';
import { Enum, ExtensionTypeUrl, durationMs, escapeRegex } from '../../src/envoy/translate/common';
import { translateFleet } from '../../src/envoy/translate';
import { envoyRoot } from '../../src/envoy/protos';
import type { ClusterModel } from '../../src/model/fleet';
import { httpFleet, httpsFleet } from './fixtures';

describe('clusters', () => {
  const model: ClusterModel = { name: 'ns/svc/80', protocol: 'http1', endpoints: [] };
  test('EDS over ADS, service name = cluster name, 5s connect timeout, panic threshold 0, 1024 retries', () => {
    assert.deepEqual(translateCluster(model), {
      name: 'ns/svc/80',
      type: Enum.DiscoveryType.EDS,
      eds_cluster_config: {
        eds_config: { ads: {}, resource_api_version: Enum.ApiVersion.V3 },
        service_name: 'ns/svc/80',
      },
      connect_timeout: { seconds: 5 },
      common_lb_config: { healthy_panic_threshold: { value: 0 } },
      circuit_breakers: { thresholds: [{ max_retries: { value: 1024 } }] },
    });
  });
  test('http2 only for http2 clusters', () => {
    const h2 = translateCluster({ ...model, protocol: 'http2' });
    assert.deepEqual(h2.typed_extension_protocol_options, {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': ExtensionTypeUrl.HttpProtocolOptions,
        explicit_http_config: { http2_protocol_options: {} },
      },
    });
    assert.equal(translateCluster({ ...model, protocol: 'tcp' }).typed_extension_protocol_options, undefined);
    assert.equal(translateCluster(model).typed_extension_protocol_options, undefined);
  });
});

describe('endpoints', () => {
  test('one locality, readiness as health status', () => {
    const cla = translateEndpoints({
      name: 'ns/svc/80',
      protocol: 'http1',
      endpoints: [
        { address: '10.0.0.1', port: 8080, ready: true },
        { address: 'fd00::1', port: 8080, ready: false },
      ],
    });
    assert.deepEqual(cla, {
      cluster_name: 'ns/svc/80',
      endpoints: [
        {
          lb_endpoints: [
            {
              endpoint: { address: { socket_address: { address: '10.0.0.1', port_value: 8080 } } },
              health_status: Enum.HealthStatus.HEALTHY,
            },
            {
              endpoint: { address: { socket_address: { address: 'fd00::1', port_value: 8080 } } },
              health_status: Enum.HealthStatus.UNHEALTHY,
            },
          ],
        },
      ],
    });
  });
  test('no endpoints: an empty assignment, still present', () => {
    assert.deepEqual(translateEndpoints({ name: 'ns/none/80', protocol: 'http1', endpoints: [] }), {
      cluster_name: 'ns/none/80',
    });
  });
});

describe('secrets', () => {
  test('inline certificate chain and key', () => {
    assert.deepEqual(translateSecret({ name: 'ns/cert', certificateChain: 'C', privateKey: 'K' }), {
      name: 'ns/cert',
      tls_certificate: { certificate_chain: { inline_string: 'C' }, private_key: { inline_string: 'K' } },
    });
  });
});

describe('fleet', () => {
  test('one resource per model node, names as in the model, route configs for every RDS name', () => {
    const model = httpsFleet();
    const res = translateFleet(model);
    assert.deepEqual(
      res.listeners.map((l) => l.name),
      model.ports.map((p) => p.name),
    );
    assert.deepEqual(
      res.clusters.map((c) => c.name),
      model.clusters.map((c) => c.name),
    );
    assert.deepEqual(
      res.endpoints.map((c) => c.cluster_name),
      model.clusters.map((c) => c.name),
    );
    assert.deepEqual(
      res.secrets.map((s) => s.name),
      model.secrets.map((s) => s.name),
    );
    const rdsNames = [
      model.ports[0].http!.routeConfigName,
      ...model.ports[1].filterChains.map((fc) => fc.routeConfigName!),
    ];
    assert.deepEqual(
      res.routes.map((r) => r.name),
      rdsNames,
    );
    // SNI isolation: each HTTPS route configuration holds only its own chain's hostnames.
    for (const fc of model.ports[1].filterChains) {
      const rc = res.routes.find((r) => r.name === fc.routeConfigName)!;
      assert.deepEqual(
        rc.virtual_hosts!.flatMap((v) => v.domains),
        fc.virtualHosts!.flatMap((v) => v.domains),
      );
    }
  });
  test('unchanged nodes translate to the same objects (memo), changed ones do not', () => {
    const a = httpFleet();
    const b: typeof a = { ...a, clusters: [...a.clusters], ports: [...a.ports] };
    b.clusters[0] = { ...b.clusters[0], endpoints: [] };
    const ra = translateFleet(a);
    const rb = translateFleet(b);
    assert.equal(rb.routes[0], ra.routes[0]);
    assert.equal(rb.clusters[1], ra.clusters[1]);
    assert.equal(rb.endpoints[1], ra.endpoints[1]);
    assert.notEqual(rb.endpoints[0], ra.endpoints[0]);
    assert.deepEqual(rb.clusters[0], ra.clusters[0]);
  });
});

describe('ExternalName clusters', () => {
  test('an ExternalName cluster resolves DNS itself on the Service port and gets no EDS assignment', () => {
    const out = translateFleet({
      fleet: 'default/gw',
      gateway: { namespace: 'default', name: 'gw' },
      ports: [],
      clusters: [
        { name: 'default/ext/8080', protocol: 'http1', endpoints: [], externalName: 'backend.example.net' },
      ],
      secrets: [],
    });
    assert.equal(out.endpoints.length, 0);
    const c = out.clusters[0]!;
    assert.equal(c.type, Enum.DiscoveryType.STRICT_DNS);
    assert.equal(c.eds_cluster_config, undefined);
    const addr = c.load_assignment?.endpoints?.[0]?.lb_endpoints?.[0]?.endpoint?.address?.socket_address;
    assert.deepEqual(
      { host: addr?.address, port: addr?.port_value },
      { host: 'backend.example.net', port: 8080 },
    );
  });
});

describe('helpers', () => {
  test('enum numbers match the loaded protos', () => {
    const root = envoyRoot();
    const protoEnums: Record<keyof typeof Enum, string> = {
      ApiVersion: 'envoy.config.core.v3.ApiVersion',
      DiscoveryType: 'envoy.config.cluster.v3.Cluster.DiscoveryType',
      DnsLookupFamily: 'envoy.config.cluster.v3.Cluster.DnsLookupFamily',
      HealthStatus: 'envoy.config.core.v3.HealthStatus',
      HeaderAppendAction: 'envoy.config.core.v3.HeaderValueOption.HeaderAppendAction',
      RedirectResponseCode: 'envoy.config.route.v3.RedirectAction.RedirectResponseCode',
      PathWithEscapedSlashesAction:
        'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.PathWithEscapedSlashesAction',
      DenominatorType: 'envoy.type.v3.FractionalPercent.DenominatorType',
      ClusterNotFoundResponseCode: 'envoy.config.route.v3.RouteAction.ClusterNotFoundResponseCode',
      SanType: 'envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher.SanType',
    };
    for (const [key, values] of Object.entries(Enum) as [keyof typeof Enum, Record<string, number>][]) {
      const e = root.lookupEnum(protoEnums[key]);
      for (const [name, value] of Object.entries(values))
        assert.equal(e.values[name], value, `${key}.${name}`);
    }
  });
  test('durations and regex escaping', () => {
    assert.deepEqual(durationMs(0), {});
    assert.deepEqual(durationMs(250), { nanos: 250_000_000 });
    assert.deepEqual(durationMs(61_001), { seconds: 61, nanos: 1_000_000 });
    assert.equal(escapeRegex('/a.b(c)*'), '/a\\.b\\(c\\)\\*');
    assert.ok(new RegExp('^' + escapeRegex('/x+y?[z]') + '$').test('/x+y?[z]'));
  });
});
