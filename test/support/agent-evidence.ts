// Evidence of an agent's end, as supervision reports it, for tests of what svc makes of it.
import type { AgentExitEvidence } from '../../core/agent-exit.ts';

/** What supervision saw of an agent that exited 0 after some output. */
export const CLEAN_EXIT: AgentExitEvidence = {
  spawnError: null,
  exitCode: 0,
  signal: null,
  stoppedBySvc: false,
  sawOutput: true,
  stderrHead: [],
  oomKilled: false,
  lost: false,
  providerError: null,
};
