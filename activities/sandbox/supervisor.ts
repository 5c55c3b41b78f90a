// The sandbox supervisor: a tiny process, detached from the worker, that owns one agent process.
// It claims the sandbox exactly once, starts the agent with its output going to files, and records
// how it ended. A worker that dies loses nothing: a new one reads these files and carries on.
//   node activities/sandbox/supervisor.ts <sandbox-dir>
import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { isSameProcessAlive, processStartTime } from '../../platform/processes.ts';
import { joinCgroupArgv, oomKillCount, removeMemoryCgroup } from './memory-cgroup.ts';
import { startSandboxNetwork } from './sandbox-network.ts';
import type { ContainerSpec } from './container/container-launch.ts';
import type { PodSpec } from './kubernetes/pod-launch.ts';
import {
  readJsonIfExists,
  sandboxFiles,
  writeJsonAtomic,
  type AgentRecord,
  type ExitRecord,
  type LaunchSpec,
  type SupervisorRecord,
} from './files.ts';

const dir = process.argv[2];
const reattach = process.argv[3] === '--reattach';
if (!dir) {
  process.stderr.write('usage: supervisor.ts <sandbox-dir> [--reattach]\n');
  process.exit(2);
}
const files = sandboxFiles(dir);
// A supervisor that crashes says why (it has no terminal): the sandbox is then `lost`, and this tells the operator.
for (const event of ['uncaughtException', 'unhandledRejection'] as const)
  process.on(event, (error: unknown) => {
    appendFileSync(files.supervisorLog, `${new Date().toISOString()} ${event}: ${(error as Error)?.stack ?? error}\n`);
    process.exit(70);
  });
// The sandbox's own mount points are made under this umask and must be traversable by the agent's
// uid; svc's records and logs here are created 0600 explicitly instead.
process.umask(0o022);

const spec = JSON.parse(readFileSync(files.spec, 'utf8')) as LaunchSpec;
// Exactly once: only the process that creates the claim file may start the agent. A container or
// pod outlives its supervisor: one new supervisor per dead one may take it over (reattach), and it
// only ever finds the container or pod, never starts the agent again.
const previous = reattach ? readJsonIfExists<SupervisorRecord>(files.supervisor) : undefined;
if (
  reattach &&
  (!(spec.container || spec.pod) ||
    !previous ||
    existsSync(files.exit) ||
    isSameProcessAlive(previous.pid, previous.startTime ?? undefined))
)
  process.exit(0);
try {
  const claim = previous ? `${files.claim}.reattach-${previous.pid}-${previous.startTime}` : files.claim;
  closeSync(openSync(claim, 'wx', 0o600));
} catch {
  process.exit(0);
}
writeJsonAtomic<SupervisorRecord>(files.supervisor, {
  pid: process.pid,
  startTime: processStartTime(process.pid) ?? null,
});

// The sandbox's proxies live in this process: as long as the agent, whatever happens to workers.
if (spec.network) {
  try {
    await startSandboxNetwork(spec.network);
  } catch (error) {
    writeJsonAtomic<ExitRecord>(files.exit, {
      exitCode: null,
      signal: null,
      spawnError: {
        code: 'SANDBOX_NETWORK',
        message: `the sandbox's network could not start: ${(error as Error).message}`,
      },
      stoppedBySvc: false,
      endedAt: new Date().toISOString(),
    });
    process.exit(0);
  }
}
const stdoutFd = openSync(files.stdout, 'a', 0o600);
const stderrFd = openSync(files.stderr, 'a', 0o600);
let stoppedBySvc = false;
let finished = false;

/** Records how the agent ended, then cleans up (the container, the cgroup) and exits. */
function finish(record: ExitRecord, cleanup: () => Promise<void> = async () => {}): void {
  if (finished) return;
  finished = true;
  if (spec.memoryCgroup) record.oomKilled = record.oomKilled || oomKillCount(spec.memoryCgroup) > 0;
  // What the backend said (the kubelet's eviction message, a lost pod) is shown with the agent's stderr.
  if (record.detail) writeSync(stderrFd, `svc sandbox: ${record.loss ?? 'ended'}: ${record.detail}\n`);
  if (record.notHandedBack) writeSync(stderrFd, 'svc sandbox: the pod ended without handing its workspace back\n');
  // The record first: a supervisor that dies after it leaves nothing a successor would redo.
  writeJsonAtomic(files.exit, record);
  void cleanup()
    .catch(() => {})
    .finally(releaseCgroupAndExit);
}

function releaseCgroupAndExit(): void {
  if (!spec.memoryCgroup) process.exit(0);
  const cgroup = spec.memoryCgroup;
  // An engine's own processes (Podman's conmon) may leave the run's cgroup just after the container.
  const deadline = Date.now() + 5000;
  const release = () => {
    if (removeMemoryCgroup(cgroup) || Date.now() > deadline) process.exit(0);
    setTimeout(release, 100);
  };
  release();
}

/** Starts the agent as a process of this host (bubblewrap, or unsandboxed); answers how to stop it. */
function spawnAgent(): () => void {
  const argv = spec.memoryCgroup ? joinCgroupArgv(spec.memoryCgroup, spec.argv) : spec.argv;
  const agent = spawn(argv[0]!, argv.slice(1), {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ['pipe', stdoutFd, stderrFd],
    // Its own process group: a stop reaches everything the agent started.
    detached: true,
  });
  agent.once('error', (error: NodeJS.ErrnoException) => {
    finish({
      exitCode: null,
      signal: null,
      spawnError: { code: error.code ?? 'ERROR', message: error.message },
      stoppedBySvc,
      endedAt: new Date().toISOString(),
    });
  });
  agent.once('spawn', () => {
    writeJsonAtomic<AgentRecord>(files.agent, {
      pid: agent.pid!,
      startTime: processStartTime(agent.pid!) ?? null,
      spawnedAt: new Date().toISOString(),
    });
    agent.stdin!.on('error', () => {
      // The agent may exit without reading its prompt; that is its business, not a supervisor crash.
    });
    agent.stdin!.end(spec.stdin ?? '');
  });
  agent.once('exit', (exitCode, signal) => {
    finish({ exitCode, signal, spawnError: null, stoppedBySvc, endedAt: new Date().toISOString() });
  });
  // SIGTERM to the agent's whole group, then SIGKILL after 5 s.
  return () => {
    if (!agent.pid) return;
    try {
      process.kill(-agent.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    setTimeout(() => {
      try {
        process.kill(-agent.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 5000).unref();
  };
}

/** Runs the agent's container (container backend): the engine owns the process, this its output. */
async function runAgentContainer(container: ContainerSpec): Promise<() => void> {
  // Loaded only for a container (as the pod's runner, the preview's door): a supervisor starts on
  // every run's critical path, and each module it loads costs it time and memory.
  const { runContainer } = await import('./container/container-runner.ts');
  const output = { stdoutFd, stderrFd, cursorFile: files.logCursor };
  const run = runContainer(container, spec.memoryCgroup, output, { reattach }, (record) => {
    // A reattached container keeps the record of its first start.
    if (!reattach || !existsSync(files.agent)) writeJsonAtomic<AgentRecord>(files.agent, record);
  });
  void run.exited.then(
    (exit) => finish({ ...exit, stoppedBySvc }, run.remove),
    (error: Error) =>
      finish({
        exitCode: null,
        signal: null,
        spawnError: { code: 'CONTAINER_ENGINE', message: `the container engine failed: ${error.message}` },
        stoppedBySvc,
        endedAt: new Date().toISOString(),
      }),
  );
  return () => run.stop();
}

/** Runs the agent's pod (Kubernetes backend) behind the run's gateway on this worker. */
async function runAgentPod(pod: PodSpec): Promise<() => void> {
  // Loaded only for a pod: the Kubernetes client takes a few hundred ms to load, in every supervisor.
  const [{ runPod }, { startPodGateway }] = await Promise.all([
    import('./kubernetes/pod-runner.ts'),
    import('./kubernetes/pod-gateway.ts'),
  ]);
  let gateway: string;
  try {
    const { port } = await startPodGateway({ ...pod.gateway, socketDir: files.net }, files.gateway);
    gateway = `${pod.gateway.host}:${port}`;
  } catch (error) {
    // A successor that cannot listen where the pod was told still watches the pod to its end.
    if (!reattach) {
      failToStart('POD_GATEWAY', `the run's gateway could not listen: ${(error as Error).message}`);
      return () => {};
    }
    gateway = '';
  }
  const run = runPod(pod, gateway, { stdoutFd, stderrFd, cursorFile: files.logCursor }, { reattach }, (record) => {
    if (!reattach || !existsSync(files.agent)) writeJsonAtomic<AgentRecord>(files.agent, record);
  });
  void run.exited.then(
    (exit) => {
      const handedBack = readJsonIfExists<{ handedBack: string[] }>(files.gateway)?.handedBack ?? [];
      const notHandedBack = exit.exitCode !== null && !handedBack.includes('workspace');
      finish({ ...exit, ...(notHandedBack ? { notHandedBack } : {}), stoppedBySvc }, run.remove);
    },
    (error: Error) => failToStart('KUBERNETES', `the Kubernetes API failed: ${error.message}`),
  );
  return () => run.stop();
}

function failToStart(code: string, message: string): void {
  finish({
    exitCode: null,
    signal: null,
    spawnError: { code, message },
    stoppedBySvc,
    endedAt: new Date().toISOString(),
  });
}

// A preview is served on a port of this worker as long as its sandbox lives (its door connects in).
if (spec.expose && !reattach) await (await import('./preview-expose.ts')).exposePreview(spec.expose, dir);
const stopAgent = spec.pod
  ? await runAgentPod(spec.pod)
  : spec.container
    ? await runAgentContainer(spec.container)
    : spawnAgent();
// A stop asked while no supervisor was there to hear it (a container or pod between two supervisors).
if ((spec.container || spec.pod) && existsSync(files.stopRequested)) stopAgentGroup();

/** svc asked the agent to stop (cancel, cap, watchdog, the finalizer's lifetime). */
function stopAgentGroup(): void {
  stoppedBySvc = true;
  stopAgent();
}

// A stop request from svc (cancel, cap, watchdog): pass it to the agent's whole group.
for (const name of ['SIGTERM', 'SIGINT'] as const) process.on(name, stopAgentGroup);
// A launch with a lifetime (the finalizer) is stopped when it runs out, whatever it is doing.
// Node fires a longer timer at once: a lifetime past 24.8 days is cut there.
if (spec.maxLifetimeMs) setTimeout(stopAgentGroup, Math.min(spec.maxLifetimeMs, 2 ** 31 - 1)).unref();
