import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PodWorld, conformanceBuildDir } from '../cluster/pod-world';
import { BRIDGE_ADDRESS } from '../cluster/pod-network';
import { enterPrivateWorld } from '../cluster/private-world';
import { REPO_ROOT } from '../cluster/cluster';
import { ConvoyProcess, waitFor } from '../harness';
import {
  envoyFleetRef,
  installManagedMode,
  loadBalancedEnvoyFleet,
  managedFleetArgs,
} from '../cluster/managed-fleets';
import { GoTestParser, foldRepeats } from './go-test-output';
import type { GoTestResult } from './go-test-output';
import { CONTROLLER_NAME, GATEWAY_CLASS } from './run';

/**
 * The Gateway API v1.6.1 conformance suite with traffic (`npm run conformance`): inside the
 * private network world (e2e/cluster/netns-run.sh), a pod world (real kube-apiserver,
 * kube-controller-manager, the pod runner running echo-basic and Envoy pods, the load-balancer
 * controller), `convoy serve` in Kubernetes mode with mTLS xDS on the bridge address and managed
 * fleets (docs/architecture.md §13: the GatewayClass names an EnvoyFleet, so Convoy gives each
 * Gateway its Envoy Deployment and LoadBalancer Service), and the suite's own binary with --report-output. Writes the report and a results table under
 * conformance/reports/v1.6.1/ for a full run; `--run-test NAME` runs one test and keeps the
 * committed report.
 *
 *   npm run conformance [-- --run-test NAME] [-- --keep]
 */

const XDS_PORT = 18000;
const XDS_ADDRESS = `${BRIDGE_ADDRESS}:${XDS_PORT}`;
/** The EnvoyFleet the conformance GatewayClass names: one Envoy per Gateway, short drains. */
const CONFORMANCE_FLEET = 'conformance';
const PROFILES = 'GATEWAY-HTTP,GATEWAY-TLS,GATEWAY-GRPC,GATEWAY-TCP,GATEWAY-UDP';
/**
 * Addresses for GatewayStaticAddresses (docs/operations.md §22): one the load-balancer controller's
 * pool can give (198.51.100.10-254, e2e/cluster/lb-controller.ts) and one outside it, which it
 * leaves pending as a cloud load balancer would.
 */
export const USABLE_ADDRESS = '198.51.100.200';
export const UNUSABLE_ADDRESS = '203.0.113.200';
export const REPORT_DIR = path.join(REPO_ROOT, 'conformance', 'reports', 'v1.6.1');

interface Args {
  runTest?: string;
  skipTests?: string;
  keep: boolean;
}

function parseArgs(argv: string[]): Args {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  return { runTest: value('--run-test'), skipTests: value('--skip-tests'), keep: argv.includes('--keep') };
}

function revision(): string {
  try {
    return execFileSync('git', ['-C', REPO_ROOT, 'rev-parse', '--short=12', 'HEAD'], {
      encoding: 'utf8',
    }).trim();
  } catch {
    return 'unknown';
  }
}

/** The first line that says why a test failed, for the results table. */
export function firstReason(r: GoTestResult): string {
  const lines = foldRepeats(r.output).map((l) => l.trim());
  const pick =
    (r.outcome === 'SKIP' ? lines.find((l) => /Skipping /.test(l)) : undefined) ??
    lines.find((l) => /Error:\s+\S/.test(l)) ??
    lines.find(
      (l) => /timed out|expected|Expected|unexpected|failed|not ready/i.test(l) && !/^(=== |--- )/.test(l),
    ) ??
    lines.find((l) => !/^(=== |--- )/.test(l)) ??
    '';
  return pick
    .replace(/^\S+\.go:\d+:\s*/, '')
    .replace(/\|/g, '\\|')
    .slice(0, 200);
}

/** A Markdown table: one row per test, in the order the suite ran them. */
export function resultsTable(results: Iterable<GoTestResult>): string {
  const rows = ['| test | result | seconds | first line of the reason |', '| --- | --- | --- | --- |'];
  let pass = 0;
  let fail = 0;
  let skip = 0;
  for (const r of results) {
    if (r.outcome === 'PASS') pass++;
    else if (r.outcome === 'FAIL') fail++;
    else skip++;
    rows.push(`| ${r.name} | ${r.outcome} | ${r.seconds} | ${r.outcome === 'PASS' ? '' : firstReason(r)} |`);
  }
  return `${pass} passed, ${fail} failed, ${skip} skipped\n\n${rows.join('\n')}\n`;
}

async function main(): Promise<void> {
  enterPrivateWorld();
  const args = parseArgs(process.argv.slice(2));
  const log = (l: string) => console.log(`[conformance] ${l}`);
  const binary = path.join(conformanceBuildDir(), 'gateway-conformance.test');
  const t0 = Date.now();
  let runnerLog = '';
  const runnerLine = (l: string) => (runnerLog ? fs.appendFileSync(runnerLog, `${l}\n`) : log(l));
  // Experimental-channel CRDs: Convoy claims features whose fields only that channel serves
  // (HTTPRoute retry); under the standard CRDs the API server would prune them.
  const world = await PodWorld.start({ keep: args.keep, log: runnerLine, crdChannel: 'experimental' });
  runnerLog = path.join(world.cluster.dir, 'pod-runner.log');
  log(
    `pod world up in ${Date.now() - t0} ms: ${JSON.stringify(world.timings)}; logs in ${world.cluster.dir}`,
  );
  let convoy: ConvoyProcess | undefined;
  try {
    await installManagedMode(world.cluster);
    await world.cluster.kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify(loadBalancedEnvoyFleet(CONFORMANCE_FLEET, { replicas: 1, drainTimeout: '1s' })),
    });
    await world.cluster.kubectlOk(['apply', '-f', path.join(REPO_ROOT, 'deploy', '02-gatewayclass.yaml')]);
    await world.cluster.kubectlOk([
      'patch',
      'gatewayclass',
      GATEWAY_CLASS,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { parametersRef: envoyFleetRef(CONFORMANCE_FLEET) } }),
    ]);
    convoy = await ConvoyProcess.start({
      name: 'convoy',
      allowLoopbackEndpoints: false,
      args: [
        '--kubeconfig',
        world.cluster.convoyKubeconfig,
        '--controller-name',
        CONTROLLER_NAME,
        '--xds-address',
        XDS_ADDRESS,
        '--xds-server-name',
        BRIDGE_ADDRESS,
        ...managedFleetArgs(XDS_PORT),
        '--leader-election-namespace',
        'convoy-system',
      ],
      workDir: path.join(world.cluster.dir, 'convoy'),
      readyTimeoutMs: 60_000,
    });
    log(`convoy serve --managed-fleets: xDS (mTLS) on ${XDS_ADDRESS}, log ${convoy.logFile}`);
    const features = await waitFor(
      async () => {
        const gc = await world.cluster.admin.request<{
          status?: {
            conditions?: { type: string; status: string }[];
            supportedFeatures?: { name: string }[];
          };
        }>('GET', `/apis/gateway.networking.k8s.io/v1/gatewayclasses/${GATEWAY_CLASS}`);
        const ok = gc.status?.conditions?.some((c) => c.type === 'Accepted' && c.status === 'True');
        return ok ? (gc.status?.supportedFeatures ?? []).map((f) => f.name) : undefined;
      },
      { what: `GatewayClass ${GATEWAY_CLASS} Accepted`, timeoutMs: 60_000, intervalMs: 200 },
    );
    log(`GatewayClass claims ${features.length} features: ${features.join(',')}`);
    const full = !args.runTest;
    const reportFile = full
      ? path.join(REPORT_DIR, 'convoy.yaml')
      : path.join(world.cluster.dir, 'report.yaml');
    fs.mkdirSync(path.dirname(reportFile), { recursive: true });
    const suiteArgs = [
      '-test.run=^TestConformance$',
      '-test.v',
      '-test.timeout=170m',
      `-kubeconfig=${world.cluster.adminKubeconfig}`,
      `-gateway-class=${GATEWAY_CLASS}`,
      `-conformance-profiles=${PROFILES}`,
      `-report-output=${reportFile}`,
      '-organization=convoy',
      '-project=convoy',
      `-url=${process.env.CONVOY_REPORT_URL ?? 'unpublished'}`,
      `-version=${revision()}`,
      '-contact=convoy maintainers',
      `-usable-address=${USABLE_ADDRESS}`,
      `-unusable-address=${UNUSABLE_ADDRESS}`,
      ...(args.runTest ? [`-run-test=${args.runTest}`] : []),
      ...(args.skipTests ? [`-skip-tests=${args.skipTests}`] : []),
    ];
    log(`${binary} ${suiteArgs.join(' ')}`);
    const suiteLog = path.join(world.cluster.dir, 'conformance.log');
    const parser = new GoTestParser((r) =>
      log(`--- ${r.outcome}: ${r.name} (${r.seconds}s)${r.outcome === 'FAIL' ? `: ${firstReason(r)}` : ''}`),
    );
    const t1 = Date.now();
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(binary, suiteArgs, {
        cwd: world.cluster.dir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, KUBECONFIG: world.cluster.adminKubeconfig },
      });
      const out = fs.createWriteStream(suiteLog);
      let buf = '';
      const feed = (chunk: Buffer) => {
        out.write(chunk);
        buf += chunk.toString('utf8');
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          parser.line(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      };
      child.stdout.on('data', feed);
      child.stderr.on('data', feed);
      child.once('error', reject);
      child.once('close', (c) => {
        if (buf) parser.line(buf);
        out.end();
        resolve(c);
      });
    });
    const minutes = ((Date.now() - t1) / 60_000).toFixed(1);
    const table = resultsTable(parser.results.values());
    log(`suite exited ${code} after ${minutes} min; log ${suiteLog}`);
    if (parser.results.size === 0) console.log(parser.setupOutput.slice(-80).join('\n'));
    console.log(table);
    const header = `# Convoy ${revision()}, Gateway API conformance v1.6.1 with traffic (${PROFILES}), ${minutes} min\n\n`;
    fs.writeFileSync(
      full ? path.join(REPORT_DIR, 'results.md') : path.join(world.cluster.dir, 'results.md'),
      header + table,
    );
    process.exitCode = code === 0 ? 0 : 1;
  } finally {
    await convoy?.stop().catch(() => undefined);
    await world.teardown();
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
