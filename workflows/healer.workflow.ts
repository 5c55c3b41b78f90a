// healerWorkflow: the durable memory of one alert fingerprint in one project (workflow id
// `healer-<projectId>-<fingerprint>`), so cooldowns and retry limits survive any restart. The API
// asks it with update-with-start whether an alert dispatches a healer run; the run itself is an
// ordinary runWorkflow the API dispatches (same validation as POST /runs).
import { allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  decideHeal,
  HEALER_MEMORY_MS,
  type HealAlertRequest,
  type HealAttempt,
  type HealDecision,
} from '../core/healer-policy.ts';
import { healAlertUpdate, healerDispatchFailedSignal, healerRunStartedSignal } from './messages.ts';

export interface HealerWorkflowInput {
  projectId: string;
  fingerprint: string;
  /** Carried over by continue-as-new. */
  attempts?: HealAttempt[];
}

export interface HealerOutcome {
  projectId: string;
  fingerprint: string;
  attempts: HealAttempt[];
}

/** The fingerprint's attempts and the message handlers that change them. */
class HealerMemory {
  attempts: HealAttempt[];
  /** Set by every message: the memory lasts HEALER_MEMORY_MS (or the cooldown) after the last one. */
  touched = false;
  longestCooldownMs = 0;

  constructor(attempts: HealAttempt[]) {
    this.attempts = attempts;
  }

  decide(request: HealAlertRequest): HealDecision {
    const { decision, attempts } = decideHeal(this.attempts, request, Date.now());
    this.attempts = attempts;
    this.longestCooldownMs = Math.max(this.longestCooldownMs, request.cooldownMinutes * 60_000);
    this.touched = true;
    return decision;
  }

  started(attempt: number, runId: string): void {
    this.attempts = this.attempts.map((entry) => (entry.attempt === attempt ? { ...entry, runId } : entry));
    this.touched = true;
  }

  failed(attempt: number): void {
    this.attempts = this.attempts.filter((entry) => entry.attempt !== attempt || entry.runId !== null);
    this.touched = true;
  }
}

function validRequest(request: HealAlertRequest): void {
  const counts = [request.cooldownMinutes, request.maxRetries];
  if (!counts.every((value) => Number.isInteger(value) && value >= 0) || typeof request.prompt !== 'string')
    throw new Error('healAlert needs a prompt and non-negative integer cooldownMinutes and maxRetries');
}

/**
 * Remembers one fingerprint's healer attempts while its alerts keep coming; ends (forgets) once it
 * has heard nothing for HEALER_MEMORY_MS or its longest cooldown, whichever is longer.
 */
export async function healerWorkflow(input: HealerWorkflowInput): Promise<HealerOutcome> {
  const memory = new HealerMemory(input.attempts ?? []);
  setHandler(healAlertUpdate, (request) => memory.decide(request), { validator: validRequest });
  setHandler(healerRunStartedSignal, ({ attempt, runId }) => memory.started(attempt, runId));
  setHandler(healerDispatchFailedSignal, ({ attempt }) => memory.failed(attempt));

  for (;;) {
    memory.touched = false;
    const heard = await condition(() => memory.touched, Math.max(HEALER_MEMORY_MS, memory.longestCooldownMs));
    if (!heard) break;
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof healerWorkflow>({ ...input, attempts: memory.attempts });
    }
  }
  await condition(allHandlersFinished);
  return { projectId: input.projectId, fingerprint: input.fingerprint, attempts: memory.attempts };
}
