import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { kubernetesMetrics, leaderGauge } from '../../src/kubernetes/metrics';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { repoRoot } from '../support/repo';

/**
 * deploy/monitoring: every metric the Grafana dashboard and the Prometheus alert rules name exists
 * in Convoy's registry (read from the registry itself: ConvoyMetrics with process metrics, plus the
 * Kubernetes mode's), with the labels their selectors use; and the alerts cover what issue 16 asks.
 */

const dir = path.join(repoRoot(), 'deploy', 'monitoring');

interface Rule {
  alert: string;
  expr: string;
}

function alertRules(): Rule[] {
  const doc = parse(fs.readFileSync(path.join(dir, 'convoy-alerts.yaml'), 'utf8')) as {
    groups: { rules: Rule[] }[];
  };
  return doc.groups.flatMap((g) => g.rules);
}

function dashboardExprs(): string[] {
  const doc = JSON.parse(fs.readFileSync(path.join(dir, 'convoy-dashboard.json'), 'utf8')) as {
    panels: { targets?: { expr: string }[] }[];
  };
  return doc.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

/** name → label names of every metric Convoy registers. */
async function registry(): Promise<Map<string, { type: string; labels: Set<string> }>> {
  const metrics = new ConvoyMetrics({ processMetrics: true });
  kubernetesMetrics(metrics);
  leaderGauge(metrics);
  const out = new Map<string, { type: string; labels: Set<string> }>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    const labels = new Set<string>();
    for (const v of m.values) for (const l of Object.keys(v.labels)) labels.add(l);
    const declared = (metrics.registry.getSingleMetric(m.name) as unknown as { labelNames?: string[] })
      .labelNames;
    for (const l of declared ?? []) labels.add(l);
    out.set(m.name, { type: String(m.type), labels });
  }
  return out;
}

/** The metric a series name belongs to: histograms expose _bucket, _sum and _count series. */
function metricOf(series: string, known: Map<string, { type: string }>): string | undefined {
  if (known.has(series)) return series;
  const base = series.replace(/_(bucket|sum|count)$/, '');
  return known.get(base)?.type === 'histogram' ? base : undefined;
}

/** Each `convoy_…{label=…}` selector of an expression: the series name and the labels it matches on. */
function selectors(expr: string): { series: string; labels: string[] }[] {
  const out: { series: string; labels: string[] }[] = [];
  for (const m of expr.matchAll(/\b(convoy_[a-z0-9_]+)(\{([^}]*)\})?/g)) {
    const labels = [...(m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)].map((l) => l[1]);
    out.push({ series: m[1], labels });
  }
  return out;
}

describe('deploy/monitoring', () => {
  test('every metric and label the alerts and the dashboard use exists in the registry', async () => {
    const known = await registry();
    const exprs = [...alertRules().map((r) => r.expr), ...dashboardExprs()];
    assert.ok(exprs.length > 10);
    let checked = 0;
    for (const expr of exprs) {
      const found = selectors(expr);
      assert.ok(found.length > 0, `no Convoy metric in ${expr}`);
      for (const { series, labels } of found) {
        const metric = metricOf(series, known);
        assert.ok(metric, `${series} (in ${expr}) is not a metric Convoy registers`);
        for (const label of labels) {
          if (label === 'le') continue;
          assert.ok(known.get(metric)!.labels.has(label), `${series} has no label ${label} (in ${expr})`);
        }
        checked++;
      }
    }
    assert.ok(checked > 15);
  });

  test('the check itself refuses a metric Convoy does not have', async () => {
    const known = await registry();
    assert.equal(metricOf('convoy_made_up_total', known), undefined);
    assert.equal(metricOf('convoy_builds_total_bucket', known), undefined, 'a counter has no buckets');
    assert.equal(metricOf('convoy_build_duration_seconds_bucket', known), 'convoy_build_duration_seconds');
  });

  test('alerts cover NACKs, stale Envoys, certificate expiry, build errors and status write failures', () => {
    const exprs = alertRules().map((r) => r.expr);
    for (const metric of [
      'convoy_xds_nacks_total',
      'convoy_xds_type_states',
      'convoy_listener_certificate_expiry_seconds',
      'convoy_builds_total',
      'convoy_status_writes_total',
    ]) {
      assert.ok(
        exprs.some((e) => e.includes(metric)),
        `no alert on ${metric}`,
      );
    }
    const names = alertRules().map((r) => r.alert);
    assert.equal(new Set(names).size, names.length, 'alert names are unique');
  });
});
