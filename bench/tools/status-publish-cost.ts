/**
 * Times the status publication of one route edit at a world's size: publishing the full set with
 * certificate validity computed from scratch (what every fast path did before status-publisher.ts's
 * publishChanges and served-certificates.ts) against publishing the change alone, with the fleet hold, rejection and certificate validity overlays in place. Synthetic
 * statuses shaped like a build's (a Gateway, N ListenerSets with one listener and certificate
 * each, 2N routes) and one fleet serving N chains; prints JSON with the median of several rounds.
 *
 * Usage: node dist/bench/tools/status-publish-cost.js [N=20000] [rounds=7]
 */
import { StatusPublisher, type OverlayInputs } from '../../src/controller/status-publisher';
import { FleetHold } from '../../src/controller/fleet-hold';
import { RejectionOverlay } from '../../src/controller/rejection-overlay';
import { ValidityOverlay } from '../../src/controller/validity-overlay';
import { silentLogger } from '../../src/observability/logger';
import type { FilterChainModel, FleetModel, SecretModel } from '../../src/model/fleet';
import type { Condition, ObjectStatus } from '../../src/status/types';
import { StatusView } from '../../src/status/view';
import { calibrationMs } from '../common';
import {
  CertificateValidityReader,
  nextBoundary,
  validityProblems,
} from '../../src/controller/certificate-validity';

const N = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 7);
let tick = 0;
const now = () => new Date(Date.UTC(2030, 0, 1) + tick * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const cond = (type: string, status: Condition['status']): Condition => ({
  type,
  status,
  reason: type,
  message: type,
  observedGeneration: 1,
  lastTransitionTime: now(),
});

function routeStatus(i: number, accepted: boolean): ObjectStatus {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { namespace: 'ns', name: `r${i}`, generation: 1 },
    status: {
      parents: [
        {
          parentRef: { kind: 'ListenerSet', name: `ls${i % N}` },
          controllerName: 'convoy.dev/gateway-controller',
          conditions: [cond('Accepted', accepted ? 'True' : 'False'), cond('ResolvedRefs', 'True')],
        },
      ],
    },
  };
}

const statuses: ObjectStatus[] = [];
const chains: FilterChainModel[] = [];
const secrets: SecretModel[] = [];
const year = 365 * 24 * 3600_000;
for (let i = 0; i < N; i++) {
  statuses.push({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'ListenerSet',
    metadata: { namespace: 'ns', name: `ls${i}`, generation: 1 },
    status: {
      conditions: [cond('Accepted', 'True'), cond('Programmed', 'True')],
      listeners: [{ name: 'https', attachedRoutes: 2, conditions: [cond('Programmed', 'True')] }],
    },
  });
  const secret = { name: `ns/ls${i}`, certificateChain: '', privateKey: '' };
  secrets.push({
    ...secret,
    validity: { notBefore: Date.UTC(2029, 0, 1), notAfter: Date.UTC(2029, 0, 1) + 2 * year },
  });
  chains.push({
    name: `ListenerSet/ns/ls${i}/https`,
    serverNames: [`ls${i}.example`],
    mode: 'Terminate',
    protocol: 'HTTPS',
    secretNames: [secret.name],
  });
}
for (let i = 0; i < 2 * N; i++) statuses.push(routeStatus(i, true));
const port = { name: 'https-443', port: 443, filterChains: chains };
let fleet = {
  fleet: 'ns/edge',
  gateway: { namespace: 'ns', name: 'edge' },
  ports: [port],
  clusters: [],
  secrets,
} as unknown as FleetModel;
const fleets = new Map([[fleet.fleet, fleet]]);

/**
 * A publisher over its own overlays; `fromScratch` computes certificate validity from every fleet
 * each time, as before served-certificates.ts.
 */
function publisher(fromScratch: boolean): StatusPublisher {
  const reader = new CertificateValidityReader();
  const scratch = {
    update: (models: Iterable<FleetModel>, at: number) => {
      const served = reader.served(models);
      return { problems: validityProblems(served, at), next: nextBoundary(served, at) };
    },
  };
  const clock = () => new Date(Date.UTC(2030, 0, 1));
  return new StatusPublisher({
    sinks: [new StatusView()],
    log: silentLogger(),
    hold: new FleetHold(),
    rejections: new RejectionOverlay(undefined, silentLogger()),
    validity: fromScratch
      ? new ValidityOverlay(clock, () => {}, scratch)
      : new ValidityOverlay(clock, () => {}),
    inputs: (): OverlayInputs => ({ now: now(), fleets, gateways: [], heldAddresses: () => undefined }),
  });
}
const before = publisher(true);
const after = publisher(false);
before.publishAll(statuses);
after.publishAll(statuses);

/** One route edit: its status flips, and the fleet gets a new model with that route's chain replaced. */
function edit(round: number): ObjectStatus {
  tick++;
  const i = (round * 7919) % (2 * N);
  const s = routeStatus(i, round % 2 === 0);
  statuses[N + i] = s;
  const at = i % N;
  const filterChains = fleet.ports[0].filterChains.slice();
  filterChains[at] = { ...filterChains[at] };
  fleet = { ...fleet, ports: [{ ...fleet.ports[0], filterChains }] };
  fleets.set(fleet.fleet, fleet);
  return s;
}

function time(fn: () => void): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const full: number[] = [];
// Each round: one edit, published both ways.
const delta: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const changed = edit(r);
  full.push(time(() => before.publishAll(statuses.slice())));
  delta.push(time(() => after.publishChanges([changed], [])));
}
console.log(
  JSON.stringify({
    statuses: statuses.length,
    chains: N,
    rounds: ROUNDS,
    beforePublishAllMs: { median: median(full), all: full.map((x) => Math.round(x * 10) / 10) },
    afterPublishChangesMs: { median: median(delta), all: delta.map((x) => Math.round(x * 100) / 100) },
    node: process.version,
    calibrationMs: calibrationMs(),
  }),
);
