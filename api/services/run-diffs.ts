// GET /runs/{id}/diff: the API knows the run (read model) and its branches (its workflow's input);
// the bytes are on a worker's side, so a short runDiffWorkflow on the run's task queue computes
// the document there (docs/decisions/0005-run-diff-on-a-worker.md). Nothing is kept.
import { randomUUID } from 'node:crypto';
import type { RunDiff, RunDiffRequest } from '../../core/run-diff.ts';
import type { RunWorkflowInput } from '../../core/run-model.ts';
import type { runDiffWorkflow } from '../../workflows/run-diff.workflow.ts';
import { Errors } from '../errors.ts';
import type { TemporalGateway } from './temporal-gateway.ts';
import { toApiError } from './temporal-errors.ts';

/** The run fields the diff needs (a read-model row or a just-accepted run). */
export interface DiffableRun {
  id: string;
  projectId?: string | null;
  state: string;
  salvageRef?: string | null;
}

export class RunDiffs {
  readonly #temporal: TemporalGateway;

  constructor(temporal: TemporalGateway) {
    this.#temporal = temporal;
  }

  async of(run: DiffableRun): Promise<RunDiff> {
    if (!run.projectId) throw Errors.runHasNoChange(run.id, 'it has no project, so no branch');
    if (run.state === 'queued') throw Errors.runHasNoChange(run.id, 'it has not started');
    const started = await this.#temporal.startedWith<RunWorkflowInput>(run.id, 'runWorkflow');
    const request: RunDiffRequest = {
      runId: run.id,
      projectId: run.projectId,
      branch: started?.input.branch ?? null,
      baseBranch: started?.input.baseBranch ?? null,
      live: run.state === 'running',
      salvageRef: run.salvageRef ?? null,
    };
    let answer;
    try {
      answer = await this.#temporal.callUntilClosed(() =>
        this.#temporal.client.workflow.execute<typeof runDiffWorkflow>('runDiffWorkflow', {
          workflowId: `svc-diff-${run.id}-${randomUUID().slice(0, 8)}`,
          taskQueue: this.#temporal.taskQueue,
          args: [request],
          workflowExecutionTimeout: '4m',
        }),
      );
    } catch (error) {
      throw toApiError(error);
    }
    if (answer.kind === 'none') throw Errors.runHasNoChange(run.id, answer.reason);
    return answer.diff;
  }
}
