// What the sandbox saw of an agent process, and the failure reason it implies. The precedence
// follows the reference system's reap order for the reasons a process exit can witness:
// caller-supplied (watchdog/runtime) first, then what the log shows.
import type { RunFailureReason, RunState } from './run-states.ts';

export interface AgentExitEvidence {
  /** The supervisor could not start the executable (ENOENT, EACCES…). */
  spawnError: { code: string; message: string } | null;
  exitCode: number | null;
  signal: string | null;
  /** svc itself stopped the agent (cancel, cap, watchdog). */
  stoppedBySvc: boolean;
  /** The agent produced output on stdout: for a model runtime, the model answered. */
  sawOutput: boolean;
  /** First stderr lines, kept to recognise sandbox failures. */
  stderrHead: string[];
  /** The sandbox's memory accounting recorded an OOM kill. */
  oomKilled: boolean;
  /** The model provider failed the final turn (rate limit, overload, auth…), as the runtime reported it. */
  providerError: string | null;
  /** The supervisor vanished without recording an exit: the sandbox run is lost. */
  lost: boolean;
}

export interface RunVerdict {
  state: RunState;
  failureReason: RunFailureReason | null;
}

const SANDBOX_WITNESSES = [/^bwrap: /, /^sandbox-exec: /];

export function classifyAgentExit(evidence: AgentExitEvidence): RunVerdict {
  if (evidence.lost) return { state: 'failed', failureReason: 'sandbox_run_lost' };
  if (evidence.spawnError) return { state: 'failed', failureReason: 'spawn_failed' };
  if (evidence.providerError && !evidence.stoppedBySvc) return { state: 'failed', failureReason: 'provider_error' };
  if (evidence.exitCode === 0) return { state: 'succeeded', failureReason: null };
  if (evidence.oomKilled) return { state: 'failed', failureReason: 'oom_killed' };
  if (evidence.signal !== null && !evidence.stoppedBySvc) return { state: 'failed', failureReason: 'agent_died' };
  if (evidence.sawOutput) return { state: 'failed', failureReason: 'crashed' };
  if (evidence.stderrHead.some((line) => SANDBOX_WITNESSES.some((witness) => witness.test(line)))) {
    return { state: 'failed', failureReason: 'sandbox_failed' };
  }
  if (evidence.stderrHead.some((line) => /Executable not found in \$PATH|spawn \S+ ENOENT|command not found/.test(line))) {
    return { state: 'failed', failureReason: 'spawn_failed' };
  }
  return { state: 'failed', failureReason: 'no_model_response' };
}
