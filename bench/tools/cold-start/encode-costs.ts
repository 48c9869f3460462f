/**
 * What encoding the first snapshot of the large world costs per resource type, against what it
 * would cost to hand those resources to another thread (structured clone: serialize here,
 * deserialize there). Why: encoding the first snapshot in the idle parse workers pays only if the
 * copy is much cheaper than the encoding it moves (docs/architecture.md §10.5).
 *
 *   node dist/bench/tools/cold-start/encode-costs.js [--size large] [--rounds 3]
 */
import { serialize, deserialize } from 'node:v8';
import { performance } from 'node:perf_hooks';
import { ObjectStore } from '../../../src/store/store';
import { buildGateways } from '../../../src/gateway/build';
import { translateFleet } from '../../../src/envoy/translate';
import { encodeMessage, envoyRoot } from '../../../src/envoy/protos';
import { encodeListener } from '../../../src/xds/listener-bytes';
import { TypeUrl, messageNameOf, type EnvoyResources } from '../../../src/envoy/resources';
import { CONTROLLER_NAME, FLEET, SIZES, World } from '../../world';

const LISTS: readonly { type: TypeUrl; key: keyof EnvoyResources }[] = [
  { type: TypeUrl.Secret, key: 'secrets' },
  { type: TypeUrl.Cluster, key: 'clusters' },
  { type: TypeUrl.Endpoint, key: 'endpoints' },
  { type: TypeUrl.Listener, key: 'listeners' },
  { type: TypeUrl.Route, key: 'routes' },
];

function arg(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
}

function main(): void {
  const size = SIZES[arg('--size', 'large')];
  const rounds = Number(arg('--rounds', '3'));
  // --warm SIZE: encode a whole world of that size first (how much of round 0 is warm-up?).
  const warm = arg('--warm', '');
  if (warm) {
    const t0 = performance.now();
    const small = new World({ size: SIZES[warm] });
    const smallStore = new ObjectStore();
    small.load(smallStore);
    const smallBuilt = buildGateways(smallStore, {
      controllerName: CONTROLLER_NAME,
      now: new Date(0).toISOString(),
    });
    const smallRes = translateFleet(
      smallBuilt.fleets.find((f) => f.fleet === FLEET)!,
      { bindAddress: '127.0.0.1' },
    );
    for (const { type, key } of LISTS)
      for (const obj of smallRes[key] as readonly object[])
        if (type === TypeUrl.Listener) encodeListener(obj);
        else encodeMessage(messageNameOf(type), obj);
    console.error(`warm-up on ${warm}: ${Math.round(performance.now() - t0)} ms`);
  }
  const world = new World({ size });
  const store = new ObjectStore();
  world.load(store);
  envoyRoot();
  const built = buildGateways(store, { controllerName: CONTROLLER_NAME, now: new Date(0).toISOString() });
  const fleet = built.fleets.find((f) => f.fleet === FLEET)!;
  const out: Record<string, unknown> = {};
  for (let round = 0; round < rounds; round++) {
    // A fresh translation each round: nothing is cached by object identity.
    const resources = translateFleet(fleet, { bindAddress: '127.0.0.1' });
    for (const { type, key } of LISTS) {
      const list = resources[key] as readonly object[];
      const t0 = performance.now();
      let bytes = 0;
      for (const obj of list)
        bytes += (
          type === TypeUrl.Listener ? encodeListener(obj).bytes : encodeMessage(messageNameOf(type), obj)
        ).length;
      const t1 = performance.now();
      const wire = serialize(list);
      const t2 = performance.now();
      deserialize(wire);
      const t3 = performance.now();
      out[`${key}#${round}`] = {
        objects: list.length,
        encodedBytes: bytes,
        encodeMs: Math.round(t1 - t0),
        serializeMs: Math.round(t2 - t1),
        deserializeMs: Math.round(t3 - t2),
        cloneBytes: wire.length,
      };
    }
  }
  console.log(JSON.stringify(out, null, 1));
}

main();
