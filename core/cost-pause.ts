// Pause instead of cancel: what a run that crossed its cost cap with `onCapHit: pause`
// says while it waits, how its generations' usage adds up, and what its agent is told when an
// operator raises the cap. Pure: workflows/run/pause.ts replays it.

/** One generation's usage as the runtime reported it (activities/runtimes/types.ts's Usage). */
export interface UsageTotals {
  costUsd: number | null;
  tokensInput: number | null;
  tokensOutput: number | null;
  tokensCacheRead: number | null;
  tokensCacheWrite: number | null;
}

const add = (a: number | null, b: number | null) => (a === null && b === null ? null : (a ?? 0) + (b ?? 0));
/** Dollars to the nano-dollar, as run_totals keeps them: a sum of reports says $0.90, not $0.8999…. */
export const roundUsd = (value: number) => Math.round(value * 1e9) / 1e9;

/** The run's usage so far: every earlier generation's and the current one's. */
export function addUsage(before: UsageTotals | null, current: UsageTotals | null): UsageTotals | null {
  if (!before) return current;
  if (!current) return before;
  return {
    costUsd:
      before.costUsd === null && current.costUsd === null ? null : roundUsd(add(before.costUsd, current.costUsd)!),
    tokensInput: add(before.tokensInput, current.tokensInput),
    tokensOutput: add(before.tokensOutput, current.tokensOutput),
    tokensCacheRead: add(before.tokensCacheRead, current.tokensCacheRead),
    tokensCacheWrite: add(before.tokensCacheWrite, current.tokensCacheWrite),
  };
}

/** What GET /runs/{id} says about a paused run (`pausedReason`). */
export function pausedReason(costUsd: number, maxCostUsd: number): string {
  return (
    `its cost ($${costUsd.toFixed(2)}) crossed its cap ($${maxCostUsd.toFixed(2)}): ` +
    'raise the cap to resume, or cancel'
  );
}

/** Why a raise is refused, or null when it is accepted. */
export function capRaiseProblem(paused: boolean, spentUsd: number | null, maxCostUsd: number): string | null {
  if (!paused) return 'the run is not paused at its cost cap';
  if (!(maxCostUsd > (spentUsd ?? 0)))
    return `the new cap ($${maxCostUsd}) must be above what the run has spent ($${(spentUsd ?? 0).toFixed(2)})`;
  return null;
}

/** The prompt of the agent that takes over the workspace once the cap was raised. */
export function resumePrompt(prompt: string, spentUsd: number, maxCostUsd: number): string {
  return [
    `An earlier agent on this task was stopped when it reached its cost cap, after spending $${spentUsd.toFixed(2)}.`,
    `The cap is now $${maxCostUsd.toFixed(2)}. The workspace holds everything that agent did:`,
    'look at it (git status, git log) and carry on from there. The task:',
    '',
    prompt,
  ].join('\n');
}
