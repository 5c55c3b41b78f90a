// One sandbox's supervision: claim the sandbox exactly once, start its network and its agent with
// the output going to files, record how it ended, clean up. A supervisor process runs one
// (supervisor.ts); the shared supervisor of a worker host runs many side by side
// (supervisor-host.ts), so nothing here is process-wide: no exit, no signal handler, every handle
// closed when the supervision ends.
import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { isSameProcessAlive, processStartTime } from '../../platform/processes.ts';
import { joinCgroupArgv, oomKillCount, releaseMemoryCgroup } from './memory-cgroup.ts';
import { startSandboxNetwork } from '../network/sandbox-network.ts';
import { runAgentContainer, runAgentPod, type SupervisedBackend } from './supervised-backends.ts';
import { readJsonIfExists, sandboxFiles, writeJsonAtomic, type SandboxFiles } from './files.ts';
import type { AgentRecord, ExitRecord, LaunchSpec, SupervisorRecord } from '../spec.ts';

/** A supervision under way. */
export interface Supervision {
  readonly files: SandboxFiles;
  /** Settles once the exit is recorded and everything the supervision held is let go. */
  readonly ended: Promise<void>;
  /** svc asked the agent to stop (cancel, cap, watchdog, the finalizer's lifetime). Once is enough. */
  stop(): void;
}

/**
 * Claims the sandbox in `dir` and supervises it, recording `self` as its supervisor. Answers null
 * when there is nothing to supervise: someone else claimed it, or (a reattach) its container or pod
 * needs no new supervisor.
 */
export async function superviseSandbox(
  dir: string,
  self: SupervisorRecord,
  { reattach = false }: { reattach?: boolean } = {},
): Promise<Supervision | null> {
  const files = sandboxFiles(dir);
  const spec = JSON.parse(readFileSync(files.spec, 'utf8')) as LaunchSpec;
  // Exactly once: only the one who creates the claim file may start the agent. A container or pod
  // outlives its supervisor: one new supervisor per dead one may take it over (reattach), and it
  // only ever finds the container or pod, never starts the agent again.
  const previous = reattach ? readJsonIfExists<SupervisorRecord>(files.supervisor) : undefined;
  if (
    reattach &&
    (!(spec.container || spec.pod) ||
      !previous ||
      existsSync(files.exit) ||
      isSameProcessAlive(previous.pid, previous.startTime ?? undefined))
  )
    return null;
  try {
    const claim = previous ? `${files.claim}.reattach-${previous.pid}-${previous.startTime}` : files.claim;
    closeSync(openSync(claim, 'wx', 0o600));
  } catch {
    return null;
  }
  let supervision: SandboxSupervision;
  try {
    writeJsonAtomic<SupervisorRecord>(files.supervisor, self);
    supervision = new SandboxSupervision(files, spec, reattach);
  } catch (error) {
    // Claimed, and nothing started (a full disk, no descriptor left): ended, said why, let go.
    endUnstarted(files, error as Error);
    return null;
  }
  return supervision.begin();
}

/** A claimed sandbox that never started: its log and its exit say why, and it is let go. */
function endUnstarted(files: SandboxFiles, error: Error): void {
  attempt(() => appendFileSync(files.supervisorLog, `${new Date().toISOString()} ${error.stack ?? error}\n`));
  const exit: ExitRecord = {
    exitCode: null,
    signal: null,
    spawnError: { code: 'SUPERVISOR', message: `the supervisor could not start the sandbox: ${error.message}` },
    stoppedBySvc: false,
    endedAt: new Date().toISOString(),
  };
  attempt(() => writeJsonAtomic(files.exit, exit));
  attempt(() => closeSync(openSync(files.released, 'w', 0o600)));
}

class SandboxSupervision implements Supervision {
  readonly ended: Promise<void>;
  #end!: () => void;
  #stdoutFd: number;
  #stderrFd: number;
  #network: { close(): void } | null = null;
  #stopAgent: () => void = () => {};
  #stoppedBySvc = false;
  #finished = false;
  /** The agent runs: its end is awaited before the sandbox is let go, whatever else ended it. */
  #agentRunning = false;
  #fault: Error | null = null;
  #lifetime: NodeJS.Timeout | null = null;

  readonly files: SandboxFiles;
  readonly spec: LaunchSpec;
  readonly reattach: boolean;

  constructor(files: SandboxFiles, spec: LaunchSpec, reattach: boolean) {
    this.files = files;
    this.spec = spec;
    this.reattach = reattach;
    this.ended = new Promise((resolve) => (this.#end = resolve));
    this.#stdoutFd = openSync(files.stdout, 'a', 0o600);
    try {
      this.#stderrFd = openSync(files.stderr, 'a', 0o600);
    } catch (error) {
      closeSync(this.#stdoutFd);
      throw error;
    }
  }

  /** Starts the sandbox; whatever fails ends this sandbox alone, recorded, never the process. */
  async begin(): Promise<Supervision> {
    try {
      await this.#start();
    } catch (error) {
      this.#faulted(error as Error);
    }
    return this;
  }

  async #start(): Promise<void> {
    const { spec, files } = this;
    try {
      // The sandbox's proxies live as long as the agent, whatever happens to workers.
      if (spec.network) this.#network = await startSandboxNetwork(spec.network);
    } catch (error) {
      return this.#failToStart('SANDBOX_NETWORK', `the sandbox's network could not start: ${(error as Error).message}`);
    }
    // A preview is served on a port of this worker as long as its sandbox lives (its door connects in).
    if (spec.expose && !this.reattach)
      await (await import('./preview-expose.ts')).exposePreview(spec.expose, files.dir);
    this.#stopAgent = spec.pod
      ? await runAgentPod(spec.pod, this.#backend())
      : spec.container
        ? await runAgentContainer(spec.container, this.#backend())
        : this.#spawnAgent();
    // A stop asked while no supervisor was there to hear it (a container or pod between two supervisors).
    if ((spec.container || spec.pod) && existsSync(files.stopRequested)) this.stop();
    // A launch with a lifetime (the finalizer) is stopped when it runs out, whatever it is doing.
    // Node fires a longer timer at once: a lifetime past 24.8 days is cut there.
    if (spec.maxLifetimeMs && !this.#finished) {
      this.#lifetime = setTimeout(() => this.stop(), Math.min(spec.maxLifetimeMs, 2 ** 31 - 1));
      this.#lifetime.unref();
    }
  }

  stop(): void {
    if (this.#finished || this.#stoppedBySvc) return;
    this.#stoppedBySvc = true;
    try {
      this.#stopAgent();
    } catch (error) {
      this.#faulted(error as Error);
    }
  }

  /**
   * Something of svc's own failed for this sandbox (a full disk under a record, a spawn that threw):
   * said in its log, its agent stopped (its end awaited, then recorded as the supervisor's
   * failure, as far as the disk lets); the others go on.
   */
  #faulted(error: Error): void {
    attempt(() => appendFileSync(this.files.supervisorLog, `${new Date().toISOString()} ${error.stack ?? error}\n`));
    this.#fault ??= error;
    if (!this.#agentRunning) return this.#failToStart('SUPERVISOR', `the supervisor failed: ${error.message}`);
    attempt(() => this.#stopAgent());
  }

  /** Records how the agent ended, then cleans up (the container, the cgroup) and lets everything go. */
  #finish(record: ExitRecord, cleanup: () => Promise<void> = async () => {}): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#agentRunning = false;
    if (this.#lifetime) clearTimeout(this.#lifetime);
    if (this.#fault && !record.spawnError)
      record.spawnError = { code: 'SUPERVISOR', message: `the supervisor failed: ${this.#fault.message}` };
    const { spec, files } = this;
    const cgroup = spec.memoryCgroup;
    if (cgroup) attempt(() => (record.oomKilled = record.oomKilled || oomKillCount(cgroup) > 0));
    // What the backend said (the kubelet's eviction message, a lost pod) is shown with the agent's stderr.
    if (record.detail)
      attempt(() => writeSync(this.#stderrFd, `svc sandbox: ${record.loss ?? 'ended'}: ${record.detail}\n`));
    if (record.notHandedBack)
      attempt(() => writeSync(this.#stderrFd, 'svc sandbox: the pod ended without handing its workspace back\n'));
    attempt(() => this.#network?.close());
    // The record first: a supervisor that dies after it leaves nothing a successor would redo.
    attempt(() => writeJsonAtomic(files.exit, { ...record, stoppedBySvc: record.stoppedBySvc || this.#stoppedBySvc }));
    void cleanup()
      .catch(() => {})
      .then(() => (cgroup ? releaseMemoryCgroup(cgroup) : undefined))
      .catch(() => {})
      .finally(() => {
        attempt(() => closeSync(this.#stdoutFd));
        attempt(() => closeSync(this.#stderrFd));
        // Only now may the directory be moved aside, and a new sandbox (a resumed run: the same
        // path, the same cgroup) be made there: nothing of this one is left to touch it.
        attempt(() => closeSync(openSync(files.released, 'w', 0o600)));
        this.#end();
      });
  }

  #failToStart(code: string, message: string): void {
    this.#finish({
      exitCode: null,
      signal: null,
      spawnError: { code, message },
      stoppedBySvc: false,
      endedAt: new Date().toISOString(),
    });
  }

  /** Starts the agent as a process of this host (bubblewrap, or unsandboxed); answers how to stop it. */
  #spawnAgent(): () => void {
    const { spec, files } = this;
    const argv = spec.memoryCgroup ? joinCgroupArgv(spec.memoryCgroup, spec.argv) : spec.argv;
    const agent = spawn(argv[0]!, argv.slice(1), {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['pipe', this.#stdoutFd, this.#stderrFd],
      // Its own process group: a stop reaches everything the agent started.
      detached: true,
    });
    let exited = false;
    agent.once('error', (error: NodeJS.ErrnoException) => {
      exited = true;
      this.#failToStart(error.code ?? 'ERROR', error.message);
    });
    agent.stdin!.on('error', () => {
      // The agent may exit without reading its prompt; that is its business, not a supervisor crash.
    });
    agent.once('spawn', () => {
      this.#agentRunning = true;
      try {
        writeJsonAtomic<AgentRecord>(files.agent, {
          pid: agent.pid!,
          startTime: processStartTime(agent.pid!) ?? null,
          spawnedAt: new Date().toISOString(),
        });
        agent.stdin!.end(spec.stdin ?? '');
      } catch (error) {
        this.#faulted(error as Error);
      }
    });
    agent.once('exit', (exitCode, signal) => {
      exited = true;
      this.#finish({ exitCode, signal, spawnError: null, stoppedBySvc: false, endedAt: new Date().toISOString() });
    });
    // SIGTERM to the agent's whole group, then SIGKILL after 5 s; never once it is gone (its
    // group's id may be another's by then, in a process that lives on).
    const signalGroup = (signal: NodeJS.Signals) => {
      if (exited || !agent.pid) return;
      try {
        process.kill(-agent.pid, signal);
      } catch {
        // already gone
      }
    };
    return () => {
      signalGroup('SIGTERM');
      setTimeout(() => signalGroup('SIGKILL'), 5000).unref();
    };
  }

  /** What a backend's runner (supervised-backends.ts) reports to. */
  #backend(): SupervisedBackend {
    return {
      files: this.files,
      reattach: this.reattach,
      memoryCgroup: this.spec.memoryCgroup,
      output: { stdoutFd: this.#stdoutFd, stderrFd: this.#stderrFd, cursorFile: this.files.logCursor },
      started: () => (this.#agentRunning = true),
      ended: (record, cleanup) => this.#finish(record, cleanup),
      failed: (code, message) => this.#failToStart(code, message),
    };
  }
}

/** Runs `step`; what it throws is dropped (the step's effect is best effort: a full disk, a closed fd). */
function attempt(step: () => unknown): void {
  try {
    step();
  } catch {
    // best effort
  }
}
