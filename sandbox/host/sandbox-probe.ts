// A short command in a sandbox made and started exactly as a run's agent is (the same launch, the
// same supervisor, whichever backend: bubblewrap, a container or a pod), waited for and its output
// read. `svc doctor --local` starts each agent's CLI with `--version` this way, so a CLI a run would
// not find fails there first.
import { existsSync, readFileSync } from 'node:fs';
import { launchOutcome } from './launch-outcome.ts';
import { inspectSandbox, startSandbox, stopSandbox } from './local-sandbox.ts';
import { sandboxFiles, type SandboxFiles } from './files.ts';
import { watchForExit, type RecordWatch } from './record-watch.ts';
import { sandboxLaunch } from './sandbox-launch.ts';
import type { SandboxLaunchRequest } from '../spec.ts';

export interface ProbeOutcome {
  /** The command's exit code; null when it never ran or did not end in time. */
  code: number | null;
  /** stdout and stderr together, trimmed; or why the sandbox did not run the command. */
  output: string;
  /** The command was not found (a spawn refused with ENOENT, or a shell's 127). */
  missing: boolean;
}

const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
/** How each backend says a command is not there: a spawn's ENOENT, an engine's or a shell's words. */
const NOT_FOUND = /ENOENT|executable file not found|command not found|no such file or directory/i;
/** How long a stopped probe has to end before its sandbox is left to the caller as it is. */
const STOP_GRACE_MS = 10_000;

/** Waits (bounded) until the supervisor has let go of the sandbox: its container or pod removed. */
async function released(files: SandboxFiles, watch: RecordWatch): Promise<void> {
  const deadline = Date.now() + STOP_GRACE_MS;
  const never = new AbortController().signal;
  while (!existsSync(files.released) && Date.now() < deadline) await watch.wait(50, never);
}

/**
 * Runs `request.launch` in its sandbox until it ends or `timeoutMs` passes (then it is stopped).
 * The sandbox's directory (`request.dir`) is left to the caller to remove.
 */
export async function probeInSandbox(request: SandboxLaunchRequest, timeoutMs: number): Promise<ProbeOutcome> {
  const { spec } = sandboxLaunch(request);
  const files = sandboxFiles(request.dir);
  const command = request.launch.argv[0] ?? 'command';
  const started = await startSandbox(request.dir, spec, spec.pod ? timeoutMs : Math.min(timeoutMs, 30_000));
  const outcome = launchOutcome(started, command);
  if (outcome.status !== 'running') {
    if (started.kind === 'exited') {
      const watch = watchForExit(files.exit);
      await released(files, watch).finally(() => watch.close());
    }
    const output = outcome.message ?? 'the sandbox did not start';
    return { code: null, output, missing: NOT_FOUND.test(output) };
  }
  const exitWatch = watchForExit(files.exit);
  const never = new AbortController().signal;
  let deadline = Date.now() + timeoutMs;
  let stopped = false;
  const output = () => `${read(files.stdout)}${read(files.stderr)}`.trim();
  try {
    for (;;) {
      const status = inspectSandbox(files);
      if (status.kind === 'lost') return { code: null, output: status.reason, missing: false };
      if (status.kind === 'exited' && !stopped) {
        await released(files, exitWatch);
        const code = status.exit.exitCode;
        return { code, output: output(), missing: code === 127 || (code !== 0 && NOT_FOUND.test(output())) };
      }
      if (status.kind === 'exited' || (stopped && Date.now() > deadline))
        return { code: null, output: `${output()}\nno answer within ${timeoutMs / 1000}s`.trim(), missing: false };
      if (!stopped && Date.now() > deadline) {
        // Stopped, then waited for: a container or pod is removed by its supervisor as it ends.
        stopSandbox(files);
        stopped = true;
        deadline = Date.now() + STOP_GRACE_MS;
      }
      await exitWatch.wait(100, never);
    }
  } finally {
    exitWatch.close();
  }
}
