import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GoTestParser, foldRepeats, runLane, summarize, testRunPattern } from './conformance/run';
import type { GoTestResult } from './conformance/run';

/**
 * Gateway API v1.6.1 conformance, status-only lane (e2e/conformance/run.ts): the real suite's
 * tests that only read status, against `convoy serve` in Kubernetes mode with a real
 * kube-apiserver, etcd and kube-controller-manager (namespace + garbage-collector controllers),
 * and no kubelet: placeholder Pods are patched Ready so the suite's readiness gate passes.
 * Each conformance test is one subtest here; tests the lane cannot judge are skipped with the
 * reason (feature not claimed, needs a Gateway address, vacuous for Convoy's features).
 */

/** The lines that say why a Go test failed, else its tail. */
function failureText(r: GoTestResult): string {
  const important = foldRepeats(r.output).filter((l) =>
    /Error|error|expected|Expected|not |timed out|--- FAIL|Messages:|actual|Test:/.test(l),
  );
  const lines = important.length > 0 ? important.slice(-80) : foldRepeats(r.output).slice(-80);
  return lines.join('\n');
}

describe('Gateway API conformance (status-only lane)', () => {
  test('go test -v output parser attributes results and output to ShortNames', () => {
    const results: string[] = [];
    const p = new GoTestParser((r) => results.push(`${r.name}=${r.outcome}`));
    const sample = [
      '=== RUN   TestConformance',
      '    suite.go:382: Test Setup: Ensuring GatewayClass has been accepted',
      '=== RUN   TestConformance/A',
      '=== PAUSE TestConformance/A',
      '=== RUN   TestConformance/B',
      '    conformance.go:72: Applying tests/b.yaml',
      '=== RUN   TestConformance/B/sub_test',
      '    helpers.go:1057: Conditions matched expectations',
      '=== CONT  TestConformance/A',
      '    helpers.go:99: Error Trace: expected Accepted=False',
      '=== NAME  TestConformance/B',
      '    apply.go:279: Deleting b Gateway',
      '=== RUN   TestConformance/C',
      '    conformance.go:55: Skipping C: suite does not support TCPRoute',
      '=== NAME  TestConformance',
      '    conformance.go:156: Conformance report:',
      '--- FAIL: TestConformance (3.20s)',
      '    --- PASS: TestConformance/B (0.40s)',
      '        --- PASS: TestConformance/B/sub_test (0.10s)',
      '    --- SKIP: TestConformance/C (0.00s)',
      '    --- FAIL: TestConformance/A (1.50s)',
      'FAIL',
    ];
    for (const l of sample) p.line(l);
    assert.deepEqual(results, ['B=PASS', 'C=SKIP', 'A=FAIL']);
    assert.equal(p.overall, 'FAIL');
    assert.ok(p.results.get('A')!.output.some((l) => l.includes('expected Accepted=False')));
    assert.ok(!p.results.get('B')!.output.some((l) => l.includes('expected Accepted=False')));
    assert.ok(p.results.get('B')!.output.some((l) => l.includes('Deleting b Gateway')));
    assert.ok(p.results.get('C')!.output.some((l) => l.includes('does not support TCPRoute')));
    assert.equal(p.results.get('A')!.seconds, 1.5);
    assert.ok(p.setupOutput.some((l) => l.includes('Test Setup')));
    assert.ok(!p.results.get('C')!.output.some((l) => l.includes('Conformance report')));
    assert.equal(testRunPattern(['A', 'B']), '^TestConformance$/^(A|B)$');
  });

  test('status-only conformance tests against convoy serve', { timeout: 15 * 60_000 }, async (t) => {
    const r = await runLane({ log: (l) => console.log(`[conformance lane] ${l}`) });
    for (const n of r.notes) t.diagnostic(n);
    t.diagnostic(`claimed features: ${r.claimedFeatures.join(',')}`);
    t.diagnostic(`timings (ms): ${JSON.stringify(r.timings)}`);
    console.log(summarize(r));
    const setupTail = r.setupOutput.slice(-60).join('\n');
    // Convoy's log tail goes with the first failure only: it is the same for every test.
    let convoyTail = r.convoyLogTail ?? '';
    const takeConvoyTail = () => {
      const t = convoyTail;
      convoyTail = '';
      return t;
    };
    for (const p of r.plan) {
      if (p.skip) {
        await t.test(p.name, { skip: p.skip }, () => undefined);
        continue;
      }
      const res = r.results.get(p.name);
      if (res?.outcome === 'SKIP') {
        const why = res.output.slice(1).join(' ').trim();
        await t.test(p.name, { skip: `skipped by the suite: ${why}` }, () => undefined);
        continue;
      }
      await t.test(p.name, () => {
        if (!res) {
          assert.fail(
            `no result from the conformance suite (exit ${r.exitCode}); suite output:\n${setupTail}\n${takeConvoyTail()}`,
          );
        }
        if (res.outcome !== 'PASS') {
          assert.fail(`conformance test ${p.name} failed:\n${failureText(res)}\n${takeConvoyTail()}`);
        }
      });
    }
  });
});
