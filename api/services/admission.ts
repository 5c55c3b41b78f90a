// Admission at the door: on Kubernetes, whether the cluster can take a new run, or it is refused with
// 429 runtime_admission_rejected and a Retry-After before any workflow exists (runs queued across
// the instance, and svc's pods the cluster has not started). Concurrency limits are not checked
// here: a run past them is accepted and waits, queued, for a slot (workflows/admission.workflow.ts).
import { agentImageRefusal, type ContainerSettings, type KubernetesSettings } from '../../platform/sandbox-settings.ts';
import type { RunsRepository } from '../../db/repositories/runs.repository.ts';
import { Errors } from '../errors.ts';
import type { ProjectPodSettings } from '../../core/svc-config.schema.ts';

/** The cap reasons, as the hint of the 429 names them. */
export const ADMISSION_REASONS = ['cluster_pending_saturated', 'queue_depth_exceeded'] as const;

/**
 * What admission asks of the Kubernetes backend when SVC_SANDBOX=kubernetes. The composition root
 * wires it from the backend's own code (stack/kubernetes-admission.ts): the API imports no sandbox
 * code (docs/architecture.md, the layers).
 */
export interface KubernetesAdmission {
  settings: KubernetesSettings;
  /** svc's pods the cluster has not started; null when the API server does not answer (it does not block dispatch). */
  pendingPods(): Promise<number | null>;
  /** What a project's pod settings name that the operator does not let projects use (`Secret "x"`, …). */
  disallowedPodSettings(project: ProjectPodSettings): string[];
}

export interface AdmissionDeps {
  runRows: Pick<RunsRepository, 'countQueued'>;
  /** The Kubernetes backend when SVC_SANDBOX=kubernetes, else null. */
  kubernetes: KubernetesAdmission | null;
  /** The images projects may name (SVC_AGENT_IMAGES) when agents run in containers or pods, else null. */
  agentImages?: Pick<ContainerSettings, 'images'> | null;
  /** SVC_MAX_CONCURRENT_RUNS, reported by GET /instance (the runs themselves carry and enforce it). */
  maxConcurrentRuns: number | null;
}

/** The limits GET /instance reports (null: only projects' own caps apply). */
export type AdmissionLimits = {
  maxConcurrentRuns: number | null;
  maxQueueDepth: number | null;
  maxPendingPods: number | null;
} | null;

export class Admission {
  readonly #deps: AdmissionDeps;

  constructor(deps: AdmissionDeps) {
    this.#deps = deps;
  }

  get limits(): AdmissionLimits {
    const { maxConcurrentRuns } = this.#deps;
    const kubernetes = this.#deps.kubernetes?.settings;
    if (!kubernetes && maxConcurrentRuns === null) return null;
    return {
      maxConcurrentRuns,
      maxQueueDepth: kubernetes?.admission.queueDepth ?? null,
      maxPendingPods: kubernetes?.admission.pendingPods ?? null,
    };
  }

  /**
   * A project's pod settings may name only the Secrets and service accounts the operator lets
   * projects name (422 otherwise: the run would otherwise start without what it asked for).
   */
  checkPodSettings(project: ProjectPodSettings | null | undefined): void {
    const kubernetes = this.#deps.kubernetes;
    if (!kubernetes || !project) return;
    const refused = kubernetes.disallowedPodSettings(project);
    if (refused.length)
      throw Errors.svcConfigInvalid(
        '.svc/config.yaml',
        `kubernetes names ${refused.join(', ')}, which the operator does not let projects use ` +
          '(SVC_KUBERNETES_POD_DEFAULTS projectsMay)',
      );
  }

  /**
   * A project's `agentImage` must be one the operator allows (422 otherwise: refused here, not as
   * a run that fails at its start).
   */
  checkAgentImage(image: string | null | undefined): void {
    const refusal = this.#deps.agentImages ? agentImageRefusal(image, this.#deps.agentImages) : null;
    if (refusal) throw Errors.svcConfigInvalid('.svc/config.yaml', refusal);
  }

  /**
   * Throws the 429 when the cluster's capacity is reached. Concurrency limits (the instance's and a
   * project's) never refuse a run: it waits, queued, for a slot (workflows/admission.workflow.ts).
   */
  async check(): Promise<void> {
    const kubernetes = this.#deps.kubernetes;
    if (!kubernetes) return;
    const limits = kubernetes.settings.admission;
    const queued = await this.#deps.runRows.countQueued();
    if (queued >= limits.queueDepth)
      throw Errors.admissionRejected(
        'queue_depth_exceeded',
        `${queued} runs are queued, the instance's limit (SVC_ADMISSION_QUEUE_DEPTH)`,
      );
    const pending = await kubernetes.pendingPods();
    if (pending !== null && pending >= limits.pendingPods)
      throw Errors.admissionRejected(
        'cluster_pending_saturated',
        `the cluster has ${pending} of svc's pods pending, its limit (SVC_ADMISSION_PENDING_PODS)`,
      );
  }
}
