/**
 * One peer-bench run of one contender on a fresh local cluster: the world is applied, the
 * control plane started, and the clock read from outside, as a user would: TLS handshakes and
 * HTTPS requests to the one real Envoy, and Envoy's own counters for the bytes it received.
 */
import { LocalCluster } from '../../e2e/cluster/cluster';
import type { EnvoyProcess } from '../../e2e/harness/envoy';
import type { KubeObject } from '../../src/store/objects';
import { nowMs, round } from '../common';
import { serialOf } from '../pki';
import type { Pki } from '../pki';
import type { WorldSize } from '../world';
import { World, hostnameOf } from '../world';
import type { Contender } from './contender';
import {
  counterDelta,
  processMemory,
  updateCounters,
  resourceCounts,
  waitCertificate,
  waitStatus,
  waitXdsQuiet,
  xdsBytes,
} from './envoy-observe';
import type { ResourceCounts } from './envoy-observe';
import { applyInOrder, applyWorld } from './k8s-apply';

/**
 * The Gateway's plain HTTP listener port: not 8080, which Envoy Gateway's controller-runtime
 * metrics server holds (in a cluster the Envoy pod has its own network; here they share one).
 */
const HTTP_PORT = 18080;

export type ChangeKind = 'certificate' | 'route' | 'listenerSet';
export const CHANGE_KINDS: readonly ChangeKind[] = ['certificate', 'route', 'listenerSet'];

export interface ChangeResult {
  kind: ChangeKind;
  /** Apply sent → Envoy serves the change, ms (the apply's own round trip included). */
  servedMs: number;
  /** Bytes Envoy received from the control plane for this change (until quiet). */
  bytes: number;
  /** Envoy's update counters that moved (clusters/listeners added, modified, rejected). */
  envoyUpdates: Record<string, number>;
}

export interface RunResult {
  contender: string;
  objects: number;
  applyWorldMs: number;
  /** Control-plane start → the real Envoy serves the probed ListenerSets' certificates. */
  configuredMs: number;
  /** xDS bytes Envoy had received when configured, and once its control plane went quiet. */
  coldBytesAtConfigured: number;
  coldBytes: number;
  counts: ResourceCounts;
  changes: ChangeResult[];
  /** Control-plane RSS after the changes, quiet (bytes), and its peak over the run. */
  rssSteady: number;
  rssPeak: number;
}

export interface MeasureOptions {
  size: WorldSize;
  pki: Pki;
  repeats: number;
  /** Bound on each wait (a failure bound, not a target). */
  timeoutMs: number;
  /** How long the xDS byte counter must stand still to call a push finished. */
  quietMs: number;
  log: (line: string) => void;
}

/** Route r with one more rule: a prefix only this edit uses, answered by a 302 redirect. */
function routeWithRedirect(world: World, r: number, prefix: string): KubeObject {
  const route = world.route(r) as KubeObject & { spec: { rules: unknown[] } };
  route.spec.rules.push({
    matches: [{ path: { type: 'PathPrefix', value: prefix } }],
    filters: [
      { type: 'RequestRedirect', requestRedirect: { hostname: 'moved.example.com', statusCode: 302 } },
    ],
  });
  return route;
}

/** Makes one change of `kind` (the k-th of its kind) and times it until Envoy serves it. */
async function change(
  kind: ChangeKind,
  k: number,
  world: World,
  cluster: LocalCluster,
  timeoutMs: number,
): Promise<number> {
  const n = world.size.listenerSets;
  const port = world.httpsPort;
  if (kind === 'certificate') {
    const i = (7 + k * 31) % n;
    const { objects, serial } = world.rotateCertificate(i);
    const t0 = nowMs();
    await applyInOrder(cluster.admin, objects);
    return (await waitCertificate(port, hostnameOf(i), serial, timeoutMs)) - t0;
  }
  if (kind === 'route') {
    const r = (11 + k * 37) % world.size.routes;
    const host = hostnameOf(world.listenerOfRoute(r));
    const prefix = `/r${r}/moved-${k}`;
    const t0 = nowMs();
    await applyInOrder(cluster.admin, [routeWithRedirect(world, r, prefix)]);
    return (await waitStatus(port, host, prefix, 302, timeoutMs)) - t0;
  }
  const { index, objects } = world.addListenerSet();
  const t0 = nowMs();
  await applyInOrder(cluster.admin, objects);
  return (await waitCertificate(port, hostnameOf(index), serialOf(world.certs[index]!.cert), timeoutMs)) - t0;
}

/** Runs the whole sequence for one contender on a fresh cluster and world. */
export async function measureOnce(contender: Contender, opts: MeasureOptions): Promise<RunResult> {
  const { size, log, timeoutMs, quietMs } = opts;
  const world = new World({ size, httpPort: HTTP_PORT }, opts.pki);
  const cluster = await LocalCluster.start({});
  let envoy: EnvoyProcess | undefined;
  try {
    await contender.prepare(cluster, world);
    const objects = world.objects();
    const a0 = nowMs();
    await applyWorld(cluster.admin, objects);
    const applyWorldMs = nowMs() - a0;
    log(
      `${contender.name}: world of ${objects.length} objects applied in ${round(applyWorldMs / 1000, 1)} s`,
    );

    const t0 = nowMs();
    await contender.start(cluster, world);
    envoy = await contender.startEnvoy(cluster, world);
    const probes = [...new Set([0, Math.floor(size.listenerSets / 2), size.listenerSets - 1])];
    for (const i of probes)
      await waitCertificate(world.httpsPort, hostnameOf(i), serialOf(world.certs[i]!.cert), timeoutMs, 50);
    const configuredMs = nowMs() - t0;
    const coldBytesAtConfigured = await xdsBytes(envoy, contender.xdsCluster);
    const coldBytes = await waitXdsQuiet(envoy, contender.xdsCluster, quietMs, timeoutMs);
    const counts = await resourceCounts(envoy);
    log(
      `${contender.name}: Envoy configured ${round(configuredMs / 1000, 2)} s after start; ` +
        `cold sync ${coldBytes} B; ${JSON.stringify(counts)}`,
    );

    const changes: ChangeResult[] = [];
    for (let k = 0; k < opts.repeats; k++) {
      for (const kind of CHANGE_KINDS) {
        const before = await waitXdsQuiet(envoy, contender.xdsCluster, quietMs, timeoutMs);
        const countersBefore = await updateCounters(envoy);
        const servedMs = await change(kind, k, world, cluster, timeoutMs);
        const after = await waitXdsQuiet(envoy, contender.xdsCluster, quietMs, timeoutMs);
        const envoyUpdates = counterDelta(countersBefore, await updateCounters(envoy));
        changes.push({ kind, servedMs, bytes: after - before, envoyUpdates });
        log(
          `${contender.name}: ${kind} #${k + 1} served in ${round(servedMs, 1)} ms, ${after - before} B, ` +
            `Envoy ${JSON.stringify(envoyUpdates)}`,
        );
      }
    }
    const memory = processMemory(contender.pid);
    return {
      contender: contender.name,
      objects: objects.length,
      applyWorldMs: round(applyWorldMs),
      configuredMs: round(configuredMs),
      coldBytesAtConfigured,
      coldBytes,
      counts,
      changes: changes.map((c) => ({ ...c, servedMs: round(c.servedMs, 1) })),
      rssSteady: memory.rss,
      rssPeak: memory.peak,
    };
  } catch (err) {
    log(contender.logContext());
    throw err;
  } finally {
    await contender.stop().catch(() => undefined);
    await cluster.teardown();
  }
}
