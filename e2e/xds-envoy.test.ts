import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as path from 'node:path';
import { XdsCache } from '../src/xds/cache';
import { AdsServer } from '../src/xds/server';
import type { StreamDebug, TypeDebug, XdsDebugState } from '../src/xds/debug-state';
import { TypeUrl } from '../src/envoy/resources';
import type { EnvoyResources } from '../src/envoy/resources';
import { ConvoyMetrics } from '../src/observability/metrics';
import { silentLogger } from '../src/observability/logger';
import {
  EnvoyProcess,
  HCM_STAT_PREFIX,
  convoyMain,
  dumpedVersions,
  freePort,
  request,
  simpleFleet,
  sleep,
  startEchoBackend,
  tempDir,
  waitFor,
} from './harness';
import type { Backend, EchoResponse } from './harness';

/**
 * Issue 2: the ADS server against a real Envoy, for both the state-of-the-world and the delta
 * bootstrap written by `convoy bootstrap`. Resources are hand-built (listener → RDS → EDS
 * cluster → endpoints), so these tests exercise only the xDS layer.
 */

const FLEET = 'e2e/gw';
const ALL_TYPES = [TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route];

/** An in-process control plane: a cache and an ADS server on a fixed loopback port. */
class ControlPlane {
  readonly metrics = new ConvoyMetrics();
  readonly cache: XdsCache;
  readonly server: AdsServer;

  private constructor(readonly port: number) {
    const logger = silentLogger();
    this.cache = new XdsCache({ logger, metrics: this.metrics });
    this.server = new AdsServer({ cache: this.cache, logger, metrics: this.metrics });
  }

  static async start(port: number, resources: EnvoyResources): Promise<ControlPlane> {
    const cp = new ControlPlane(port);
    cp.set(resources);
    const bound = await cp.server.listen(`127.0.0.1:${port}`);
    assert.equal(bound, port);
    return cp;
  }

  set(resources: EnvoyResources): void {
    const r = this.cache.setFleet(FLEET, resources);
    assert.ok(r.ok, `cache refused the snapshot: ${JSON.stringify(r)}`);
  }

  debug(): XdsDebugState {
    return this.server.debugState() as XdsDebugState;
  }

  stream(nodeId: string): StreamDebug | undefined {
    return this.debug().streams.find((s) => s.nodeId === nodeId);
  }

  typeState(nodeId: string, typeUrl: string): TypeDebug | undefined {
    return this.stream(nodeId)?.types[typeUrl];
  }
}

/**
 * `convoy bootstrap` through the compiled CLI, as an operator would run it. The ADS server of
 * these tests is in-process and plaintext (mTLS has its own tests: xds-auth.test.ts), so the
 * bootstrap asks for plaintext by name.
 */
function writeBootstrap(file: string, args: string[]): void {
  const r = childProcess.spawnSync(
    process.execPath,
    [convoyMain(), 'bootstrap', ...args, '--insecure-plaintext-xds', '--out', file],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, `convoy bootstrap failed: ${r.stderr}`);
}

for (const variant of ['sotw', 'delta'] as const) {
  describe(`ADS server with a real Envoy (${variant})`, () => {
    const nodeId = `e2e-${variant}`;
    let tmp: { dir: string; cleanup: () => void };
    let backendA: Backend;
    let backendB: Backend;
    let xdsPort: number;
    let listenerPort: number;
    let cp: ControlPlane;
    let envoy: EnvoyProcess;
    let rdsStat: string;

    // v1: everything to backend_a. v2 adds /b → backend_b. v3 adds a route Envoy rejects.
    // v4 replaces it with a valid regex route.
    let v1: EnvoyResources;
    let v2: EnvoyResources;
    let v3: EnvoyResources;
    let v4: EnvoyResources;

    const get = async (p: string) => {
      const r = await request({ port: listenerPort, path: p, timeoutMs: 40_000 });
      return { status: r.status, echo: r.status === 200 ? r.json<EchoResponse>() : undefined, body: r.body };
    };
    const backendOf = async (p: string) => (await get(p)).echo?.backend;
    const ctx = () => envoy?.logContext(30) ?? '';

    before(async () => {
      tmp = tempDir(`xds-envoy-${variant}`);
      backendA = await startEchoBackend('a');
      backendB = await startEchoBackend('b');
      xdsPort = await freePort();
      listenerPort = await freePort();
      rdsStat = `http.${HCM_STAT_PREFIX}.rds.http-${listenerPort}`;
      const backends = { backend_a: backendA.port, backend_b: backendB.port };
      v1 = simpleFleet({
        listenerPort,
        routes: [{ prefix: '/', cluster: 'backend_a' }],
        backends: { backend_a: backendA.port },
      });
      const v2Routes = [
        { prefix: '/b', cluster: 'backend_b' },
        { prefix: '/', cluster: 'backend_a' },
      ];
      v2 = simpleFleet({ listenerPort, routes: v2Routes, backends });
      v3 = simpleFleet({
        listenerPort,
        routes: [{ regex: '^/x/([a-z', cluster: 'backend_b' }, ...v2Routes],
        backends,
      });
      v4 = simpleFleet({
        listenerPort,
        routes: [{ regex: '^/re/[a-z]+$', cluster: 'backend_b' }, ...v2Routes],
        backends,
      });

      cp = await ControlPlane.start(xdsPort, v1);
      const bootstrap = path.join(tmp.dir, 'bootstrap.yaml');
      writeBootstrap(bootstrap, [
        '--xds-address',
        `127.0.0.1:${xdsPort}`,
        '--gateway',
        FLEET,
        '--node-id',
        nodeId,
        '--admin-address',
        '127.0.0.1:0',
        ...(variant === 'sotw' ? ['--sotw'] : []),
      ]);
      envoy = await EnvoyProcess.start({ configPath: bootstrap, name: `envoy-${variant}`, workDir: tmp.dir });
    });

    after(async () => {
      await envoy?.stop();
      await cp?.server.stop(0);
      await backendA?.close();
      await backendB?.close();
      tmp?.cleanup();
    });

    test('Envoy connects over ADS and a request through it reaches the backend', async () => {
      await envoy.waitLive();
      await envoy.waitListener(`http-${listenerPort}`);
      const r = await waitFor(async () => (await get('/hello?x=1')).echo, {
        what: 'a 200 through Envoy',
        context: ctx,
      });
      assert.equal(r.backend, 'a');
      assert.equal(r.path, '/hello');
      assert.deepEqual(r.query, { x: '1' });

      const stream = cp.stream(nodeId);
      assert.ok(stream, 'the server reports the stream');
      assert.equal(stream.fleet, FLEET);
      assert.equal(stream.variant, variant);
      await waitFor(() => ALL_TYPES.every((t) => cp.typeState(nodeId, t)?.state === 'synced'), {
        what: 'all four types synced in debugState',
        context: () => JSON.stringify(cp.stream(nodeId), null, 1),
      });
      assert.equal(await envoy.counter('control_plane.connected_state'), 1);
    });

    test('a config change applies while an in-flight request completes', async () => {
      // The backend holds the request (up to 30 s) until released, so the change is certainly
      // applied while it is in flight, however long that takes on a busy machine.
      const inflight = get('/slow?sleep=30000');
      await waitFor(() => backendA.active === 1, {
        what: 'the slow request to reach backend a',
        context: ctx,
      });
      cp.set(v2);
      await waitFor(async () => (await backendOf('/b/thing')) === 'b', {
        what: 'route /b → backend b',
        context: ctx,
      });
      assert.equal(backendA.active, 1, 'the slow request is still in flight after the change');
      backendA.release();
      const slow = await inflight;
      assert.equal(slow.status, 200, slow.body);
      assert.equal(slow.echo?.backend, 'a');
      assert.equal(slow.echo?.path, '/slow');
      assert.equal(await backendOf('/other'), 'a');
    });

    test('a rejected resource is NACKed once, not resent, traffic keeps flowing, and a fix is accepted', async () => {
      const acceptedRds = cp.typeState(nodeId, TypeUrl.Route)?.ackedVersion;
      assert.ok(acceptedRds, 'RDS has an acked version before the bad push');
      cp.set(v3);
      const nacked = await waitFor(
        () => {
          const t = cp.typeState(nodeId, TypeUrl.Route);
          return t?.state === 'nacked' ? t : undefined;
        },
        { what: 'the RDS NACK in debugState', context: () => JSON.stringify(cp.stream(nodeId), null, 1) },
      );
      assert.ok(nacked.lastNack, 'lastNack is recorded');
      assert.match(nacked.lastNack.message, /regex|missing|\(/i);
      assert.ok(nacked.lastNack.time);
      if (variant === 'sotw') {
        // SotW NACKs carry the version Envoy kept; delta has per-resource versions instead.
        assert.equal(
          nacked.lastNack.acceptedVersion,
          acceptedRds,
          'Envoy reports it kept the last good version',
        );
      }
      // The other types are unaffected by the RDS NACK.
      for (const t of [TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener]) {
        assert.equal(cp.typeState(nodeId, t)?.state, 'synced', `${t} stays synced`);
      }

      const rejected = await waitFor(
        async () => (await envoy.counter(`${rdsStat}.update_rejected`)) || undefined,
        {
          what: 'Envoy update_rejected for RDS',
          context: ctx,
        },
      );
      assert.ok(rejected >= 1);
      // Give a resend loop the chance to show itself: a server that re-answers the NACK would push
      // the same bad routes again and again within this window.
      await sleep(2500);
      const rejectedLater = await envoy.counter(`${rdsStat}.update_rejected`);
      assert.ok(
        rejectedLater <= 2,
        `RDS rejected ${rejectedLater} times: the server resends rejected config`,
      );
      assert.equal(
        cp.typeState(nodeId, TypeUrl.Route)?.state,
        'nacked',
        'still NACKed: nothing new was sent',
      );
      const nackMetric = await cp.metrics.registry.getSingleMetricAsString('convoy_xds_nacks_total');
      assert.match(nackMetric, new RegExp(`convoy_xds_nacks_total\\{type="[^"]+",fleet="${FLEET}"\\} [1-9]`));

      // Traffic still flows on the last good config.
      assert.equal(await backendOf('/b/x'), 'b');
      assert.equal(await backendOf('/'), 'a');
      assert.equal((await get('/x/y')).echo?.backend, 'a', 'the rejected route is not in effect');

      cp.set(v4);
      await waitFor(() => cp.typeState(nodeId, TypeUrl.Route)?.state === 'synced', {
        what: 'RDS synced after the fix',
        context: () => JSON.stringify(cp.stream(nodeId), null, 1),
      });
      assert.notEqual(cp.typeState(nodeId, TypeUrl.Route)?.ackedVersion, acceptedRds);
      await waitFor(async () => (await backendOf('/re/abc')) === 'b', {
        what: 'the fixed regex route',
        context: ctx,
      });
      assert.equal(await backendOf('/re/ABC'), 'a', 'regex is case-sensitive: falls through to /');
      assert.equal(await envoy.counter(`${rdsStat}.update_rejected`), rejectedLater, 'no new rejection');
    });

    test('a control-plane restart keeps traffic flowing and sends no new content', async () => {
      const versionStats = [
        'cluster_manager.cds.version_text',
        'listener_manager.lds.version_text',
        `${rdsStat}.version_text`,
      ];
      const structural = [
        'listener_manager.listener_added',
        'listener_manager.listener_modified',
        'listener_manager.listener_removed',
        'cluster_manager.cluster_added',
        'cluster_manager.cluster_modified',
        'cluster_manager.cluster_removed',
      ];
      const snapshotStats = async () => {
        const all = await envoy.stats();
        return Object.fromEntries([...versionStats, ...structural].map((k) => [k, all.get(k)]));
      };
      const dumpBefore = dumpedVersions(await envoy.configDump('?include_eds'));
      const statsBefore = await snapshotStats();
      assert.ok(
        dumpBefore.listeners.length === 1 &&
          dumpBefore.clusters.length === 2 &&
          dumpBefore.routes.length === 1,
      );

      await cp.server.stop(0);
      await waitFor(async () => (await envoy.counter('control_plane.connected_state')) === 0, {
        what: 'Envoy to notice the control plane is gone',
        context: ctx,
      });
      // Outage: Envoy serves from its last config.
      assert.equal(await backendOf('/b/during-outage'), 'b');
      assert.equal(await backendOf('/re/during'), 'b');
      assert.equal(await backendOf('/'), 'a');

      // A fresh process-equivalent: new cache and server, same resources, same port.
      cp = await ControlPlane.start(xdsPort, v4);
      await waitFor(async () => (await envoy.counter('control_plane.connected_state')) === 1, {
        what: 'Envoy to reconnect',
        timeoutMs: 30_000,
        context: ctx,
      });
      await waitFor(
        () => {
          const s = cp.stream(nodeId);
          if (!s) return false;
          return ALL_TYPES.every((t) => s.types[t] && !['stale', 'nacked'].includes(s.types[t].state));
        },
        { what: 'the new server to settle every type', context: () => JSON.stringify(cp.debug(), null, 1) },
      );
      assert.equal(await backendOf('/re/after'), 'b');
      assert.equal(await backendOf('/after'), 'a');

      const dumpAfter = dumpedVersions(await envoy.configDump('?include_eds'));
      assert.deepEqual(dumpAfter, dumpBefore, 'config_dump versions are unchanged across the restart');
      assert.deepEqual(
        await snapshotStats(),
        statsBefore,
        'no listener or cluster was added, modified or removed',
      );
    });
  });
}

for (const variant of ['sotw', 'delta'] as const) {
  describe(`a fleet without clusters (${variant})`, () => {
    let tmp: { dir: string; cleanup: () => void };
    let cp: ControlPlane;
    let envoy: EnvoyProcess;
    let listenerPort: number;

    before(async () => {
      tmp = tempDir(`xds-empty-${variant}`);
      const xdsPort = await freePort();
      listenerPort = await freePort();
      // E.g. a Gateway whose routes all point at missing backends, or that has no routes yet:
      // listeners and routes, zero clusters and endpoints.
      cp = await ControlPlane.start(
        xdsPort,
        simpleFleet({
          listenerPort,
          routes: [{ prefix: '/', direct: { status: 503, body: 'no backends' } }],
          backends: {},
        }),
      );
      const bootstrap = path.join(tmp.dir, 'bootstrap.yaml');
      writeBootstrap(bootstrap, [
        '--xds-address',
        `127.0.0.1:${xdsPort}`,
        '--gateway',
        FLEET,
        '--node-id',
        `empty-${variant}`,
        '--admin-address',
        '127.0.0.1:0',
        ...(variant === 'sotw' ? ['--sotw'] : []),
      ]);
      envoy = await EnvoyProcess.start({
        configPath: bootstrap,
        name: `envoy-empty-${variant}`,
        workDir: tmp.dir,
      });
    });

    after(async () => {
      await envoy?.stop();
      await cp?.server.stop(0);
      tmp?.cleanup();
    });

    test('Envoy still completes CDS, goes LIVE and serves the listener', async () => {
      // The bootstrap waits for CDS forever (initial_fetch_timeout 0s): an empty cluster set
      // must still be answered, or this Envoy never starts serving.
      await envoy.waitLive();
      const r = await request({ port: listenerPort, path: '/' });
      assert.equal(r.status, 503);
      assert.equal(r.body, 'no backends');
      // Envoy goes LIVE as it sends its ACK; the server may read the ACK a moment later.
      await waitFor(() => cp.typeState(`empty-${variant}`, TypeUrl.Cluster)?.state === 'synced', {
        what: 'the empty CDS answer ACKed',
        context: () => JSON.stringify(cp.stream(`empty-${variant}`), null, 1),
      });
    });
  });
}
