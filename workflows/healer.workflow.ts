// healerWorkflow: the durable healer memory of one project (workflow id `healer-<projectId>`), so
// cooldowns, retry limits and the project's limit of concurrent healer runs survive any restart,
// and one project's alerts are decided one at a time. The API asks it with update-with-start
// whether an alert dispatches a healer run; the run itself is an ordinary runWorkflow the API
// dispatches (same validation as POST /runs).
import { allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  decideHeal,
  EMPTY_HEALER_MEMORY,
  HEALER_MEMORY_MS,
  unfinishedRuns,
  type HealAlertRequest,
  type HealDecision,
  type HealerMemoryState,
} from '../core/healer-policy.ts';
import {
  healAlertUpdate,
  healerDispatchFailedSignal,
  healerRunStartedSignal,
  healerUnfinishedRunsQuery,
} from './messages.ts';

export interface HealerWorkflowInput {
  projectId: string;
  /** Carried over by continue-as-new. */
  memory?: HealerMemoryState;
}

export interface HealerOutcome {
  projectId: string;
  memory: HealerMemoryState;
}

/** The project's attempts and the message handlers that change them. */
class HealerMemory {
  state: HealerMemoryState;
  /** Set by every message: the memory lasts HEALER_MEMORY_MS (or the cooldown) after the last one. */
  touched = false;
  longestCooldownMs = 0;

  constructor(state: HealerMemoryState) {
    this.state = state;
  }

  decide(request: HealAlertRequest): HealDecision {
    const { decision, memory } = decideHeal(this.state, request, Date.now(), workflowInfo().firstExecutionRunId);
    this.state = memory;
    this.longestCooldownMs = Math.max(this.longestCooldownMs, request.cooldownMinutes * 60_000);
    this.touched = true;
    return decision;
  }

  started(attempt: number, runId: string): void {
    const attempts = this.state.attempts.map((entry) => (entry.attempt === attempt ? { ...entry, runId } : entry));
    this.state = { ...this.state, attempts };
    this.touched = true;
  }

  failed(attempt: number): void {
    const attempts = this.state.attempts.filter((entry) => entry.attempt !== attempt || entry.runId !== null);
    this.state = { ...this.state, attempts };
    this.touched = true;
  }
}

function validRequest(request: HealAlertRequest): void {
  const counts = [request.cooldownMinutes, request.maxRetries, request.projectCooldownMinutes];
  const valid =
    counts.every((value) => Number.isInteger(value) && value >= 0) &&
    Number.isInteger(request.maxConcurrentRuns) &&
    request.maxConcurrentRuns >= 1 &&
    typeof request.prompt === 'string' &&
    typeof request.fingerprint === 'string' &&
    Array.isArray(request.finishedRunIds);
  if (!valid)
    throw new Error(
      'healAlert needs a fingerprint, a prompt, finishedRunIds, non-negative integer cooldowns and maxRetries, ' +
        'and maxConcurrentRuns of at least 1',
    );
}

/**
 * Remembers one project's healer attempts while its alerts keep coming; ends (forgets) once it has
 * heard nothing for HEALER_MEMORY_MS or its longest cooldown, whichever is longer.
 */
export async function healerWorkflow(input: HealerWorkflowInput): Promise<HealerOutcome> {
  const memory = new HealerMemory(input.memory ?? EMPTY_HEALER_MEMORY);
  setHandler(healAlertUpdate, (request) => memory.decide(request), { validator: validRequest });
  setHandler(healerRunStartedSignal, ({ attempt, runId }) => memory.started(attempt, runId));
  setHandler(healerDispatchFailedSignal, ({ attempt }) => memory.failed(attempt));
  setHandler(healerUnfinishedRunsQuery, () => unfinishedRuns(memory.state));

  for (;;) {
    memory.touched = false;
    const heard = await condition(() => memory.touched, Math.max(HEALER_MEMORY_MS, memory.longestCooldownMs));
    if (!heard) break;
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof healerWorkflow>({ ...input, memory: memory.state });
    }
  }
  await condition(allHandlersFinished);
  return { projectId: input.projectId, memory: memory.state };
}
