// The sandbox runtime as the rest of svc sees it: what activities, the worker, the stack and the
// CLI may call. Everything else of sandbox/ is its own business (a lint rule keeps callers here and
// at spec.ts, the shapes). The parts: host/ (launch, supervisors, memory cgroups, records, sweep),
// inside/ (svc's programs in a sandbox), backends/ (bubblewrap, container, Kubernetes), network/
// (the egress and callback proxies, the egress allowlist).

// Building a launch: which backend, as which uid, with what egress, memory and engine.
export { sandboxLaunch, DOOR_SOCKET } from './host/sandbox-launch.ts';
export { agentEgressRules } from './network/egress-allowlist.ts';
export {
  bubblewrapWorks,
  chooseIsolation,
  imageRefusal,
  sandboxHostId,
  UNSANDBOXED_WARNING,
  workspaceSharesObjects,
} from './host/isolation.ts';
export { createMemoryCgroup, type MemoryLimitOutcome } from './host/memory-cgroup.ts';
export { engineFacts } from './backends/container/engine-facts.ts';

// A sandbox's life: start, inspect, reattach, stop; what its start meant; waiting for its records.
export {
  inspectSandbox,
  MAX_REATTACHMENTS,
  outlivesSupervisor,
  reattachSandbox,
  startSandbox,
  stopSandbox,
  supervisorHolds,
} from './host/local-sandbox.ts';
export { launchOutcome } from './host/launch-outcome.ts';
export { probeInSandbox, type ProbeOutcome } from './host/sandbox-probe.ts';
export { watchForExit } from './host/record-watch.ts';

// What a sandbox leaves on disk: its records, its output, its refusals, a pod's hand-back.
export { readJsonIfExists, sandboxFiles, type SandboxFiles } from './host/files.ts';
export { readNewLines, readRemainder } from './host/local-sandbox.ts';
export type { EgressRefusalRecord } from './network/egress-proxy.ts';
export { handedBack } from './backends/kubernetes/pod-gateway.ts';

// Previews on Kubernetes: the Service in front of a preview's pod.
export { exposePreviewPod, removePreviewService } from './backends/kubernetes/preview-service.ts';

// A run's services beside its agent (container backend).
export {
  probeService,
  removeServices,
  sandboxServices,
  serviceLogTail,
  serviceStartedAt,
  startServices,
} from './backends/container/container-services.ts';

// Sweeping what ended runs left in a container engine or a cluster.
export { sweepEndedSandboxes } from './backends/container/container-sweep.ts';
export { sweepEndedPods } from './backends/kubernetes/pod-sweep.ts';

// The worker's supervisor copies, whether a backend can serve at start, the cluster's pending pods.
export { prepareSupervisorProgram, pruneStalePrograms } from './host/supervisor-program.ts';
export { containerBackendReady } from './backends/container/container-backend.ts';
export { kubernetesBackendReady, pendingPodCount } from './backends/kubernetes/kubernetes-backend.ts';

export type { AgentRecord, ExposeRecord, LaunchSpec } from './spec.ts';
