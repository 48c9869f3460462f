import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Gauge, Registry } from 'prom-client';
import { CertificateExpiryMetric } from '../../src/observability/certificate-expiry-metric';
import type { CertificateExpiry } from '../../src/observability/certificate-expiry-metric';
import { ConvoyMetrics } from '../../src/observability/metrics';

/** prom-client's own rendering of the same series: the reference the direct text must equal. */
async function promClientText(entries: CertificateExpiry[], now: number): Promise<string> {
  const registry = new Registry();
  const gauge = new Gauge({
    name: 'convoy_listener_certificate_expiry_seconds',
    help: 'Seconds until the earliest certificate a listener serves expires (negative: expired, still served).',
    labelNames: ['listener'] as const,
    registers: [registry],
  });
  for (const e of entries) gauge.set({ listener: e.listener }, Math.round((e.notAfter - now) / 1000));
  return registry.getSingleMetricAsString('convoy_listener_certificate_expiry_seconds');
}

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);

describe('CertificateExpiryMetric', () => {
  test('renders exactly what a prom-client Gauge renders, odd label values included', async () => {
    const entries: CertificateExpiry[] = [
      { listener: 'Gateway/default/gw/https', notAfter: NOW + 90 * 86400_000 + 499 },
      { listener: 'ListenerSet/ns/ls/a"b', notAfter: NOW - 1500 },
      { listener: 'ListenerSet/ns/ls/back\\slash', notAfter: NOW + 500 },
      { listener: 'ListenerSet/ns/ls/new\nline', notAfter: NOW - 500 },
    ];
    const metric = new CertificateExpiryMetric(() => entries);
    assert.equal(metric.text(NOW), await promClientText(entries, NOW));
  });

  test('follows the listeners between scrapes: added, removed and renewed', async () => {
    let entries: CertificateExpiry[] = [
      { listener: 'a', notAfter: NOW + 10_000 },
      { listener: 'b', notAfter: NOW + 20_000 },
    ];
    const metric = new CertificateExpiryMetric(() => entries);
    assert.equal(metric.text(NOW), await promClientText(entries, NOW));
    entries = [
      { listener: 'b', notAfter: NOW + 99_000 },
      { listener: 'c', notAfter: NOW - 5_000 },
    ];
    assert.equal(metric.text(NOW + 1000), await promClientText(entries, NOW + 1000));
    entries = [];
    assert.equal(metric.text(NOW), await promClientText(entries, NOW));
  });

  test('ConvoyMetrics.text() holds the gauge once, rendered directly, beside the registry metrics', async () => {
    const metrics = new ConvoyMetrics();
    metrics.certificateExpiries = () => [{ listener: 'x', notAfter: Date.now() + 3_600_000 }];
    metrics.builds.inc({ result: 'ok' });
    const text = await metrics.text();
    assert.equal(text.match(/^# TYPE convoy_listener_certificate_expiry_seconds gauge$/gm)?.length, 1);
    assert.match(text, /^convoy_listener_certificate_expiry_seconds\{listener="x"\} 3[56]\d\d$/m);
    assert.match(text, /^convoy_builds_total\{result="ok"\} 1$/m);
    const json = await metrics.registry.getMetricsAsJSON();
    const gauge = json.find((m) => m.name === 'convoy_listener_certificate_expiry_seconds');
    assert.deepEqual(
      gauge?.values.map((v) => v.labels),
      [{ listener: 'x' }],
    );
  });
});

describe('certificate-expiry gauge in parts (session 18)', () => {
  const entriesOf = (n: number): CertificateExpiry[] =>
    Array.from({ length: n }, (_, i) => ({
      listener: i % 97 === 0 ? `ListenerSet/ns/ls${i}/"odd\\\n"` : `ListenerSet/ns/ls${i}/https`,
      notAfter: NOW + (i - 50) * 1733,
    }));

  for (const n of [0, 1, 255, 256, 257, 512, 1000]) {
    test(`parts joined are the whole text, cut at every chance or never (${n} listeners)`, async () => {
      const entries = entriesOf(n);
      const reference = await promClientText(entries, NOW);
      const metric = new CertificateExpiryMetric(() => entries);
      assert.equal([...metric.parts(NOW, () => true)].join(''), reference);
      assert.equal([...metric.parts(NOW, () => false)].join(''), reference);
      let k = 0;
      assert.equal([...metric.parts(NOW, () => ++k % 3 === 0)].join(''), reference);
      const cuts = [...metric.parts(NOW, () => true)].length;
      assert.equal(cuts, Math.max(1, Math.ceil(n / 256)));
    });
  }

  test("ConvoyMetrics.text() is prom-client's own registry.metrics(), parts cut at every turn", async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: NOW });
    const metrics = new ConvoyMetrics();
    const entries = entriesOf(3000);
    metrics.certificateExpiries = () => entries;
    metrics.xdsStreamCounts = () => [
      { fleet: 'ns/gw', variant: 'delta', streams: 200 },
      { fleet: 'unknown', variant: 'sotw', streams: 1 },
    ];
    metrics.builds.inc({ result: 'ok' }, 3);
    metrics.xdsPushLatency.observe({ type: 'listener' }, 0.02);
    metrics.xdsPushes.inc({ type: 'cluster' });
    const reference = await metrics.registry.metrics();
    assert.equal(await metrics.text(), reference);
    const parts: string[] = [];
    for await (const part of metrics.textParts()) parts.push(part);
    assert.equal(parts.join(''), reference);
    assert.match(
      reference,
      /^convoy_listener_certificate_expiry_seconds\{listener="ListenerSet\/ns\/ls2999\/https"\} /m,
    );
  });
});
