import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podPhase, podStatus } from '../../e2e/cluster/pod-status';
import type { ContainerView } from '../../e2e/cluster/pod-status';

const running = (name: string, ready: boolean): ContainerView => ({
  name,
  image: 'img',
  imageKind: 'echo-basic',
  ready,
  started: true,
  restartCount: 0,
  state: { running: { startedAt: 't0' } },
  lastState: {},
});

test('a pod is Ready only when every container is ready; transition times stay while a condition holds', () => {
  const transitions = new Map<string, { status: string; time: string }>();
  const base = { podIP: '192.0.2.10', hostIP: '192.0.2.1', startTime: 't0', transitions };
  const s1 = podStatus({ ...base, containers: [running('a', true), running('b', false)], now: 't1' });
  const cond = (s: Record<string, unknown>, type: string) =>
    (s.conditions as { type: string; status: string; lastTransitionTime: string }[]).find(
      (c) => c.type === type,
    )!;
  assert.equal(s1.phase, 'Running');
  assert.equal(cond(s1, 'Ready').status, 'False');
  assert.equal(cond(s1, 'PodScheduled').lastTransitionTime, 't1');
  const s2 = podStatus({ ...base, containers: [running('a', true), running('b', true)], now: 't2' });
  assert.equal(cond(s2, 'Ready').status, 'True');
  assert.equal(cond(s2, 'Ready').lastTransitionTime, 't2');
  assert.equal(cond(s2, 'PodScheduled').lastTransitionTime, 't1');
  assert.deepEqual(s2.podIPs, [{ ip: '192.0.2.10' }]);
});

test('podPhase: Pending before the first start, Succeeded or Failed once every container terminated for good', () => {
  const waiting: ContainerView = {
    ...running('a', false),
    started: false,
    state: { waiting: { reason: 'ContainerCreating' } },
  };
  assert.equal(podPhase([waiting]), 'Pending');
  const done = (code: number): ContainerView => ({
    ...running('a', false),
    state: { terminated: { exitCode: code, reason: code ? 'Error' : 'Completed', finishedAt: 't' } },
  });
  assert.equal(podPhase([done(0), done(0)]), 'Succeeded');
  assert.equal(podPhase([done(0), done(1)]), 'Failed');
  const backoff: ContainerView = {
    ...running('a', false),
    restartCount: 1,
    state: { waiting: { reason: 'CrashLoopBackOff' } },
  };
  assert.equal(podPhase([backoff]), 'Running');
});
