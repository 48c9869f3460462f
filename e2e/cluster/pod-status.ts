import type { ContainerState } from './container';

/**
 * The status a kubelet reports for a pod, built from its containers' states: phase, addresses,
 * conditions (PodScheduled, Initialized, ContainersReady, Ready) with stable lastTransitionTimes,
 * and containerStatuses. Pure, so the rules (Ready only when every container is ready; phase
 * Succeeded/Failed once every container terminated for good) are unit-tested.
 */

export interface ContainerView {
  name: string;
  image: string;
  imageKind: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: ContainerState;
  lastState: ContainerState;
}

export interface PodStatusInput {
  podIP?: string;
  hostIP: string;
  startTime: string;
  containers: readonly ContainerView[];
  /** lastTransitionTime of each condition type and status seen before, updated in place. */
  transitions: Map<string, { status: string; time: string }>;
  now: string;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

/** The pod phase of a kubelet: Running while any container runs or will restart. */
export function podPhase(containers: readonly ContainerView[]): PodPhase {
  if (
    containers.length === 0 ||
    containers.some((c) => c.state.waiting && c.restartCount === 0 && !c.started)
  )
    return 'Pending';
  if (containers.every((c) => c.state.terminated))
    return containers.every((c) => c.state.terminated!.exitCode === 0) ? 'Succeeded' : 'Failed';
  return 'Running';
}

/** The status object to merge-patch onto the pod's status subresource. */
export function podStatus(input: PodStatusInput): Record<string, unknown> {
  const phase = podPhase(input.containers);
  const allReady = input.containers.length > 0 && input.containers.every((c) => c.ready);
  const condition = (type: string, ok: boolean, reason?: string) => {
    const status = ok ? 'True' : 'False';
    const prev = input.transitions.get(type);
    const time = prev && prev.status === status ? prev.time : input.now;
    input.transitions.set(type, { status, time });
    return { type, status, lastTransitionTime: time, ...(reason && !ok ? { reason } : {}) };
  };
  return {
    phase,
    hostIP: input.hostIP,
    hostIPs: [{ ip: input.hostIP }],
    ...(input.podIP ? { podIP: input.podIP, podIPs: [{ ip: input.podIP }] } : {}),
    startTime: input.startTime,
    conditions: [
      condition('PodScheduled', true),
      condition('Initialized', true),
      condition('ContainersReady', allReady, 'ContainersNotReady'),
      condition('Ready', allReady && phase === 'Running', 'ContainersNotReady'),
    ],
    containerStatuses: input.containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: `convoy-pod-runner://${c.imageKind}`,
      ...(c.state.running ? { containerID: `convoy-pod-runner://${c.name}-${c.restartCount}` } : {}),
      ready: c.ready,
      started: c.started && !!c.state.running,
      restartCount: c.restartCount,
      state: c.state,
      lastState: c.lastState,
    })),
  };
}
