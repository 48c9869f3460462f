import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/observability/logger';
import { LeaderElector } from '../../src/kubernetes/lease';
import type { LeaderElectionOptions } from '../../src/kubernetes/lease';
import { FakeApiServer } from './fake-apiserver';

const LEASES = '/apis/coordination.k8s.io/v1/leases';
/**
 * Timings for tests that must not lose or gain leadership because the CPU is busy: a leader
 * steps down only after failing to renew for 20 s, and a standby waits 30 s for a Lease to
 * expire. Tests that wait on these deadlines use fractions of them, so a slow machine stretches
 * every step without changing the outcome.
 */
const patient = { leaseDurationMs: 30_000, renewDeadlineMs: 20_000, retryPeriodMs: 100 };

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  leaseTransitions?: number;
  acquireTime?: string;
  renewTime?: string;
}

/** Polls until `check` holds; the deadline only bounds a test that is already failing. */
async function until(check: () => boolean, what = 'condition', timeoutMs = 30_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
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
      ...patient,
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
    assert.equal(spec.leaseDurationSeconds, 30);
    assert.equal(spec.leaseTransitions, 0);
    assert.match(spec.acquireTime!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // It keeps renewing.
    const first = spec.renewTime;
    await until(() => lease()!.renewTime !== first, 'renewal');
  });

  test('default identity is hostname_pid and default Lease name convoy-leader', () => {
    const e = new LeaderElector({ client: api.client(), logger: silentLogger() });
    assert.match(e.identity, new RegExp(`_${process.pid}$`));
    assert.equal(e.name, 'convoy-leader');
  });

  test('two contenders: exactly one leads, at every moment', async () => {
    // Leases short enough that the standby checks for expiry many times while it watches, with
    // a renew deadline long enough that a busy CPU does not make the leader step down.
    const short = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 100 };
    const a = elector('a', short);
    const b = elector('b', short);
    a.e.start();
    b.e.start();
    await until(() => a.e.isLeader || b.e.isLeader, 'a leader');
    // Sampled for longer than the lease duration.
    for (let i = 0; i < 60; i++) {
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
    // Without the release, b would have to wait the whole lease duration.
    await until(() => b.e.isLeader, 'takeover before the lease expires', patient.leaseDurationMs / 2);
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
    // A retry period far longer than the ghost's 1 s lease: b must try again right when the
    // lease expires rather than at its next regular attempt.
    const slowRetry = { leaseDurationMs: 30_000, renewDeadlineMs: 25_000, retryPeriodMs: 20_000 };
    const b = elector('b', slowRetry);
    const started = Date.now();
    b.e.start();
    await until(() => b.e.leader === 'ghost');
    await until(() => b.e.isLeader, 'takeover at expiry', slowRetry.retryPeriodMs * 0.75);
    const took = Date.now() - started;
    assert.ok(took >= 1000, `took over after ${took} ms, before the lease expired`);
    assert.equal(lease()!.leaseTransitions, 4);
  });

  test('a leader that cannot renew steps down within the renew deadline, before the lease expires', async () => {
    // A standby is the witness: it may take over once the Lease expired, and the leader must
    // have stepped down by then. The 2.4 s between renew deadline and lease expiry absorb a busy CPU.
    const timing = { leaseDurationMs: 3000, renewDeadlineMs: 600, retryPeriodMs: 100 };
    const order: string[] = [];
    const a = elector('a', {
      ...timing,
      client: api.client('token-a'),
      onStoppedLeading: () => order.push('a stopped'),
    });
    a.e.start();
    await until(() => a.e.isLeader);
    const b = elector('b', { ...timing, onStartedLeading: () => order.push('b started') });
    b.e.start();
    await until(() => b.e.leader === 'a');
    // Only a's requests fail (it is cut off from the API server); b still sees the Lease.
    api.failNext((q) => q.token === 'token-a' && q.path.includes('/leases'), 503, 1_000_000);
    await until(() => b.e.isLeader, 'takeover after expiry');
    assert.deepEqual(order, ['a stopped', 'b started']);
    assert.equal(a.e.isLeader, false);
    assert.equal(lease()!.holderIdentity, 'b');
  });

  test('a leader that finds someone else holding the Lease steps down at once', async () => {
    const a = elector('a');
    a.e.start();
    await until(() => a.e.isLeader);
    const current = api.get(LEASES, 'convoy-system', 'convoy-leader')!;
    api.upsert(LEASES, { ...current, spec: { ...(current.spec as object), holderIdentity: 'intruder' } });
    // Well before the renew deadline: a steps down on seeing the intruder, not on a timeout.
    await until(() => !a.e.isLeader, 'step down', patient.renewDeadlineMs / 2);
    assert.deepEqual(a.events, ['started', 'stopped']);
  });

  test('conflicting writes lose cleanly (409) and do not make a second leader', async () => {
    const a = elector('a');
    a.e.start();
    await until(() => a.e.isLeader);
    const puts = () => api.requests.filter((q) => q.method === 'PUT').length;
    const putsBefore = puts();
    api.failNext((q) => q.method === 'PUT', 409, 2);
    // Two renewals answered 409, then one more renewal attempt.
    await until(() => puts() >= putsBefore + 3, 'renewals after the conflicts');
    assert.equal(a.e.isLeader, true, 'a brief conflict is not a loss of leadership');
    assert.deepEqual(a.events, ['started']);
  });
});
