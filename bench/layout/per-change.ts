/**
 * The store-level cost of one change per listener layout at a bench size (docs/xds.md §16,
 * bench/README.md "The auto layout per change (session 17)"): the bench world is built by a
 * Controller translating with the given layout, then each change of bench/e2e/changes.ts (route
 * edited, certificate rotated, ListenerSet added, EndpointSlice changed, ListenerSet deleted,
 * route deleted) is written to the store and timed until the XdsCache accepts the snapshot that
 * holds it. The build runs on this thread, so that time is also how long the event loop is held.
 *
 * Usage: node dist/bench/layout/per-change.js [--size large] [--layout auto] [--repeats 5]
 *        [--kinds route,cert,...] [--profile DIR] [--out FILE]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ObjectStore } from '../../src/store/store';
import { XdsCache } from '../../src/xds/cache';
import { BuildMemo } from '../../src/gateway/build-memo';
import { Controller } from '../../src/controller/controller';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { silentLogger } from '../../src/observability/logger';
import type { ListenerLayout } from '../../src/envoy/translate/layout-choice';
import { CONTROLLER_NAME, FLEET, SIZES, World } from '../world';
import { gitShortRev, median, nowMs, round } from '../common';
import { startProfile } from '../fanout';
import { CHANGE_KINDS, ChangeMaker, type ChangeKind } from '../e2e/changes';
import { waitIdle, type Server } from '../run';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
}

async function main(): Promise<void> {
  const size = SIZES[arg('size', 'large')];
  if (!size) throw new Error(`unknown --size (${Object.keys(SIZES).join(', ')})`);
  const layout = arg('layout', 'auto') as ListenerLayout;
  const repeats = Number(arg('repeats', '5'));
  const kinds = arg('kinds', CHANGE_KINDS.join(',')).split(',') as ChangeKind[];
  const profileDir = process.argv.includes('--profile') ? arg('profile', '') : undefined;

  const world = new World({ size });
  const store = new ObjectStore();
  world.load(store);
  const cache = new XdsCache({ logger: silentLogger(), metrics: new ConvoyMetrics() });
  const controller = new Controller({
    store,
    cache,
    statusSinks: [],
    logger: silentLogger(),
    metrics: new ConvoyMetrics(),
    controllerName: CONTROLLER_NAME,
    translate: { bindAddress: '127.0.0.1', listenerLayout: layout },
    memo: new BuildMemo(),
    debounceMs: 0,
    maxDelayMs: 0,
  });
  const server = { controller } as unknown as Server;
  const t0 = nowMs();
  controller.start();
  await waitIdle(server);
  while (!cache.snapshot(FLEET)) await new Promise((r) => setTimeout(r, 10));
  await waitIdle(server);
  const firstBuildMs = nowMs() - t0;
  console.error(`  ${layout}: first build ${round(firstBuildMs)} ms`);

  const maker = new ChangeMaker(world, layout !== 'chains');
  const times: Record<string, number[]> = {};
  const profiler = profileDir ? await startProfile() : undefined;
  for (let rep = 0; rep < repeats; rep++) {
    for (const kind of kinds) {
      const change = maker.next(kind);
      const accepted = new Promise<number>((resolve) => {
        const off = cache.onChange((c) => {
          if (c.fleet !== FLEET) return;
          off();
          resolve(nowMs());
        });
      });
      const start = nowMs();
      for (const o of change.objects) store.put(o);
      for (const o of change.deleted ?? []) store.delete(o.kind, o.metadata.namespace ?? '', o.metadata.name);
      const end = await accepted;
      (times[kind] ??= []).push(round(end - start, 2));
      await waitIdle(server);
    }
  }
  if (profiler) await profiler.stop(path.join(profileDir!, `per-change-${layout}.cpuprofile`));
  controller.stop();
  const summary = Object.fromEntries(
    Object.entries(times).map(([k, v]) => [
      k,
      { medianMs: round(median(v), 2), minMs: Math.min(...v), maxMs: Math.max(...v), runs: v },
    ]),
  );
  for (const [k, s] of Object.entries(summary))
    console.error(`  ${layout} ${k}: median ${s.medianMs} ms (${s.minMs}–${s.maxMs})`);
  const out = arg('out', '');
  if (out) {
    fs.mkdirSync(path.dirname(out), { recursive: true });
    const result = {
      rev: gitShortRev(path.join(__dirname, '..', '..', '..')),
      node: process.version,
      size: size.name,
      layout,
      repeats,
      firstBuildMs: round(firstBuildMs),
      changes: summary,
    };
    fs.writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
