// Admission at the door: on Kubernetes, whether the cluster can take a new run, or it is refused with
// 429 runtime_admission_rejected and a Retry-After before any workflow exists (runs queued across
// the instance, and svc's pods the cluster has not started, as a worker counts them:
// pending-pods.ts). Everywhere, whether the data directory's disk has room for one: below the
// operator's floor a new run is refused with 503 disk_nearly_full. Concurrency limits are not checked
// here: a run past them is accepted and waits, queued, for a slot (workflows/admission.workflow.ts).
import {
  agentImageRefusal,
  disallowedPodSettings,
  type ContainerSettings,
  type KubernetesSettings,
} from '../../platform/sandbox-settings.ts';
import type { RunsRepository } from '../../db/repositories/runs.repository.ts';
import {
  describeFloor,
  describeFreeSpace,
  diskShortageWatch,
  type DiskFloor,
  type FreeSpace,
} from '../../platform/disk-space.ts';
import { Errors } from '../errors.ts';
import type { ProjectPodSettings } from '../../core/svc-config.schema.ts';

/** The cap reasons, as the hint of the 429 names them. */
export const ADMISSION_REASONS = ['cluster_pending_saturated', 'queue_depth_exceeded'] as const;

export interface AdmissionDeps {
  runRows: Pick<RunsRepository, 'countQueued'>;
  /** The Kubernetes backend's settings when SVC_SANDBOX=kubernetes, else null. */
  kubernetes: KubernetesSettings | null;
  /** The images projects may name (SVC_AGENT_IMAGES) when agents run in containers or pods, else null. */
  agentImages?: Pick<ContainerSettings, 'images'> | null;
  /** SVC_MAX_CONCURRENT_RUNS, reported by GET /instance (the runs themselves carry and enforce it). */
  maxConcurrentRuns: number | null;
  /** svc's pods the cluster has not started, as a worker counts them; null: no answer (it does not block). */
  pendingPods: () => Promise<number | null>;
  /** This API's data directory and the free space it must keep (SVC_DISK_MIN_FREE_*); absent: not checked. */
  disk?: { dataDir: string; floor: DiskFloor } | null;
}

/** The limits GET /instance reports (null: only projects' own caps apply). */
export type AdmissionLimits = {
  maxConcurrentRuns: number | null;
  maxQueueDepth: number | null;
  maxPendingPods: number | null;
} | null;

export class Admission {
  readonly #deps: AdmissionDeps;
  readonly #diskShortage: () => FreeSpace | null;

  constructor(deps: AdmissionDeps) {
    this.#deps = deps;
    this.#diskShortage = deps.disk ? diskShortageWatch(deps.disk.dataDir, deps.disk.floor) : () => null;
  }

  get limits(): AdmissionLimits {
    const { kubernetes, maxConcurrentRuns } = this.#deps;
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
    if (!kubernetes) return;
    const refused = disallowedPodSettings(kubernetes.podDefaults, project);
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
   * Throws the 503 when the data directory's filesystem is below the floor: a run started there
   * would fail midway, and take the read model and an embedded Temporal down with it. The API's own
   * data directory is the one it can see; a worker on another disk refuses at the start
   * (activities/start-activities.ts).
   */
  checkDiskSpace(): void {
    const short = this.#diskShortage();
    if (short && this.#deps.disk)
      throw Errors.diskNearlyFull(
        this.#deps.disk.dataDir,
        describeFreeSpace(short),
        describeFloor(this.#deps.disk.floor),
      );
  }

  /**
   * Throws the 429 when the cluster's capacity is reached. Concurrency limits (the instance's and a
   * project's) never refuse a run: it waits, queued, for a slot (workflows/admission.workflow.ts).
   */
  async check(): Promise<void> {
    const kubernetes = this.#deps.kubernetes;
    if (!kubernetes) return;
    const queued = await this.#deps.runRows.countQueued();
    if (queued >= kubernetes.admission.queueDepth)
      throw Errors.admissionRejected(
        'queue_depth_exceeded',
        `${queued} runs are queued, the instance's limit (SVC_ADMISSION_QUEUE_DEPTH)`,
      );
    const pending = await this.#deps.pendingPods();
    if (pending !== null && pending >= kubernetes.admission.pendingPods)
      throw Errors.admissionRejected(
        'cluster_pending_saturated',
        `the cluster has ${pending} of svc's pods pending, its limit (SVC_ADMISSION_PENDING_PODS)`,
      );
  }
}
