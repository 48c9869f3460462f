import assert from 'node:assert/strict';
import type { StreamDebug, XdsDebugState } from '../../src/xds/debug-state';
import { LoadGenerator, dumpedVersions, request, waitFor } from '../harness';
import type { ConvoyProcess, DumpedResource, EchoResponse, EnvoyProcess, HttpResult } from '../harness';
import { GATEWAY, GATEWAY_API, gatewayDocs } from './world';
import type { World } from './world';

/**
 * Shared steps of the fault tests: a small file-mode world (one Gateway, one HTTP listener, one
 * route to an echo backend), what an Envoy holds (to show a fault changed nothing), waits for an
 * Envoy to lose and regain its control plane, and for Convoy to see it in sync again.
 */

const GW_API = GATEWAY_API;
export const SITE = 'www.example.com';

/** The GatewayClass and Gateway default/edge with one HTTP listener on the world's HTTP port. */
export function httpGatewayDocs(w: World): object[] {
  return gatewayDocs([{ name: 'http', protocol: 'HTTP', port: w.ports.http }]);
}

/** An HTTPRoute on the Gateway's HTTP listener sending `hostnames` to the Service `backend`. */
export function httpRouteDoc(name: string, backend: string, hostnames = [SITE]): object {
  return {
    apiVersion: GW_API,
    kind: 'HTTPRoute',
    metadata: { name, namespace: GATEWAY.namespace },
    spec: {
      parentRefs: [{ name: GATEWAY.name, sectionName: 'http' }],
      hostnames,
      rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
    },
  };
}

/** Why an answer is not a 200 from one of `backends`, or undefined when it is. */
export function answeredBy(backends: string[]): (r: HttpResult) => string | undefined {
  return (r) => {
    if (r.status !== 200) return `status ${r.status}: ${r.body.slice(0, 120)}`;
    const b = r.json<EchoResponse>().backend;
    return backends.includes(b) ? undefined : `answered by ${b}`;
  };
}

/** The echo backend that answers a request for `host` on an Envoy listener port, if any. */
export async function backendAt(port: number, host = SITE): Promise<string | undefined> {
  const r = await request({ port, host, path: '/', timeoutMs: 5000 });
  return r.status === 200 ? r.json<EchoResponse>().backend : undefined;
}

/**
 * Starts echo backends `backends`, writes the Gateway, their Services and the route `site` to
 * the first of them, starts Convoy and Envoy, and waits for the route to answer.
 */
export async function serveSite(w: World, backends: string[]): Promise<void> {
  for (const b of backends) await w.addBackend(b);
  w.write('00-gateway.yaml', httpGatewayDocs(w));
  w.write(
    '01-services.yaml',
    backends.flatMap((b) => w.serviceDocs(b)),
  );
  w.write('02-route.yaml', [httpRouteDoc('site', backends[0])]);
  await w.startConvoy();
  await w.startEnvoy();
  await waitFor(async () => (await backendAt(w.ports.http)) === backends[0], {
    what: 'the route answering through Envoy',
    timeoutMs: 30_000,
    context: () => `${w.envoy.logContext(15)}\n${w.convoy.logContext(15)}`,
  });
}

/** Envoy counters that move only when a listener or cluster is added, changed or removed. */
export const STRUCTURAL_STATS = [
  'listener_manager.listener_added',
  'listener_manager.listener_modified',
  'listener_manager.listener_removed',
  'cluster_manager.cluster_added',
  'cluster_manager.cluster_modified',
  'cluster_manager.cluster_removed',
];

export interface EnvoyHolding {
  /** Name → version of every dynamic listener, cluster, route configuration and endpoint set. */
  versions: Record<'listeners' | 'clusters' | 'routes' | 'endpoints', DumpedResource[]>;
  /** STRUCTURAL_STATS by name. */
  structural: Record<string, number | string | undefined>;
}

/** What `envoy` holds now: resource versions from /config_dump and the structural counters. */
export async function envoyHolding(envoy: EnvoyProcess): Promise<EnvoyHolding> {
  const versions = dumpedVersions(await envoy.configDump('?include_eds'));
  const stats = await envoy.stats();
  return { versions, structural: Object.fromEntries(STRUCTURAL_STATS.map((k) => [k, stats.get(k)])) };
}

/** Waits until `envoy` reports its xDS connection up (`connected`) or down. */
export async function waitControlPlane(envoy: EnvoyProcess, connected: boolean, timeoutMs = 30_000) {
  await waitFor(async () => (await envoy.counter('control_plane.connected_state')) === (connected ? 1 : 0), {
    what: `envoy ${envoy.name} ${connected ? 'connected to' : 'disconnected from'} its control plane`,
    timeoutMs,
    context: () => envoy.logContext(15),
  });
}

/** The stream of node `nodeId` in Convoy's /debug/xds, if connected. */
export async function streamOf(convoy: ConvoyProcess, nodeId: string): Promise<StreamDebug | undefined> {
  const state = await convoy.getJson<XdsDebugState>('/debug/xds');
  return state.streams.find((s) => s.nodeId === nodeId);
}

/**
 * Waits until Convoy has a stream for `nodeId` with at least `types` requested (CDS, LDS and RDS;
 * EDS only with EDS clusters, SDS only with certificates), every one synced.
 */
export async function waitSynced(convoy: ConvoyProcess, nodeId: string, types = 3, timeoutMs = 30_000) {
  let last: StreamDebug | undefined;
  return waitFor(
    async () => {
      last = await streamOf(convoy, nodeId);
      const states = Object.values(last?.types ?? {}).map((t) => t.state);
      return states.length >= types && states.every((s) => s === 'synced') ? last : undefined;
    },
    {
      what: `Convoy to see ${nodeId} synced on every type`,
      timeoutMs,
      context: () => `last stream state: ${JSON.stringify(last, null, 1)}\n${convoy.logContext(15)}`,
    },
  );
}

export interface RestartScenario {
  convoy: ConvoyProcess;
  envoy: EnvoyProcess;
  /** The Envoy's node id, as Convoy's /debug/xds shows it. */
  nodeId: string;
  variant: 'delta' | 'sotw';
  /** Envoy's listener port, serving SITE from the echo backends `backends`. */
  port: number;
  /** Two backends; the route points at the first one when the scenario starts. */
  backends: [string, string];
  /** Points the route for SITE at `backend` (writes the file, or applies the object). */
  routeTo(backend: string): Promise<unknown>;
}

/**
 * Fault matrix row "Convoy killed and restarted under load": with requests flowing through
 * Envoy, Convoy is killed (SIGKILL: no shutdown, no stream closed cleanly) and started again.
 * Checks that Envoy served throughout, holds the same versions afterwards (nothing was rebuilt
 * differently: versions are content hashes, docs/xds.md §10), and that changes made after the
 * restart are served: the route moves between the two backends, each time to a cluster Envoy
 * does not have yet (docs/xds.md §7). Returns the load generator, stopped, for the caller's
 * assertions and diagnostics.
 */
export async function killAndRestartUnderLoad(s: RestartScenario): Promise<LoadGenerator> {
  const [first, second] = s.backends;
  await waitSynced(s.convoy, s.nodeId);
  const load = LoadGenerator.start({
    request: { port: s.port, host: SITE, path: '/' },
    check: answeredBy(s.backends),
  });
  try {
    await load.waitForSuccesses(10, 'before the kill');
    const before = await envoyHolding(s.envoy);
    const updatesBefore = await s.envoy.stats('\\.update_(success|rejected)$');

    load.phase('Convoy killed');
    await s.convoy.stop('SIGKILL');
    await waitControlPlane(s.envoy, false);
    await load.waitForSuccesses(10, 'while Convoy is down');

    load.phase('Convoy restarting');
    await s.convoy.restart();
    await waitControlPlane(s.envoy, true);
    await waitSynced(s.convoy, s.nodeId);
    load.phase('Convoy restarted, Envoy in sync');
    await load.waitForSuccesses(10, 'after the restart');

    const after = await envoyHolding(s.envoy);
    assert.deepEqual(after.versions, before.versions, 'Envoy holds the same versions');
    assert.deepEqual(after.structural, before.structural, 'no listener or cluster was touched');
    if (s.variant === 'delta') {
      // The reconnect declared what Envoy holds and nothing differed, so nothing was sent.
      assert.deepEqual(
        Object.fromEntries(await s.envoy.stats('\\.update_(success|rejected)$')),
        Object.fromEntries(updatesBefore),
        'no xDS update reached Envoy after the restart',
      );
    }

    for (const target of [second, first, second]) {
      load.phase(`route moved to ${target}`);
      await s.routeTo(target);
      await waitFor(async () => (await backendAt(s.port)) === target, {
        what: `the route moved to ${target} after the restart`,
        timeoutMs: 30_000,
        context: () => s.convoy.logContext(20),
      });
    }
    await load.waitForSuccesses(10, 'after the changes');
  } finally {
    await load.stop();
  }
  return load;
}
