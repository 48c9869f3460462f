/**
 * What crossing threads costs at a world size (docs/architecture.md §14), to choose the build
 * thread's message format: the encoded snapshot as a FleetDelta (bytes in one transferred
 * ArrayBuffer) against the same resources as copied Buffers; a fast-path change's delta; and the
 * other things that cross (the statuses, the store). Each figure is structuredClone (the same
 * serializer postMessage uses, both ends in one call), median of 5.
 *
 * Usage: node dist/bench/tools/delta-cost.js [small|large]
 */
import { ObjectStore } from '../../src/store/store';
import { XdsCache } from '../../src/xds/cache';
import { FleetDeltaEncoder, type FleetDelta } from '../../src/xds/snapshot-delta';
import { MirrorCache } from '../../src/xds/mirror-cache';
import { buildGateways } from '../../src/gateway/build';
import { BuildMemo } from '../../src/gateway/build-memo';
import { translateFleet } from '../../src/envoy/translate';
import { envoyRoot } from '../../src/envoy/protos';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { silentLogger } from '../../src/observability/logger';
import { PUSH_ORDER } from '../../src/xds/served-types';
import type { FleetChange } from '../../src/xds/snapshot';
import { CONTROLLER_NAME, FLEET, SIZES, World } from '../world';
import { median, nowMs, round } from '../common';

function timed(f: () => void, n = 5): number {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = nowMs();
    f();
    times.push(nowMs() - t);
  }
  return round(median(times), 2);
}

function main(): void {
  const size = SIZES[process.argv[2] ?? 'large'];
  envoyRoot();
  const world = new World({ size });
  const store = new ObjectStore();
  world.load(store);
  const memo = new BuildMemo();
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const build = () => buildGateways(store, { controllerName: CONTROLLER_NAME, now }, memo);
  const built = build();
  const cache = new XdsCache({ logger: silentLogger(), metrics: new ConvoyMetrics() });
  const changes: FleetChange[] = [];
  cache.onChange((c) => changes.push(c));
  const fleet = built.fleets.find((f) => f.fleet === FLEET)!;
  cache.setFleet(FLEET, translateFleet(fleet, { bindAddress: '127.0.0.1' }));
  const full = changes[0];
  const encoder = new FleetDeltaEncoder();
  let delta: FleetDelta = encoder.encode(full, true);
  const encodeMs = timed(() => (delta = new FleetDeltaEncoder().encode(full, true)));
  const transferMs = timed(() => {
    const d = new FleetDeltaEncoder().encode(full, true);
    structuredClone(d, { transfer: [d.bytes] });
  });
  const snap = full.snapshot!;
  const asBuffers = PUSH_ORDER.flatMap((t) =>
    snap.types[t].sorted.map((e) => ({ name: e.name, version: e.version, bytes: new Uint8Array(e.bytes) })),
  );
  const copyMs = timed(() => structuredClone(asBuffers));
  const applyMs = timed(() =>
    new MirrorCache(silentLogger()).apply(new FleetDeltaEncoder().encode(full, true)),
  );
  // A fast-path change: one route edited, re-translated into the same cache.
  const edited = world.editRoute(17);
  for (const o of edited) store.put(o);
  const again = build().fleets.find((f) => f.fleet === FLEET)!;
  changes.length = 0;
  cache.setFleet(FLEET, translateFleet(again, { bindAddress: '127.0.0.1' }));
  const small = changes[0];
  const mirror = new MirrorCache(silentLogger());
  mirror.apply(encoder.encode(full, true));
  const smallDelta = encoder.encode(small, false);
  const smallMs = timed(() => {
    const d = encoder.encode(small, false);
    structuredClone(d, { transfer: [d.bytes] });
  });
  const smallApplyMs = timed(() => mirror.apply(encoder.encode(small, false)), 1);
  const statusesMs = timed(() => structuredClone(built.statuses));
  const objects = store.kinds().flatMap((k) => store.list(k));
  const storeMs = timed(() => structuredClone(objects), 3);
  const chunkMs = timed(() => structuredClone(objects.slice(0, 500)));
  console.log(
    JSON.stringify(
      {
        size: size.name,
        node: process.version,
        fullSnapshot: {
          resources: asBuffers.length,
          bytes: delta.bytes.byteLength,
          encodeDeltaMs: encodeMs,
          deltaWithTransferCloneMs: transferMs,
          copiedBuffersCloneMs: copyMs,
          mirrorApplyMs: applyMs,
        },
        routeEdit: {
          resources: smallDelta.types.reduce((a, t) => a + t.names.length, 0),
          bytes: smallDelta.bytes.byteLength,
          clusterEdsSent: smallDelta.clusterEds !== undefined,
          deltaCloneMs: smallMs,
          mirrorApplyMs: smallApplyMs,
        },
        statuses: { count: built.statuses.length, cloneMs: statusesMs },
        store: { objects: objects.length, cloneMs: storeMs, chunkOf500CloneMs: chunkMs },
      },
      null,
      2,
    ),
  );
}

main();
