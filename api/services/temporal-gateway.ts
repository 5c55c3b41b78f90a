// The API's only door to Temporal: starting workflows, waiting on short ones, describing
// schedules. What Temporal's failures mean to the API is in temporal-errors.ts. Nothing here
// writes the read model.
import { randomUUID } from 'node:crypto';
import { Client, Connection, ScheduleNotFoundError, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { initialRunSnapshot, type RunOutcome, type RunSnapshot, type RunWorkflowInput } from '../../core/run-model.ts';
import { runSearchAttributes, SvcKind, SvcProjectId } from '../../core/search-attributes.ts';
import { outcomeOfClosedRun, pullRequestWorkflowId } from '../../core/run-workflows.ts';
import type { runWorkflow } from '../../workflows/run/run.workflow.ts';
import type * as projectWorkflows from '../../workflows/project.workflow.ts';
import {
  cancelSignal,
  previewHitSignal,
  previewTeardownUpdate,
  raiseCostCapSignal,
  steerSignal,
  type CancelRequest,
} from '../../workflows/messages.ts';
import type { NewInboxItem } from '../../core/inbox.ts';
import type { TeardownAnswer } from '../../core/preview.ts';
import { Errors } from '../errors.ts';
import { awaitResult, isClosed, isNotFound, toApiError, wrapConnectionError } from './temporal-errors.ts';

export interface TemporalGatewaySettings {
  address: string;
  namespace: string;
  taskQueue: string;
}

type ProjectWorkflows = typeof projectWorkflows;
type ProjectWorkflowName = 'registerProjectWorkflow' | 'refreshProjectWorkflow' | 'deleteProjectWorkflow';

/**
 * The API's one door to Temporal: starts, signals, queries and updates of run and project
 * workflows (a sandbox's own messages: sandbox-messages.ts), each call bounded by a deadline so an
 * outage is a quick 503 (runtime_unreachable).
 */
export class TemporalGateway {
  readonly client: Client;
  readonly #connection: Connection;
  /** Calls still under way: close() lets them end (each within its deadline) before it closes. */
  #inFlight = 0;
  readonly #closing = new AbortController();
  readonly #settings: TemporalGatewaySettings;

  private constructor(connection: Connection, settings: TemporalGatewaySettings) {
    this.#connection = connection;
    this.#settings = settings;
    this.client = new Client({ connection, namespace: settings.namespace });
  }

  get taskQueue(): string {
    return this.#settings.taskQueue;
  }

  /**
   * A lazy connection: the API starts (and answers 503) while Temporal is down, and finds it again
   * by itself when it is back.
   */
  static async connect(settings: TemporalGatewaySettings): Promise<TemporalGateway> {
    return new TemporalGateway(Connection.lazy({ address: settings.address }), settings);
  }

  /**
   * A call to Temporal that gives up after CALL_DEADLINE_MS: an outage is a quick 503, not a hang.
   * Every Temporal call of the API goes through here (PlanRunWorkflows included).
   */
  call<T>(fn: () => Promise<T>): Promise<T> {
    this.#inFlight += 1;
    return this.#connection.withDeadline(Date.now() + CALL_DEADLINE_MS, fn).finally(() => (this.#inFlight -= 1));
  }

  /**
   * A call that may outlast a plain one (a workflow executed for its answer): no deadline of its
   * own, but counted and cut when the gateway closes, so close() never leaves it retrying on a
   * closed channel.
   */
  callUntilClosed<T>(fn: () => Promise<T>): Promise<T> {
    this.#inFlight += 1;
    return this.#connection.withAbortSignal(this.#closing.signal, fn).finally(() => (this.#inFlight -= 1));
  }

  /**
   * Starts runWorkflow (workflow id = run id) and answers at once with the queued run, which is a
   * pure function of the input: the API never waits for a worker. With an idempotency key the run
   * id is derived from it, so a repeated request finds the same workflow instead of a new one.
   */
  async startRun(
    input: RunWorkflowInput,
    options: { idempotent: boolean; requestDigest?: string } = { idempotent: false },
  ): Promise<{ run: RunSnapshot; existing: boolean }> {
    try {
      await this.call(() =>
        this.client.workflow.start<typeof runWorkflow>('runWorkflow', {
          workflowId: input.runId,
          taskQueue: this.#settings.taskQueue,
          args: [input],
          workflowIdConflictPolicy: 'FAIL',
          // Only a key-derived id can repeat: then a closed run with it must not start again. A fresh
          // random id needs no look-up of closed executions (which costs the server a read).
          ...(options.idempotent ? { workflowIdReusePolicy: 'REJECT_DUPLICATE' as const } : {}),
          typedSearchAttributes: runSearchAttributes(input),
          memo: {
            agent: input.agent.name,
            projectId: input.projectId,
            trigger: input.trigger,
            ...(options.requestDigest ? { requestDigest: options.requestDigest } : {}),
          },
        }),
      );
      return { run: initialRunSnapshot(input), existing: false };
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw wrapConnectionError(error);
      const existing = await this.#started(input.runId);
      if (!existing) throw Errors.runtimeConflict(input.runId);
      if (options.requestDigest && existing.requestDigest !== options.requestDigest)
        throw Errors.idempotencyKeyReused();
      return { run: existing.run, existing: true };
    }
  }

  /**
   * A run the workflow has accepted but not yet projected: rebuilt from the input recorded in its
   * history, exactly as the workflow builds it. Undefined when no such run workflow exists.
   */
  async acceptedRun(runId: string): Promise<RunSnapshot | undefined> {
    return (await this.#started(runId))?.run;
  }

  /** The run as its workflow was started, and the digest of the request that started it. */
  async #started(runId: string): Promise<{ run: RunSnapshot; requestDigest: string | undefined } | undefined> {
    const started = await this.startedWith<RunWorkflowInput>(runId, 'runWorkflow');
    if (!started) return undefined;
    const digest = started.memo.requestDigest;
    return { run: initialRunSnapshot(started.input), requestDigest: typeof digest === 'string' ? digest : undefined };
  }

  /**
   * The input (and memo) a workflow's first execution was started with, decoded from its history:
   * the one place the API reads histories. Undefined when no `workflowType` workflow has that id.
   */
  async startedWith<Input>(
    workflowId: string,
    workflowType: 'runWorkflow' | 'planRunWorkflow',
  ): Promise<{ input: Input; memo: Record<string, unknown> } | undefined> {
    try {
      const history = await this.call(() => this.client.workflow.getHandle(workflowId).fetchHistory());
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      if (started?.workflowType?.name !== workflowType || !started.input?.payloads?.[0]) return undefined;
      const memo = Object.fromEntries(
        Object.entries(started.memo?.fields ?? {}).map(([key, payload]) => [
          key,
          defaultPayloadConverter.fromPayload<unknown>(payload),
        ]),
      );
      return { input: defaultPayloadConverter.fromPayload<Input>(started.input.payloads[0]), memo };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw wrapConnectionError(error);
    }
  }

  /**
   * Signals a cancel and waits (bounded) for the run to end; answers the outcome, or undefined
   * when the run is still stopping after `waitMs`. The run's workflow closes Failed or Canceled
   * when the run ends so: the outcome is then read from its failure.
   */
  async cancelRun(runId: string, request: CancelRequest, waitMs = 30_000): Promise<RunOutcome | 'closed' | undefined> {
    const handle = this.client.workflow.getHandle<typeof runWorkflow>(runId);
    try {
      await this.call(() => handle.signal(cancelSignal, request));
    } catch (error) {
      // A workflow that has ended takes no signal: its row is behind, and the reconciler catches up.
      // The run may have ended just now with its PR still open: the cancel then stops its PR loop.
      if (isNotFound(error) || isClosed(error)) {
        await this.stopPrLoop(runId, request);
        return 'closed';
      }
      throw toApiError(error);
    }
    const closed = { result: () => handle.result().catch((error: unknown) => closedOutcome(runId, error)) };
    return awaitResult(closed, waitMs);
  }

  /**
   * Stops the PR loop of a run that has ended (a cancel signal to the workflow that follows its PR,
   * docs/pr-loop.md); a PR no longer followed has none.
   */
  async stopPrLoop(runId: string, request: CancelRequest): Promise<void> {
    try {
      await this.call(() => this.client.workflow.getHandle(pullRequestWorkflowId(runId)).signal(cancelSignal, request));
    } catch (error) {
      if (isNotFound(error) || isClosed(error)) return;
      throw toApiError(error);
    }
  }

  /** Runs one reconciler pass for these rows and waits for it (the rows are repaired when it returns). */
  async reconcile(request: { runIds?: string[]; planRunIds?: string[] }): Promise<void> {
    try {
      await this.client.workflow.execute('reconcileWorkflow', {
        workflowId: `svc-reconcile-${randomUUID()}`,
        taskQueue: this.#settings.taskQueue,
        args: [request],
        workflowExecutionTimeout: '1m',
      });
    } catch (error) {
      throw toApiError(error);
    }
  }

  async steer(runId: string, message: NewInboxItem): Promise<void> {
    try {
      await this.call(() => this.client.workflow.getHandle(runId).signal(steerSignal, message));
    } catch (error) {
      throw toApiError(error);
    }
  }

  /** Tells the workflow showing a run's preview it was used (the proxy, debounced); a closed one is left alone. */
  async previewHit(runId: string, at: string): Promise<void> {
    await this.client.workflow
      .getHandle(pullRequestWorkflowId(runId))
      .signal(previewHitSignal, { at })
      .catch(() => {});
  }

  /**
   * Tears a run's preview down (the workflow following its PR shows it) and answers how it went;
   * undefined when that workflow has ended or never started.
   */
  async previewTeardown(runId: string, actor: string): Promise<TeardownAnswer | undefined> {
    const handle = this.client.workflow.getHandle(pullRequestWorkflowId(runId));
    try {
      return await this.call(() => handle.executeUpdate(previewTeardownUpdate, { args: [{ actor }] }));
    } catch (error) {
      if (isNotFound(error) || /completed|already finished|not found/i.test(String((error as Error)?.message)))
        return undefined;
      throw Errors.previewTeardownUnavailable((error as Error).message);
    }
  }

  /** Raises a paused run's cost cap (workflows/run/pause.ts): durable once Temporal has the signal. */
  async raiseCostCap(runId: string, maxCostUsd: number): Promise<void> {
    try {
      await this.call(() =>
        this.client.workflow.getHandle(runId).signal(raiseCostCapSignal, { maxCostUsd, requestedBy: 'operator' }),
      );
    } catch (error) {
      throw toApiError(error);
    }
  }

  /**
   * Runs one of the short project workflows to completion. `workflowId` names the operation, so two
   * concurrent operations with the same id (two registrations of one repository) cannot both run.
   */
  async executeProjectWorkflow<N extends ProjectWorkflowName>(
    name: N,
    workflowId: string,
    args: Parameters<ProjectWorkflows[N]>[0],
    projectId?: string,
  ): Promise<Awaited<ReturnType<ProjectWorkflows[N]>>> {
    try {
      return (await this.client.workflow.execute(name, {
        workflowId,
        taskQueue: this.#settings.taskQueue,
        args: [args],
        workflowIdConflictPolicy: 'FAIL',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: [
          { key: SvcKind, value: 'project' },
          ...(projectId ? [{ key: SvcProjectId, value: projectId }] : []),
        ],
      })) as Awaited<ReturnType<ProjectWorkflows[N]>>;
    } catch (error) {
      throw toApiError(error);
    }
  }

  static operationId(operation: string, key: string): string {
    return `project-${operation}-${key}-${randomUUID().slice(0, 8)}`;
  }

  /** When a schedule fires next, or null when it has no upcoming action (or does not exist). */
  async nextScheduledFire(scheduleId: string): Promise<Date | null> {
    try {
      const description = await this.call(() => this.client.schedule.getHandle(scheduleId).describe());
      return description.info.nextActionTimes[0] ?? null;
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) return null;
      throw wrapConnectionError(error);
    }
  }

  async isReachable(): Promise<boolean> {
    try {
      await this.call(() =>
        this.#connection.workflowService.describeNamespace({ namespace: this.#settings.namespace }),
      );
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // The client retries a failed call on a timer; closing the channel under a pending retry makes
    // that timer throw ("Channel has been shut down") where nothing can catch it.
    this.#closing.abort();
    const deadline = Date.now() + CALL_DEADLINE_MS + 1000;
    while (this.#inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await this.#connection.close();
  }
}

/** A run workflow that closed Failed or Canceled: the outcome its failure carries. */
function closedOutcome(runId: string, error: unknown): RunOutcome {
  const outcome = outcomeOfClosedRun(runId, error);
  if (!outcome) throw error;
  return outcome;
}

/** How long one call to Temporal may take before the API answers 503 runtime_unreachable. */
const CALL_DEADLINE_MS = 5000;
