// The watchdogs of a run's agent while it is supervised: the duration limit (the agent's own
// maxDurationMinutes within the instance's ceiling, SVC_MAX_RUN_MINUTES) and the silence watchdog
// (a look, now and then, at when the agent last said anything). Both on one workflow timer,
// re-armed for whichever comes first (the deadline or the next look): it survives any restart and
// costs nothing while it waits.
import { condition } from '@temporalio/workflow';
import { sandboxSetup } from '../activity-proxies.ts';
import type { RunExecution } from './execution.ts';

export type TimedOut = 'duration' | 'silence' | null;

/** What the supervise phase watches with: whether the agent still runs, and where a watchdog says why it fired. */
export interface WatchedAgent {
  running(): boolean;
  timedOut(): TimedOut;
  fire(reason: Exclude<TimedOut, null>): void;
}

/** The watchdogs, started; `done` settles once the agent stopped running. `limitMs`: the duration limit applied. */
export interface Watchdogs {
  done: Promise<void>;
  limitMs: number | null;
}

/** The agent's time limit: its own `maxDurationMinutes`, within the instance's ceiling; null: none. */
function durationLimitMs(agentMinutes: number | null, ceilingMs: number | undefined): number | null {
  const own = agentMinutes ? Math.round(agentMinutes * 60_000) : null;
  const ceiling = ceilingMs ? ceilingMs : null;
  return own !== null && ceiling !== null ? Math.min(own, ceiling) : (own ?? ceiling);
}

/** How often the silence watchdog looks: a third of the timeout, between 1 s and 5 min. */
const lookEveryMs = (silenceTimeoutMs: number) => Math.max(1000, Math.round(Math.min(silenceTimeoutMs / 3, 300_000)));

/** Starts the watchdogs for one supervised agent (each sandbox generation has its own). */
export function startWatchdogs(execution: RunExecution, agent: WatchedAgent): Watchdogs {
  const { input, timing } = execution;
  const limitMs = durationLimitMs(input.agent.maxDurationMinutes, timing.maxRunMs || undefined);
  return { done: oneTimer(execution, agent, limitMs), limitMs };
}

/** Both watchdogs on one timer: armed for the deadline or the next look, whichever comes first. */
async function oneTimer(execution: RunExecution, agent: WatchedAgent, limitMs: number | null): Promise<void> {
  const { silenceTimeoutMs } = execution.timing;
  const deadline = limitMs ? Date.now() + limitMs : null;
  while (agent.running() && agent.timedOut() === null && !execution.cancelRequest) {
    const untilDeadline = deadline === null ? Infinity : Math.max(1, deadline - Date.now());
    const wait = Math.min(untilDeadline, silenceTimeoutMs ? lookEveryMs(silenceTimeoutMs) : Infinity);
    if (wait === Infinity) return void (await condition(() => !agent.running()));
    if (await condition(() => !agent.running(), wait)) return;
    if (deadline !== null && Date.now() >= deadline) return agent.fire('duration');
    if (!silenceTimeoutMs) continue;
    const { lastOutputAt } = await sandboxSetup.agentActivity({ runId: execution.run.id });
    if (agent.running() && Date.now() - lastOutputAt > silenceTimeoutMs) agent.fire('silence');
  }
}
