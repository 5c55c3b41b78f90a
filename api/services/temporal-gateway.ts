// The API's only door to Temporal: starting workflows and asking them things. Connection failures
// become 503 runtime_unreachable; nothing here writes the read model.
import { Client, Connection, WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { RunSnapshot, RunWorkflowInput } from '../../core/run-model.ts';
import { SvcAgent, SvcKind, SvcProjectId, SvcState } from '../../core/search-attributes.ts';
import type { runWorkflow } from '../../workflows/run.workflow.ts';
import { runAcceptedUpdate } from '../../workflows/messages.ts';
import { ApiError, Errors } from '../errors.ts';

export interface TemporalGatewaySettings {
  address: string;
  namespace: string;
  taskQueue: string;
}

export class TemporalGateway {
  readonly client: Client;
  readonly #connection: Connection;
  readonly #settings: TemporalGatewaySettings;

  private constructor(connection: Connection, settings: TemporalGatewaySettings) {
    this.#connection = connection;
    this.#settings = settings;
    this.client = new Client({ connection, namespace: settings.namespace });
  }

  static async connect(settings: TemporalGatewaySettings): Promise<TemporalGateway> {
    return new TemporalGateway(await Connection.connect({ address: settings.address }), settings);
  }

  /**
   * Starts runWorkflow (workflow id = run id) and waits, in the same call, until the workflow has
   * projected the queued run. A repeated id is rejected by Temporal itself: no duplicate runs.
   */
  async startRun(input: RunWorkflowInput): Promise<RunSnapshot> {
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof runWorkflow>('runWorkflow', {
      workflowId: input.runId,
      taskQueue: this.#settings.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'FAIL',
      typedSearchAttributes: [
        { key: SvcKind, value: 'run' },
        { key: SvcAgent, value: input.agent.name },
        { key: SvcState, value: 'queued' },
        ...(input.projectId ? [{ key: SvcProjectId, value: input.projectId }] : []),
      ],
      memo: { agent: input.agent.name, projectId: input.projectId, trigger: input.trigger },
    });
    try {
      return await this.client.workflow.executeUpdateWithStart(runAcceptedUpdate, { startWorkflowOperation });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) throw new ApiError(409, 'runtime_conflict', `run ${input.runId} already exists`);
      throw wrapConnectionError(error);
    }
  }

  async isReachable(): Promise<boolean> {
    try {
      await this.#connection.workflowService.describeNamespace({ namespace: this.#settings.namespace });
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.#connection.close();
  }
}

function wrapConnectionError(error: unknown): unknown {
  const message = String((error as Error)?.message ?? error);
  if (/UNAVAILABLE|ECONNREFUSED|DEADLINE_EXCEEDED|Connection|transport/i.test(message)) return Errors.temporalUnavailable(message);
  return error;
}
