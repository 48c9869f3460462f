import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { translateFleet } from '../../src/envoy/translate';
import { OTEL_COLLECTOR_CLUSTER } from '../../src/envoy/translate/tracing';
import { Enum } from '../../src/envoy/translate/common';
import type { EnvoyResources } from '../../src/envoy/resources';
import { parseTracingFlags, tracingForFleet } from '../../src/cli/tracing-flags';
import { XdsCache } from '../../src/xds/cache';
import { silentLogger } from '../../src/observability/logger';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { envoyValidate, requireEnvoy, staticBootstrap } from './helpers';
import { httpsFleet, mixedFleet } from './fixtures';

type Obj = Record<string, unknown>;
const COLLECTOR = { collector: { host: '127.0.0.1', port: 4317 } };

/** Every HCM's tracing block of a translation. */
function hcmTracing(res: EnvoyResources): unknown[] {
  const out: unknown[] = [];
  for (const l of res.listeners)
    for (const chain of l.filter_chains ?? [])
      for (const f of chain.filters ?? []) {
        const config = f.typed_config as unknown as Obj;
        if (String(config['@type']).endsWith('HttpConnectionManager')) out.push(config.tracing);
      }
  return out;
}

/** The static bootstrap's load assignments: the collector cluster carries its own. */
function withCollectorAssignment(res: EnvoyResources): EnvoyResources {
  const collector = res.clusters.find((c) => c.name === OTEL_COLLECTOR_CLUSTER);
  if (collector?.load_assignment) res.endpoints.push(collector.load_assignment);
  return res;
}

describe('OpenTelemetry tracing', () => {
  test('off by default: no tracing block, no collector cluster', () => {
    const res = translateFleet(mixedFleet());
    assert.ok(hcmTracing(res).every((t) => t === undefined));
    assert.ok(!res.clusters.some((c) => c.name === OTEL_COLLECTOR_CLUSTER));
  });

  // `envoy --mode validate` shows the configuration is accepted; it does not dial the collector.
  test('every HCM traces to the collector cluster, which the fleet carries; real Envoy accepts it', () => {
    requireEnvoy();
    const res = translateFleet(httpsFleet(), { bindAddress: '127.0.0.1', tracing: COLLECTOR });
    const blocks = hcmTracing(res);
    assert.ok(blocks.length > 0);
    for (const block of blocks) {
      const provider = (block as Obj).provider as Obj;
      assert.equal(provider.name, 'envoy.tracers.opentelemetry');
      const config = provider.typed_config as Obj;
      assert.deepEqual(config.grpc_service, { envoy_grpc: { cluster_name: OTEL_COLLECTOR_CLUSTER } });
      assert.equal(config.service_name, httpsFleet().fleet);
    }
    const collectors = res.clusters.filter((c) => c.name === OTEL_COLLECTOR_CLUSTER);
    assert.equal(collectors.length, 1);
    // An IP address needs no resolver; a name is resolved by Envoy.
    assert.equal(collectors[0]!.type, Enum.DiscoveryType.STATIC);
    const named = translateFleet(httpsFleet(), {
      tracing: { collector: { host: 'otel.example.com', port: 4317 } },
    }).clusters.find((c) => c.name === OTEL_COLLECTOR_CLUSTER);
    assert.equal(named?.type, Enum.DiscoveryType.STRICT_DNS);
    const run = envoyValidate(staticBootstrap(withCollectorAssignment(res)), 'tracing');
    assert.equal(run.status, 0, run.output);
    // The xDS cache's consistency check takes the fleet as it is.
    const cache = new XdsCache({ logger: silentLogger(), metrics: new ConvoyMetrics() });
    const fresh = translateFleet(httpsFleet(), { bindAddress: '127.0.0.1', tracing: COLLECTOR });
    const outcome = cache.setFleet('default/gw', fresh);
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
  });

  test('--tracing: a default, per-Gateway values and off; bad values refused', () => {
    const s = parseTracingFlags(['otel.example.com:4317', 'team-a/web=off', 'team-b/api=10.0.0.9:4317']);
    const f = tracingForFleet(s);
    assert.deepEqual(f('other/gw'), { collector: { host: 'otel.example.com', port: 4317 } });
    assert.equal(f('team-a/web'), undefined);
    assert.deepEqual(f('team-b/api'), { collector: { host: '10.0.0.9', port: 4317 } });
    assert.equal(tracingForFleet(parseTracingFlags([]))('x/y'), undefined);
    for (const bad of ['otel.example.com', 'host:0', 'Bad/x=h:1', 'on'])
      assert.throws(() => parseTracingFlags([bad]), /--tracing/, bad);
    // Byte-stable: the same settings give the same objects.
    const a = translateFleet(httpsFleet(), { tracing: f });
    const b = translateFleet(httpsFleet(), { tracing: f });
    assert.equal(JSON.stringify(a), JSON.stringify(b));
  });
});
