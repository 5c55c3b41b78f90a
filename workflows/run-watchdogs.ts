// The watchdogs of a run's agent while it is supervised: the duration limit (the agent's own
// maxDurationMinutes within the instance's ceiling, SVC_MAX_RUN_MINUTES) and the silence watchdog
// (a look, now and then, at when the agent last said anything). Workflow timers: they survive any
// restart and cost nothing while they wait.
//
// A run keeps them on one timer, re-armed for whichever comes first (the deadline or the next look),
// behind one patch. They were two timers behind two patches, and on a managed Temporal every
// patched() is two billed actions (its marker and the SDK's TemporalChangeVersion upsert): a
// trivial run went from 15 actions to 12. Histories recorded before keep replaying the two-timer
// path (`legacyWatchdogs`), unchanged.
import { condition, patched } from '@temporalio/workflow';
import { sandboxSetup } from './activity-proxies.ts';
import { PATCHES } from './patches.ts';
import type { RunExecution } from './run-execution.ts';

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

/** Whether a run has any watchdog (an operator may turn both off). */
export const watchdogsApply = (timing: RunExecution['timing']) => Boolean(timing.maxRunMs || timing.silenceTimeoutMs);

/** Starts the watchdogs for one supervised agent (each sandbox generation has its own). */
export function startWatchdogs(execution: RunExecution, agent: WatchedAgent): Watchdogs {
  const { input, timing } = execution;
  // Asked only where the two-timer path asked a patch too: no run pays a marker it did not pay before.
  // A run past startProjectsRunning (workflows/run-start.ts) has one timer without asking.
  if (watchdogsApply(timing) && (execution.startProjectsRunning || patched(PATCHES.runWatchdogs))) {
    const limitMs = durationLimitMs(input.agent.maxDurationMinutes, timing.maxRunMs || undefined);
    return { done: oneTimer(execution, agent, limitMs), limitMs };
  }
  return legacyWatchdogs(execution, agent);
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

/** The two timers (duration, silence) of runs recorded before `runWatchdogs`: their replay must not change. */
function legacyWatchdogs(execution: RunExecution, agent: WatchedAgent): Watchdogs {
  const { input, run, timing } = execution;
  // patched(): runs recorded before the ceiling existed replay without its timer.
  const ceilingMs = timing.maxRunMs && patched(PATCHES.runTimeCeiling) ? timing.maxRunMs : undefined;
  const limitMs = durationLimitMs(input.agent.maxDurationMinutes, ceilingMs);
  const duration = limitMs
    ? condition(() => !agent.running(), limitMs).then((ended) => void (ended || agent.fire('duration')))
    : Promise.resolve();
  const silence = (async () => {
    // patched(): runs started before the watchdog existed replay without its timers.
    if (!timing.silenceTimeoutMs || !patched(PATCHES.silenceWatchdog)) return;
    while (agent.running() && agent.timedOut() === null && !execution.cancelRequest) {
      if (await condition(() => !agent.running(), lookEveryMs(timing.silenceTimeoutMs))) return;
      const { lastOutputAt } = await sandboxSetup.agentActivity({ runId: run.id });
      if (agent.running() && Date.now() - lastOutputAt > timing.silenceTimeoutMs) agent.fire('silence');
    }
  })();
  return { done: Promise.all([duration, silence]).then(() => undefined), limitMs };
}
