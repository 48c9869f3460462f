/**
 * Child process of the benchmark runner: hosts many simulated Envoys (sim-envoy.ts) and answers
 * the runner over IPC. Started with child_process.fork; see ClientPool in fanout.ts.
 *
 * Messages in:  connect {batch, address, fleet, variant, ids}, arm {arm, expect}, collect {arm},
 *               close, exit.
 * Messages out: ready, synced {batch, results}, armed {arm}, done {arm, results},
 *               collected {arm, results}, closed, error {message}.
 */
import { SimEnvoy } from './sim-envoy';
import type { ArmStats, Expectation, SimTls, Variant } from './sim-envoy';

export type ToClient =
  | {
      t: 'connect';
      batch: number;
      address: string;
      fleet: string;
      variant: Variant;
      ids: string[];
      /** mTLS material; plaintext when absent. */
      tls?: SimTls;
    }
  | { t: 'arm'; arm: number; expect: Expectation[] }
  | { t: 'collect'; arm: number }
  | { t: 'close' }
  | { t: 'exit' };

export interface SyncResult {
  id: string;
  variant: Variant;
  connectedAt: number;
  syncedAt: number;
  bytes: number;
}

export interface DoneResult {
  id: string;
  variant: Variant;
  doneAt: number;
  firstAt?: number;
}

export interface CollectResult extends ArmStats {
  id: string;
  variant: Variant;
}

export type FromClient =
  | { t: 'ready'; pid: number }
  | { t: 'synced'; batch: number; results: SyncResult[] }
  | { t: 'armed'; arm: number }
  | { t: 'done'; arm: number; results: DoneResult[] }
  | { t: 'collected'; arm: number; results: CollectResult[]; rss: number }
  | { t: 'closed' }
  | { t: 'error'; message: string };

const envoys: SimEnvoy[] = [];
const batches = new Map<number, { members: SimEnvoy[]; left: number }>();
let currentArm: { arm: number; left: number } | undefined;

function send(m: FromClient): void {
  process.send!(m);
}

function onSynced(s: SimEnvoy): void {
  for (const [batch, b] of batches) {
    if (!b.members.includes(s)) continue;
    if (--b.left === 0) {
      batches.delete(batch);
      send({
        t: 'synced',
        batch,
        results: b.members.map((m) => ({
          id: m.id,
          variant: m.variant,
          connectedAt: m.connectedAt,
          syncedAt: m.syncedAt!,
          bytes: m.totalBytes,
        })),
      });
    }
    return;
  }
}

function onDone(): void {
  if (!currentArm) return;
  if (--currentArm.left === 0) {
    send({
      t: 'done',
      arm: currentArm.arm,
      results: envoys.map((e) => ({
        id: e.id,
        variant: e.variant,
        doneAt: e.armStats()!.doneAt!,
        firstAt: e.armStats()!.firstAt,
      })),
    });
  }
}

// Surface stream errors (a benchmark must not silently lose clients).
setInterval(() => {
  const failed = envoys.find((e) => e.error);
  if (failed) {
    send({ t: 'error', message: `${failed.id}: ${failed.error}` });
    failed.error = undefined;
  }
}, 500).unref();

process.on('message', (m: ToClient) => {
  switch (m.t) {
    case 'connect': {
      const members = m.ids.map(
        (id) => new SimEnvoy(id, m.variant, m.address, m.fleet, onSynced, onDone, m.tls),
      );
      envoys.push(...members);
      batches.set(m.batch, { members, left: members.length });
      break;
    }
    case 'arm':
      currentArm = { arm: m.arm, left: envoys.length };
      for (const e of envoys) e.setArm(m.arm, m.expect);
      send({ t: 'armed', arm: m.arm });
      break;
    case 'collect':
      send({
        t: 'collected',
        arm: m.arm,
        results: envoys.map((e) => ({ id: e.id, variant: e.variant, ...e.armStats()! })),
        rss: process.memoryUsage().rss,
      });
      break;
    case 'close':
      for (const e of envoys) e.close();
      envoys.length = 0;
      batches.clear();
      currentArm = undefined;
      send({ t: 'closed' });
      break;
    case 'exit':
      for (const e of envoys) e.close();
      process.exit(0);
  }
});

process.on('disconnect', () => process.exit(0));
send({ t: 'ready', pid: process.pid });
