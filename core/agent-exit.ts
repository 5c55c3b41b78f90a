// What the sandbox saw of an agent process, and the failure reason it implies. The precedence
// follows the reference system's reap order for the reasons a process exit can witness:
// caller-supplied (watchdog/runtime) first, then what the log shows.
import type { ServiceFailure } from './environment-services.ts';
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
  /** The supervisor vanished without recording an exit, or the backend lost the sandbox: the sandbox run is lost. */
  lost: boolean;
  /** The backend stopped answering about the sandbox (a container engine that does not respond). */
  unreachable?: boolean;
  /** The cluster evicted the sandbox's pod (node pressure, preemption). */
  evicted?: boolean;
  /** The sandbox ended without handing its workspace back (a pod): its work never reached svc. */
  notHandedBack?: boolean;
  /** The service a pod's harness gave up on, with its last lines (Kubernetes: the workflow waits for none). */
  serviceFailure?: ServiceFailure | null;
}

export interface RunVerdict {
  state: RunState;
  failureReason: RunFailureReason | null;
}

/** A pod's harness gave up on a service before it started the agent (sandbox-init.ts, exit 125). */
const SERVICES_WITNESS = /^svc sandbox: (service (\S+) was not ready within .*)$/;

/** The service a pod's harness gave up on, and what it said, from one of its lines. */
export function serviceNotReady(line: string): { service: string; message: string } | null {
  const match = SERVICES_WITNESS.exec(line);
  return match ? { service: match[2]!, message: match[1]! } : null;
}
const SANDBOX_WITNESSES = [/^bwrap: /, /^sandbox-exec: /, /^svc sandbox: (cannot open|could not move)/];

const SIGNALS: Record<number, string> = {
  1: 'SIGHUP',
  2: 'SIGINT',
  6: 'SIGABRT',
  9: 'SIGKILL',
  11: 'SIGSEGV',
  13: 'SIGPIPE',
  15: 'SIGTERM',
};

/** A wrapper (bubblewrap, a shell) reports a child killed by signal n as exit status 128+n. */
function effectiveSignal(evidence: AgentExitEvidence): string | null {
  if (evidence.signal) return evidence.signal;
  const code = evidence.exitCode;
  return code !== null && code > 128 && code <= 128 + 31 ? (SIGNALS[code - 128] ?? `SIG${code - 128}`) : null;
}

/** What a shell or Node prints when the agent's command is missing or not executable. */
const NOT_FOUND = new RegExp(
  [
    String.raw`Executable not found in \$PATH`,
    String.raw`spawn \S+ ENOENT`,
    'command not found',
    String.raw`^sh: \d+: exec: .*: (not found|Permission denied)`,
  ].join('|'),
);
export function classifyAgentExit(evidence: AgentExitEvidence): RunVerdict {
  if (evidence.evicted) return { state: 'failed', failureReason: 'evicted' };
  if (evidence.unreachable) return { state: 'failed', failureReason: 'sandbox_unreachable' };
  if (evidence.lost) return { state: 'failed', failureReason: 'sandbox_run_lost' };
  if (evidence.spawnError) return { state: 'failed', failureReason: 'spawn_failed' };
  // The agent never started (so nothing came back): the run's services did not get ready.
  if (evidence.exitCode === 125 && evidence.stderrHead.some((line) => SERVICES_WITNESS.test(line)))
    return { state: 'failed', failureReason: 'environment_services_failed' };
  // Work that never came back is not a success, whatever the agent's exit (an OOM kill says more).
  if (evidence.notHandedBack && !evidence.stoppedBySvc && !evidence.oomKilled)
    return { state: 'failed', failureReason: 'sandbox_failed' };
  if (evidence.providerError && !evidence.stoppedBySvc) return { state: 'failed', failureReason: 'provider_error' };
  if (evidence.exitCode === 0) return { state: 'succeeded', failureReason: null };
  if (evidence.oomKilled) return { state: 'failed', failureReason: 'oom_killed' };
  if (effectiveSignal(evidence) !== null && !evidence.stoppedBySvc)
    return { state: 'failed', failureReason: 'agent_died' };
  if (evidence.sawOutput) return { state: 'failed', failureReason: 'crashed' };
  // The sandbox started but could not execute the agent: the executable is missing.
  if (
    evidence.stderrHead.some((line) => /^bwrap: execvp .*: (No such file or directory|Permission denied)/.test(line))
  ) {
    return { state: 'failed', failureReason: 'spawn_failed' };
  }
  if (evidence.stderrHead.some((line) => SANDBOX_WITNESSES.some((witness) => witness.test(line)))) {
    return { state: 'failed', failureReason: 'sandbox_failed' };
  }
  if (evidence.stderrHead.some((line) => NOT_FOUND.test(line))) {
    return { state: 'failed', failureReason: 'spawn_failed' };
  }
  return { state: 'failed', failureReason: 'no_model_response' };
}
