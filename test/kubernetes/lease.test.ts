import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/observability/logger';
import { LeaderElector } from '../../src/kubernetes/lease';
import type { LeaderElectionOptions } from '../../src/kubernetes/lease';
import { FakeApiServer } from './fake-apiserver';

const LEASES = '/apis/coordination.k8s.io/v1/leases';
const timing = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  leaseTransitions?: number;
  acquireTime?: string;
  renewTime?: string;
}

async function until(check: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<number> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - start;
}

describe('LeaderElector against a fake API server', () => {
  let api: FakeApiServer;
  const electors: LeaderElector[] = [];

  beforeEach(async () => {
    api = new FakeApiServer();
    await api.start();
  });
  afterEach(async () => {
    await Promise.all(electors.splice(0).map((e) => e.stop()));
    await api.stop();
  });

  function elector(identity: string, extra: Partial<LeaderElectionOptions> = {}) {
    const events: string[] = [];
    const e = new LeaderElector({
      client: api.client(),
      logger: silentLogger(),
      namespace: 'convoy-system',
      identity,
      ...timing,
      onStartedLeading: () => events.push('started'),
      onStoppedLeading: () => events.push('stopped'),
      ...extra,
    });
    electors.push(e);
    return { e, events };
  }

  const lease = () => api.get(LEASES, 'convoy-system', 'convoy-leader')?.spec as LeaseSpec | undefined;

  test('validates timings', () => {
    assert.throws(
      () =>
        new LeaderElector({
          client: api.client(),
          logger: silentLogger(),
          leaseDurationMs: 1000,
          renewDeadlineMs: 1000,
        }),
      /leaseDuration > renewDeadline > retryPeriod/,
    );
  });

  test('creates the Lease and leads; the Lease records holder, duration and MicroTime timestamps', async () => {
    const a = elector('a');
    a.e.start();
    await until(() => a.e.isLeader);
    assert.deepEqual(a.events, ['started']);
    const spec = lease()!;
    assert.equal(spec.holderIdentity, 'a');
    assert.equal(spec.leaseDurationSeconds, 1);
    assert.equal(spec.leaseTransitions, 0);
    assert.match(spec.acquireTime!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // It keeps renewing.
    const first = spec.renewTime;
    await until(() => lease()!.renewTime !== first, 2000, 'renewal');
  });

  test('default identity is hostname_pid and default Lease name convoy-leader', () => {
    const e = new LeaderElector({ client: api.client(), logger: silentLogger() });
    assert.match(e.identity, new RegExp(`_${process.pid}$`));
    assert.equal(e.name, 'convoy-leader');
  });

  test('two contenders: exactly one leads, at every moment', async () => {
    const a = elector('a');
    const b = elector('b');
    a.e.start();
    b.e.start();
    await until(() => a.e.isLeader || b.e.isLeader);
    for (let i = 0; i < 30; i++) {
      assert.notEqual(a.e.isLeader && b.e.isLeader, true, 'never two leaders');
      assert.equal(a.e.isLeader || b.e.isLeader, true, 'a leader is kept');
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(a.e.leader, b.e.leader);
  });

  test('a graceful stop releases the Lease; the standby takes over well within the lease duration', async () => {
    const a = elector('a');
    a.e.start();
    await until(() => a.e.isLeader);
    const b = elector('b');
    b.e.start();
    await until(() => b.e.leader === 'a');
    await a.e.stop();
    assert.deepEqual(a.events, ['started', 'stopped']);
    const took = await until(() => b.e.isLeader, 3000, 'takeover');
    assert.ok(took < timing.leaseDurationMs, `took ${took} ms`);
    assert.equal(lease()!.holderIdentity, 'b');
    assert.equal(lease()!.leaseTransitions, 1);
  });

  test('a holder that stops renewing (crashed) is replaced only after the lease duration', async () => {
    // A Lease held by a replica that died without releasing it.
    api.upsert(LEASES, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'convoy-leader', namespace: 'convoy-system' },
      spec: {
        holderIdentity: 'ghost',
        leaseDurationSeconds: 1,
        renewTime: new Date().toISOString(),
        leaseTransitions: 3,
      },
    });
    const b = elector('b');
    const started = Date.now();
    b.e.start();
    await until(() => b.e.leader === 'ghost');
    await until(() => b.e.isLeader, 4000, 'takeover');
    const took = Date.now() - started;
    assert.ok(took >= 1000, `took over after ${took} ms, before the lease expired`);
    assert.ok(took < 1000 + timing.retryPeriodMs + 500, `took ${took} ms`);
    assert.equal(lease()!.leaseTransitions, 4);
  });

  test('a leader that cannot renew steps down within the renew deadline, before the lease expires', async () => {
    const a = elector('a');
    a.e.start();
    await until(() => a.e.isLeader);
    const lastRenew = Date.now();
    api.failNext((q) => q.path.includes('/leases'), 503, 1000);
    const took = await until(() => !a.e.isLeader, 3000, 'step down');
    assert.deepEqual(a.events, ['started', 'stopped']);
    assert.ok(Date.now() - lastRenew < timing.leaseDurationMs, `stepped down after ${took} ms`);
  });

  test('a leader that finds someone else holding the Lease steps down at once', async () => {
    const a = elector('a');
    a.e.start();
    await until(() => a.e.isLeader);
    const current = api.get(LEASES, 'convoy-system', 'convoy-leader')!;
    api.upsert(LEASES, { ...current, spec: { ...(current.spec as object), holderIdentity: 'intruder' } });
    await until(() => !a.e.isLeader, 1000, 'step down');
  });

  test('conflicting writes lose cleanly (409) and do not make a second leader', async () => {
    const a = elector('a');
    a.e.start();
    await until(() => a.e.isLeader);
    api.failNext((q) => q.method === 'PUT', 409, 2);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(a.e.isLeader, true, 'a brief conflict is not a loss of leadership');
  });
});
