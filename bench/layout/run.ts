/**
 * The listener-layout benchmark (docs/xds.md §16, bench/README.md "Listener layout"): for the
 * chains layout and the SNI-dispatch layout, the control-plane cost of adding, removing and
 * re-certifying one hostname (bytes per Envoy over SotW and delta, time to an accepted snapshot)
 * at several sizes, and the data-plane cost through one real Envoy.
 *
 * Usage: node dist/bench/layout/run.js [--sizes 10,1000,5000] [--dp-sizes 10,5000] [--runs 3]
 *        [--seconds 5] [--no-dataplane] [--layouts chains,sni-dispatch,auto] [--threshold N]
 *        [--out bench/results/layout-<date>.json]
 * With `auto` (docs/xds.md §16), a size of threshold - 1 measures the switch: adding the
 * threshold-th hostname switches the port to SNI dispatch, removing it switches it back.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { envoyRoot } from '../../src/envoy/protos';
import { gitShortRev } from '../common';
import { repoRoot } from '../pki';
import { measureLayoutBytes } from './bytes';
import { measureDataPlane, med, type DataPlaneResult } from './dataplane';
import { LayoutPki } from './world';
import type { ListenerLayout } from '../../src/envoy/translate/sni-dispatch';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

function calibrationMs(): number {
  const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'tools', 'calibrate.js'), '3'], {
    encoding: 'utf8',
  });
  const m = /([\d.]+)/.exec(r.stdout.trim().split('\n').pop() ?? '');
  return m ? Number(m[1]) : NaN;
}

async function main(): Promise<void> {
  const sizes = arg('sizes', '10,1000,5000').split(',').map(Number);
  const dpSizes = arg('dp-sizes', '10,5000').split(',').map(Number);
  const runs = Number(arg('runs', '3'));
  const seconds = Number(arg('seconds', '5'));
  const dataplane = !process.argv.includes('--no-dataplane');
  const LAYOUTS = arg('layouts', 'chains,sni-dispatch').split(',') as ListenerLayout[];
  const threshold = process.argv.includes('--threshold') ? Number(arg('threshold', '')) : undefined;
  envoyRoot();
  const certs = new LayoutPki(Math.max(...sizes, ...dpSizes) + 1);
  const calibrationBefore = calibrationMs();

  const controlPlane: Record<string, unknown>[] = [];
  for (const n of sizes) {
    for (const catchAll of [false, true]) {
      for (const layout of LAYOUTS) {
        const r = measureLayoutBytes(
          layout,
          n,
          { wildcard: true, catchAll },
          certs,
          Math.max(3, runs),
          threshold,
        );
        controlPlane.push({
          layout,
          ...(layout === 'auto' ? { threshold } : {}),
          hostnames: n,
          catchAll,
          ...r,
        });
        for (const [kind, c] of Object.entries(r))
          console.log(
            `${layout.padEnd(12)} n=${String(n).padEnd(5)} ${catchAll ? 'fallback' : '        '} ${kind.padEnd(9)} ` +
              `sotw ${String(c.sotwBytes).padStart(9)} B  delta ${String(c.deltaBytes).padStart(7)} B  ` +
              `${c.ms} ms  [${c.types.join(', ')}]`,
          );
      }
    }
  }

  const dataPlane: DataPlaneResult[] = [];
  if (dataplane) {
    for (const n of dpSizes) {
      // auto's resources are byte-identical to the layout it picks (test/envoy/layout-choice.test.ts).
      const results = await measureDataPlane(
        LAYOUTS.filter((l) => l !== 'auto'),
        n,
        certs,
        {
          runs,
          seconds,
          concurrency: 8,
          latencyRequests: 2000,
          withChange: true,
        },
      );
      for (const r of results) {
        dataPlane.push(r);
        console.log(
          `${r.layout.padEnd(12)} n=${String(n).padEnd(5)} ready ${r.readyMs} ms  ` +
            `${med(r.handshakesPerSecond)} conn/s ${JSON.stringify(r.handshakesPerSecond)}  ` +
            `cpu/conn ${med(r.envoyCpuUsPerConnection)} µs ${JSON.stringify(r.envoyCpuUsPerConnection)}  cpu/req ${med(r.envoyCpuUsPerRequest)} µs ${JSON.stringify(r.envoyCpuUsPerRequest)}  ` +
            `p50 ${med(r.latencyP50Ms)} ms ${JSON.stringify(r.latencyP50Ms)} p99 ${med(r.latencyP99Ms)} ms ${JSON.stringify(r.latencyP99Ms)}  ` +
            `change ${JSON.stringify(r.change)}`,
        );
      }
    }
  }
  const calibrationAfter = calibrationMs();
  const out = {
    bench: 'listener-layout',
    date: new Date().toISOString(),
    commit: gitShortRev(repoRoot()),
    node: process.version,
    calibrationMs: { before: calibrationBefore, after: calibrationAfter },
    loadAverage: (await import('node:os')).loadavg(),
    controlPlane,
    dataPlane,
  };
  const file = arg(
    'out',
    path.join(
      repoRoot(),
      'bench',
      'results',
      `layout-${out.date.slice(0, 10)}-${process.version.split('.')[0]}.json`,
    ),
  );
  fs.writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  console.log(`wrote ${file}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
