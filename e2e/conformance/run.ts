import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KubeApiError } from '../../src/kubernetes/client';
import type { KubeClient } from '../../src/kubernetes/client';
import { LocalCluster, REPO_ROOT } from '../cluster/cluster';
import { ConvoyProcess, sleep, tailFile, waitFor } from '../harness';
import { planTests } from './tests';
import type { PlannedTest } from './tests';
import { GoTestParser, foldRepeats, testRunPattern } from './go-test-output';
import type { GoTestResult, TestOutcome } from './go-test-output';

export { GoTestParser, foldRepeats, testRunPattern } from './go-test-output';
export type { GoTestResult, TestOutcome } from './go-test-output';

/**
 * Status-only Gateway API conformance lane: the real v1.6.1 conformance suite (built by
 * e2e/conformance/build.sh) against `convoy serve` in Kubernetes mode, with a real
 * kube-apiserver + etcd (e2e/cluster/cluster.ts) and kube-controller-manager running only the
 * namespace and garbage-collector controllers, so deletions (namespaces included) complete.
 *
 * There is no kubelet and no data plane: Deployments never get Pods, Gateways get no address.
 * The suite's readiness gate (NamespacesMustBeReady: every Pod Ready, at least one Pod) is met
 * by one placeholder Pod per base namespace whose status this lane patches to Running/Ready —
 * the minimum of a fake kubelet. Only tests that read status and never need an address or send
 * traffic are selected (tests.ts). Not valid for a conformance report.
 *
 * Usable as a script: `node <outDir>/e2e/conformance/run.js [--only A,B] [--keep]`.
 */

export const GATEWAY_CLASS = 'convoy';
export const CONTROLLER_NAME = 'convoy.dev/gateway-controller';
export const BASE_NAMESPACES = [
  'gateway-conformance-infra',
  'gateway-conformance-app-backend',
  'gateway-conformance-web-backend',
];
export const PLACEHOLDER_POD = 'convoy-lane-placeholder';

/**
 * The suite waits up to 180 s for a Gateway or ListenerSet condition and 60 s for listeners and
 * route parents. Convoy converges in well under a second here, and with nothing to provision a
 * wrong status never becomes right by waiting longer; 30 s keeps a regression from costing
 * minutes per failing check in CI (the suite's own knob, -timeout-config-overrides).
 */
export const STATUS_TIMEOUT_OVERRIDES = [
  'GatewayMustHaveCondition:30',
  'ListenerSetMustHaveCondition:30',
  'GatewayStatusMustHaveListeners:30',
  'GatewayListenersMustHaveConditions:30',
  'ListenerSetListenersMustHaveConditions:30',
  'HTTPRouteMustNotHaveParents:30',
  'HTTPRouteMustHaveCondition:30',
  'TLSRouteMustHaveCondition:30',
  'RouteMustHaveParents:30',
  'LatestObservedGenerationSet:30',
  'NamespacesMustBeReady:60',
  'GWCMustBeAccepted:60',
].join(';');

export interface LaneResult {
  claimedFeatures: string[];
  plan: PlannedTest[];
  results: Map<string, GoTestResult>;
  /** Lines printed outside any selected test (suite setup, top-level failures). */
  setupOutput: string[];
  /** Overall outcome of TestConformance as Go reported it (undefined if it never finished). */
  overall?: TestOutcome;
  exitCode: number | null;
  logDir: string;
  timings: Record<string, number>;
  notes: string[];
  /** The last lines of Convoy's log when the suite ended (JSON lines). */
  convoyLogTail?: string;
}

export interface LaneOptions {
  /** Run only these ShortNames (default: every planned test). */
  only?: string[];
  /** Whole-suite deadline for the conformance binary (default 10 min). */
  suiteTimeoutMs?: number;
  /** Keep the cluster's temp dir and logs. */
  keep?: boolean;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/**
 * The conformance test binary: $CONVOY_CONFORMANCE_BIN (the binary, or the directory holding
 * it), else the cache dir printed on the last line of e2e/conformance/build.sh (a no-op when the
 * cache is warm).
 */
export function findConformanceBinary(): string {
  const env = process.env.CONVOY_CONFORMANCE_BIN;
  if (env) {
    const bin = fs.existsSync(path.join(env, 'gateway-conformance.test'))
      ? path.join(env, 'gateway-conformance.test')
      : env;
    if (!fs.existsSync(bin)) throw new Error(`CONVOY_CONFORMANCE_BIN=${env}: no conformance binary there`);
    return bin;
  }
  const script = path.join(REPO_ROOT, 'e2e', 'conformance', 'build.sh');
  const res = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (res.status !== 0) throw new Error(`e2e/conformance/build.sh failed with status ${res.status}`);
  const dir = res.stdout.trim().split('\n').pop() ?? '';
  return path.join(dir, 'gateway-conformance.test');
}

// ---------------------------------------------------------------------------------------------
// kube-controller-manager (namespace + garbage collector only)

export class ControllerManager {
  private constructor(
    readonly proc: ChildProcess,
    readonly logFile: string,
  ) {}

  static async start(cluster: LocalCluster): Promise<ControllerManager> {
    const logFile = path.join(cluster.dir, 'kube-controller-manager.log');
    const fd = fs.openSync(logFile, 'a');
    const kubeconfig = cluster.adminKubeconfig;
    const proc = spawn(
      path.join(cluster.bins.binDir, 'kube-controller-manager'),
      [
        '--controllers=namespace-controller,garbage-collector-controller',
        '--leader-elect=false',
        '--use-service-account-credentials=false',
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        '--secure-port=0',
        '--v=1',
      ],
      { stdio: ['ignore', fd, fd] },
    );
    fs.closeSync(fd);
    const kcm = new ControllerManager(proc, logFile);
    const killOnExit = () => proc.kill('SIGKILL');
    process.once('exit', killOnExit);
    proc.once('exit', () => process.off('exit', killOnExit));
    try {
      await kcm.checkNamespaceDeletion(cluster);
    } catch (err) {
      await kcm.stop();
      throw err;
    }
    return kcm;
  }

  get exited(): string | undefined {
    const p = this.proc;
    return p.exitCode !== null || p.signalCode !== null
      ? `kube-controller-manager exited (${p.exitCode ?? p.signalCode})`
      : undefined;
  }

  /**
   * With --secure-port=0 there is no health endpoint: prove the namespace controller works by
   * effect. A namespace holding a ConfigMap is deleted and must disappear.
   */
  private async checkNamespaceDeletion(cluster: LocalCluster): Promise<void> {
    const ns = 'convoy-lane-kcm-check';
    await cluster.kubectlOk(['create', 'namespace', ns]);
    await cluster.kubectlOk(['-n', ns, 'create', 'configmap', 'probe', '--from-literal=a=b']);
    await cluster.kubectlOk(['delete', 'namespace', ns, '--wait=false']);
    await waitFor(
      async () => {
        try {
          await cluster.admin.request('GET', `/api/v1/namespaces/${ns}`);
          return false;
        } catch (err) {
          if (err instanceof KubeApiError && err.statusCode === 404) return true;
          throw err;
        }
      },
      {
        what: 'kube-controller-manager to finish deleting a namespace',
        timeoutMs: 60_000,
        intervalMs: 200,
        abort: () => this.exited,
        context: () => `--- ${this.logFile} ---\n${tailFile(this.logFile, 30)}`,
      },
    );
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const done = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await done;
    clearTimeout(t);
  }
}

// ---------------------------------------------------------------------------------------------
// Placeholder Pods: the minimum of a fake kubelet

/**
 * Creates one Pod in `namespace` and patches its status to Running with Ready=True. No process
 * runs behind it; it exists only so the suite's NamespacesMustBeReady gate can pass. Returns
 * false if the namespace does not exist (yet).
 */
export async function placeholderPod(admin: KubeClient, namespace: string): Promise<boolean> {
  const base = `/api/v1/namespaces/${namespace}/pods`;
  try {
    await admin.request('GET', `/api/v1/namespaces/${namespace}`);
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) return false;
    throw err;
  }
  try {
    await admin.request('POST', base, {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: PLACEHOLDER_POD,
          labels: { 'app.kubernetes.io/managed-by': 'convoy-conformance-lane' },
          annotations: {
            'convoy.dev/note':
              'placeholder for the status-only conformance lane: no kubelet, status patched to Ready',
          },
        },
        spec: {
          containers: [{ name: 'placeholder', image: 'registry.k8s.io/pause:3.10' }],
          terminationGracePeriodSeconds: 0,
        },
      },
    });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.statusCode === 409)) throw err;
  }
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = (type: string) => ({ type, status: 'True', lastTransitionTime: now });
  await admin.request('PATCH', `${base}/${PLACEHOLDER_POD}/status`, {
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        phase: 'Running',
        startTime: now,
        conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map(condition),
        containerStatuses: [
          {
            name: 'placeholder',
            image: 'registry.k8s.io/pause:3.10',
            imageID: '',
            ready: true,
            started: true,
            restartCount: 0,
            state: { running: { startedAt: now } },
          },
        ],
      },
    },
  });
  return true;
}

/** Polls until each base namespace exists and has its Ready placeholder Pod. */
async function placeholderPods(
  admin: KubeClient,
  signal: AbortSignal,
  log: (l: string) => void,
): Promise<void> {
  const pending = new Set(BASE_NAMESPACES);
  while (pending.size > 0 && !signal.aborted) {
    for (const ns of [...pending]) {
      try {
        if (await placeholderPod(admin, ns)) {
          pending.delete(ns);
          log(
            `fake kubelet: placeholder Pod ${ns}/${PLACEHOLDER_POD} created and its status set to Running/Ready`,
          );
        }
      } catch (err) {
        log(`fake kubelet: ${ns}: ${(err as Error).message}`);
      }
    }
    await sleep(250);
  }
}

// ---------------------------------------------------------------------------------------------
// The lane

interface Cond {
  type: string;
  status: string;
  reason?: string;
}

/** Runs the whole lane: cluster, controller manager, Convoy, the suite. Always tears down. */
export async function runLane(opts: LaneOptions = {}): Promise<LaneResult> {
  const log = opts.log ?? (() => undefined);
  const timings: Record<string, number> = {};
  const notes: string[] = [];
  const timed = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    try {
      return await f();
    } finally {
      timings[name] = Date.now() - t0;
    }
  };

  const binary = await timed('build or find conformance binary', async () => findConformanceBinary());
  const cluster = await timed('start kube-apiserver + etcd + CRDs', () =>
    LocalCluster.start({ keep: opts.keep }),
  );
  let kcm: ControllerManager | undefined;
  let convoy: ConvoyProcess | undefined;
  let suite: ChildProcess | undefined;
  const abort = new AbortController();
  const logDir = cluster.dir;
  try {
    kcm = await timed('start kube-controller-manager (namespace + GC)', () =>
      ControllerManager.start(cluster),
    );
    log(`kube-controller-manager: namespace-controller and garbage-collector-controller running`);
    await cluster.kubectlOk(['apply', '-f', path.join(REPO_ROOT, 'deploy', '02-gatewayclass.yaml')]);

    convoy = await timed('start convoy serve (Kubernetes mode)', () =>
      ConvoyProcess.start({
        name: 'convoy',
        args: [
          '--kubeconfig',
          cluster.convoyKubeconfig,
          '--controller-name',
          CONTROLLER_NAME,
          '--envoy-bind-address',
          '127.0.0.1',
          '--gateway-address',
          '127.0.0.1',
          '--leader-election-namespace',
          'convoy-system',
        ],
        workDir: path.join(cluster.dir, 'convoy'),
        readyTimeoutMs: 60_000,
      }),
    );
    log(
      `convoy serve running as Convoy's ServiceAccount identity (deploy/01-rbac.yaml), log ${convoy.logFile}`,
    );

    const claimedFeatures = await timed('GatewayClass accepted', async () => {
      const gc = await waitFor(
        async () => {
          const o = await cluster.admin.request<{
            status?: { conditions?: Cond[]; supportedFeatures?: { name: string }[] };
          }>('GET', `/apis/gateway.networking.k8s.io/v1/gatewayclasses/${GATEWAY_CLASS}`);
          const accepted = o.status?.conditions?.find((c) => c.type === 'Accepted');
          return accepted?.status === 'True' && (o.status?.supportedFeatures?.length ?? 0) > 0
            ? o
            : undefined;
        },
        {
          what: `GatewayClass ${GATEWAY_CLASS} Accepted with supportedFeatures`,
          timeoutMs: 60_000,
          intervalMs: 200,
          context: () => convoy!.logContext(20),
        },
      );
      return (gc.status?.supportedFeatures ?? []).map((f) => f.name);
    });
    log(`Convoy claims: ${claimedFeatures.join(',')}`);

    const plan = planTests(claimedFeatures, opts.only);
    const run = plan.filter((p) => !p.skip).map((p) => p.name);
    const results = new Map<string, GoTestResult>();
    const setupOutput: string[] = [];
    if (run.length === 0) {
      return { claimedFeatures, plan, results, setupOutput, exitCode: null, logDir, timings, notes };
    }

    notes.push(
      'fake-kubelet minimum: no kubelet runs; one placeholder Pod per base namespace ' +
        `(${BASE_NAMESPACES.join(', ')}) gets its status patched to Running/Ready so the suite's ` +
        'NamespacesMustBeReady gate passes. Deployments in the base manifests never get Pods. ' +
        'Not valid for a conformance report.',
    );
    for (const n of notes) log(n);
    const pods = placeholderPods(cluster.admin, abort.signal, log);

    const args = [
      `-test.run=${testRunPattern(run)}`,
      '-test.v',
      '-test.timeout=30m',
      `-kubeconfig=${cluster.adminKubeconfig}`,
      `-gateway-class=${GATEWAY_CLASS}`,
      `-supported-features=${claimedFeatures.join(',')}`,
      '-cleanup-base-resources=false',
      `-timeout-config-overrides=${STATUS_TIMEOUT_OVERRIDES}`,
    ];
    log(`${binary} ${args.join(' ')}`);
    const suiteLog = path.join(cluster.dir, 'conformance.log');
    const parser = new GoTestParser((r) => log(`--- ${r.outcome}: ${r.name} (${r.seconds}s)`));
    const t0 = Date.now();
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(binary, args, {
        cwd: cluster.dir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, KUBECONFIG: cluster.adminKubeconfig },
      });
      suite = child;
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
      const deadline = setTimeout(() => {
        log(`conformance suite still running after ${opts.suiteTimeoutMs ?? 600_000} ms: killing it`);
        child.kill('SIGQUIT'); // Go prints every goroutine's stack: shows where it hung
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      }, opts.suiteTimeoutMs ?? 600_000);
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(deadline);
        if (buf) parser.line(buf);
        out.end();
        resolve(code);
      });
    });
    timings['conformance suite'] = Date.now() - t0;
    abort.abort();
    await pods;
    const convoyLogTail = convoy.logContext(60);
    for (const [k, v] of parser.results) results.set(k, v);
    setupOutput.push(...parser.setupOutput);
    return {
      claimedFeatures,
      plan,
      results,
      setupOutput,
      overall: parser.overall,
      exitCode,
      logDir,
      timings,
      notes,
      convoyLogTail,
    };
  } finally {
    abort.abort();
    if (suite && suite.exitCode === null && suite.signalCode === null) suite.kill('SIGKILL');
    await convoy?.stop().catch(() => undefined);
    await kcm?.stop().catch(() => undefined);
    await cluster.teardown();
  }
}

/** One line per planned test, then "N passed, N failed, N skipped". */
export function summarize(r: LaneResult): string {
  const lines: string[] = [];
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const p of r.plan) {
    if (p.skip) {
      skipped++;
      lines.push(`SKIP  ${p.name}: ${p.skip}`);
      continue;
    }
    const res = r.results.get(p.name);
    if (!res) {
      failed++;
      lines.push(`FAIL  ${p.name}: no result from the suite (setup failed or the run was cut short)`);
    } else if (res.outcome === 'SKIP') {
      skipped++;
      lines.push(`SKIP  ${p.name}: skipped by the suite: ${res.output.slice(1).join(' ').trim()}`);
    } else {
      if (res.outcome === 'PASS') passed++;
      else failed++;
      lines.push(`${res.outcome}  ${p.name} (${res.seconds}s)`);
    }
  }
  lines.push(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const onlyIdx = argv.indexOf('--only');
  const only = onlyIdx >= 0 ? argv[onlyIdx + 1]?.split(',').filter(Boolean) : undefined;
  const keep = argv.includes('--keep');
  const r = await runLane({ only, keep, log: (l) => console.log(`[lane] ${l}`) });
  for (const res of r.results.values()) {
    if (res.outcome === 'FAIL')
      console.log(`\n===== ${res.name} =====\n${foldRepeats(res.output).join('\n')}`);
  }
  if (r.plan.some((p) => !p.skip && !r.results.has(p.name)) && r.setupOutput.length > 0) {
    console.log(
      `\n===== suite output outside the selected tests =====\n${r.setupOutput.slice(-60).join('\n')}`,
    );
  }
  console.log('\ntimings (ms):', JSON.stringify(r.timings));
  console.log(`logs: ${r.logDir}${keep ? '' : ' (removed; pass --keep to keep them)'}`);
  console.log(summarize(r));
  const failed = r.plan.some(
    (p) => !p.skip && !['PASS', 'SKIP'].includes(r.results.get(p.name)?.outcome ?? ''),
  );
  if (failed && r.convoyLogTail) console.log(`\n${r.convoyLogTail}`);
  process.exitCode = failed ? 1 : 0;
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
