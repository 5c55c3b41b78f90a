// Watching a run's pod to its end without trusting one channel: a watch for promptness, and a read
// on a beat that also notices an API server that stopped answering. The pod's status says how it
// ended: terminated (with the kubelet's reason: OOMKilled, DeadlineExceeded when svc stopped it),
// evicted, refused before it ran (image pull, a missing secret), or gone.
import type { V1Pod } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeApi } from './kube-api.ts';

/** How often the supervisor reads its pod besides the watch. */
const BEAT_MS = 2000;
/** Waiting reasons that mean the container will not start without someone changing something. */
const REFUSALS = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

export type PodEnd =
  | { kind: 'terminated'; exitCode: number | null; reason: string | null }
  | { kind: 'refused'; message: string }
  | { kind: 'lost'; loss: 'vanished' | 'unreachable' | 'evicted'; detail?: string };

type Verdict = PodEnd | 'running' | 'pending';

export function podVerdict(pod: V1Pod | null): Verdict {
  if (!pod) return { kind: 'lost', loss: 'vanished', detail: 'the pod was deleted' };
  const status = pod.status;
  if (status?.reason === 'Evicted')
    return { kind: 'lost', loss: 'evicted', detail: status.message ?? 'the kubelet evicted the pod' };
  const container = status?.containerStatuses?.find((entry) => entry.name === 'agent');
  const state = container?.state;
  if (state?.terminated)
    return { kind: 'terminated', exitCode: state.terminated.exitCode, reason: state.terminated.reason ?? null };
  if (state?.waiting?.reason && REFUSALS.has(state.waiting.reason))
    return {
      kind: 'refused',
      message: `${state.waiting.reason}: ${state.waiting.message ?? 'the container cannot start'}`,
    };
  if (status?.phase === 'Failed' || status?.phase === 'Succeeded')
    // Ended before its container ran (svc's deadline on a pending pod, or a node lost).
    return { kind: 'terminated', exitCode: null, reason: status.reason ?? null };
  return state?.running ? 'running' : 'pending';
}

/** Resolves with the pod's end; `onRunning` is called when its container is first seen running (or already done). */
export async function watchPod(
  api: KubeApi,
  name: string,
  unreachableAfterMs: number,
  onRunning: () => void,
): Promise<PodEnd> {
  let wake: (() => void) | undefined;
  let latest: V1Pod | null | undefined;
  const watch = api.watch(name, (type, pod) => {
    latest = type === 'DELETED' ? null : pod;
    wake?.();
  });
  watch.done.catch(() => {});
  let unansweredSince: number | null = null;
  try {
    for (;;) {
      let pod: V1Pod | null;
      try {
        pod = latest !== undefined ? latest : await api.read(name);
        latest = undefined;
        unansweredSince = null;
      } catch {
        unansweredSince ??= Date.now();
        if (Date.now() - unansweredSince > unreachableAfterMs)
          return {
            kind: 'lost',
            loss: 'unreachable',
            detail: `the Kubernetes API did not answer for ${unreachableAfterMs} ms`,
          };
        await sleep(1000);
        continue;
      }
      const verdict = podVerdict(pod);
      if (verdict === 'running') onRunning();
      else if (verdict !== 'pending') {
        if (verdict.kind === 'terminated') onRunning();
        return verdict;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, BEAT_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    watch.stop();
  }
}
