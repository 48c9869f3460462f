/**
 * Side by side with Envoy Gateway: the same generated world (bench/world.ts) in a real
 * kube-apiserver, Convoy and Envoy Gateway each started against it in Kubernetes mode, each
 * with one real Envoy, and the same measurements for both, taken from outside: start → Envoy
 * configured, a certificate Secret replaced / a route edited / a ListenerSet added → served,
 * xDS bytes Envoy received, Envoy's resource counts, control-plane RSS. Runs alternate between
 * the two (fresh cluster each), so a busy machine slows both alike; the ratio table uses medians.
 *
 * Usage: npm run bench -- --peer envoy-gateway [--size small|medium|large] [--runs 3]
 *   [--repeats 3] [--only convoy|envoy-gateway] [--no-write]
 * or: node dist/bench/peer.js --peer envoy-gateway ...
 * Runs inside e2e/cluster/netns-run.sh's private network and mount namespace (re-executes
 * itself there). Envoy Gateway is built by bench/peer/build-envoy-gateway.sh (cached).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../e2e/cluster/cluster';
import { enterPrivateWorld } from '../e2e/cluster/private-world';
import { calibrationMs, fmtBytes, fmtMs, gitShortRev, median, round } from './common';
import { loadPki } from './pki';
import { SIZES, hostnameOf } from './world';
import type { WorldSize } from './world';
import type { Contender } from './peer/contender';
import { ConvoyContender } from './peer/convoy';
import { EnvoyGatewayContender, buildEnvoyGateway } from './peer/envoy-gateway';
import { CHANGE_KINDS, measureOnce } from './peer/measure';
import type { RunResult } from './peer/measure';

/** N=1,000, shaped like large (2 routes per ListenerSet): the size of issue 15's earlier comparison. */
const PEER_SIZES: Record<string, WorldSize> = {
  small: SIZES.small!,
  medium: {
    name: 'medium',
    listenerSets: 1_000,
    routes: 2_000,
    services: 400,
    endpoints: 10,
    namespaces: 20,
  },
  large: SIZES.large!,
};

interface Row {
  measurement: string;
  unit: 'ms' | 'B' | 'count';
  pick: (r: RunResult) => number;
}

const ROWS: Row[] = [
  { measurement: 'start → Envoy configured', unit: 'ms', pick: (r) => r.configuredMs },
  ...CHANGE_KINDS.map((kind): Row => ({
    measurement: `${kind === 'listenerSet' ? 'ListenerSet added' : kind === 'route' ? 'route edited (302)' : 'certificate Secret replaced'} → served`,
    unit: 'ms',
    pick: (r) => median(r.changes.filter((c) => c.kind === kind).map((c) => c.servedMs)),
  })),
  { measurement: 'control-plane RSS, steady', unit: 'B', pick: (r) => r.rssSteady },
  { measurement: 'control-plane RSS, peak', unit: 'B', pick: (r) => r.rssPeak },
  { measurement: 'xDS bytes, cold sync', unit: 'B', pick: (r) => r.coldBytes },
  ...CHANGE_KINDS.map((kind): Row => ({
    measurement: `xDS bytes per change: ${kind}`,
    unit: 'B',
    pick: (r) => median(r.changes.filter((c) => c.kind === kind).map((c) => c.bytes)),
  })),
  { measurement: 'Envoy clusters', unit: 'count', pick: (r) => r.counts.clusters },
  { measurement: 'Envoy listeners', unit: 'count', pick: (r) => r.counts.listeners },
  { measurement: 'Envoy filter chains', unit: 'count', pick: (r) => r.counts.filterChains },
  { measurement: 'Envoy route configurations', unit: 'count', pick: (r) => r.counts.routeConfigs },
  { measurement: 'Envoy secrets', unit: 'count', pick: (r) => r.counts.secrets },
];

function fmt(v: number, unit: Row['unit']): string {
  if (unit === 'ms') return fmtMs(v);
  if (unit === 'B') return fmtBytes(v);
  return String(v);
}

interface Summary {
  measurement: string;
  unit: string;
  /** Per contender: median over runs and the [min, max] spread. */
  values: Record<string, { median: number; min: number; max: number }>;
  /** Envoy Gateway's median divided by Convoy's. */
  ratio: number | null;
}

function summarize(results: RunResult[], names: string[]): Summary[] {
  return ROWS.map((row) => {
    const values: Summary['values'] = {};
    for (const name of names) {
      const xs = results.filter((r) => r.contender === name).map(row.pick);
      if (xs.length) values[name] = { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
    }
    const c = values['convoy']?.median;
    const e = values['envoy-gateway']?.median;
    return {
      measurement: row.measurement,
      unit: row.unit,
      values,
      ratio: c && e !== undefined ? round(e / c, 2) : null,
    };
  });
}

function table(summary: Summary[], names: string[]): string {
  const cell = (s: Summary, name: string) => {
    const v = s.values[name];
    if (!v) return 'n/a';
    const unit = s.unit as Row['unit'];
    return v.min === v.max
      ? fmt(v.median, unit)
      : `${fmt(v.median, unit)} (${fmt(v.min, unit)}–${fmt(v.max, unit)})`;
  };
  const lines = [
    `| measurement | ${names.join(' | ')} | Envoy Gateway ÷ Convoy |`,
    `|---|${names.map(() => '---|').join('')}---|`,
    ...summary.map(
      (s) => `| ${s.measurement} | ${names.map((n) => cell(s, n)).join(' | ')} | ${s.ratio ?? 'n/a'} |`,
    ),
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      peer: { type: 'string', default: 'envoy-gateway' },
      size: { type: 'string', default: 'small' },
      runs: { type: 'string', default: '3' },
      repeats: { type: 'string', default: '3' },
      only: { type: 'string' },
      'timeout-s': { type: 'string', default: '1800' },
      'quiet-ms': { type: 'string', default: '3000' },
      'no-write': { type: 'boolean', default: false },
    },
    allowPositionals: true,
  });
  if (values.peer !== 'envoy-gateway') throw new Error(`unknown peer ${values.peer} (known: envoy-gateway)`);
  const size = PEER_SIZES[values.size];
  if (!size) throw new Error(`unknown size ${values.size} (small, medium, large)`);
  const log = (line: string) => process.stderr.write(`[peer] ${line}\n`);
  const names = values.only ? [values.only] : ['convoy', 'envoy-gateway'];
  // Built (or found in the cache) before entering the private world: the build needs the proxy.
  const build = names.includes('envoy-gateway') ? buildEnvoyGateway() : undefined;
  if (build)
    log(`Envoy Gateway ${build.version} (${build.binary}), its Gateway API ${build.gatewayApiVersion}`);
  enterPrivateWorld();
  const timeoutMs = Number(values['timeout-s']) * 1000;
  const contenders: Contender[] = names.map((name) =>
    name === 'convoy' ? new ConvoyContender(timeoutMs) : new EnvoyGatewayContender(build!, timeoutMs),
  );
  const pki = loadPki(size.listenerSets + Number(values.repeats), hostnameOf);
  const calibrationBefore = calibrationMs();
  log(
    `size ${size.name} (N=${size.listenerSets}), ${values.runs} runs × ${values.repeats} changes per kind, ` +
      `node ${process.version}, calibration ${calibrationBefore} ms`,
  );
  const results: RunResult[] = [];
  for (let run = 0; run < Number(values.runs); run++) {
    for (const contender of contenders) {
      log(`run ${run + 1}: ${contender.name}`);
      results.push(
        await measureOnce(contender, {
          size,
          pki,
          repeats: Number(values.repeats),
          timeoutMs,
          quietMs: Number(values['quiet-ms']),
          log,
        }),
      );
    }
  }
  const calibrationAfter = calibrationMs();
  const summary = summarize(results, names);
  console.log(table(summary, names));
  const rev = gitShortRev(REPO_ROOT);
  const out = {
    bench: 'peer',
    peer: values.peer,
    envoyGateway: build && {
      version: build.version,
      gatewayApi: build.gatewayApiVersion,
      mode: 'Kubernetes provider',
    },
    size,
    rev,
    date: new Date().toISOString(),
    node: process.version,
    platform: `${os.platform()} ${os.arch()}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`,
    calibrationMs: [calibrationBefore, calibrationAfter],
    runs: Number(values.runs),
    repeats: Number(values.repeats),
    summary,
    results,
  };
  if (!values['no-write']) {
    const dir = path.join(REPO_ROOT, 'bench', 'results', 'peer');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${size.name}-${rev}-node${process.versions.node.split('.')[0]}.json`);
    fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
    log(`results: ${path.relative(REPO_ROOT, file)}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
