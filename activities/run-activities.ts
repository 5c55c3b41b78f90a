// The I/O of a run: read-model projection, the workspace, and the agent process in its sandbox.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ApplicationFailure, Context, heartbeat } from '@temporalio/activity';
import type { AgentDefinition, RuntimeId } from '../core/agents.ts';
import type { AgentExitEvidence } from '../core/agent-exit.ts';
import type { InboxItem } from '../core/inbox.ts';
import type { RunSnapshot, SandboxNetworkSettings } from '../core/run-model.ts';
import { mintRunToken } from '../core/run-token.ts';
import type { EventStream } from '../core/run-states.ts';
import { ProjectEntity, ProjectTriggerEntity } from '../db/entities/index.ts';
import type { ReadModel } from '../db/orm.ts';
import { dataPaths } from '../stack/config.ts';
import { git, gitProbe } from './git/git.ts';
import { projectLockFile, withProjectLock } from './git/project-lock.ts';
import { saveInboxItems } from './read-model/inbox-store.ts';
import { appendRunEvents, projectRunRow, type RunEventInput } from './read-model/run-projection.ts';
import { runtimeFor } from './runtimes/index.ts';
import { agentEgressRules } from './sandbox/egress-allowlist.ts';
import type { EgressRefusalRecord } from './sandbox/egress-proxy.ts';
import { chooseIsolation, sandboxHostId, type SandboxSettings } from './sandbox/isolation.ts';
import { sandboxLaunch } from './sandbox/sandbox-launch.ts';
import { createMemoryCgroup, type MemoryLimitOutcome } from './sandbox/memory-cgroup.ts';
import { initialRuntimeState, type RuntimeAdapter, type RuntimeState, type Usage } from './runtimes/types.ts';
import { readJsonIfExists, sandboxFiles } from './sandbox/files.ts';
import { inspectSandbox, readNewLines, readRemainder, sandboxRunId, startSandbox, stopSandbox } from './sandbox/local-sandbox.ts';

export interface RunActivityDeps {
  readModel: ReadModel;
  dataDir: string;
  projectsRoot: string;
  githubToken: string | undefined;
  /** Where the agent reaches svc, and the operator token its per-run token is derived from. */
  agentApi?: { baseUrl: string; operatorToken: string } | undefined;
  sandbox: SandboxSettings;
  githubApiUrl: string;
  /** How often a supervising activity looks at its sandbox. */
  pollIntervalMs?: number;
}

export interface SupervisionProgress {
  offsets: Record<'stdout' | 'stderr', number> & { refusals?: number };
  runtime: RuntimeState;
  stderrHead: string[];
  /** Set once the reported cost crossed the run's cap and svc stopped the agent. */
  costCap?: CostCapCrossing | null;
}

export interface CostCapCrossing {
  costUsd: number;
  maxCostUsd: number;
}

const STDERR_HEAD_LINES = 20;

export function createRunActivities(deps: RunActivityDeps) {
  const sandboxDir = (runId: string) => join(dataPaths.sandboxes(deps.dataDir), runId);
  const pollIntervalMs = deps.pollIntervalMs ?? 250;

  async function ingestOutput(runId: string, adapter: RuntimeAdapter, progress: SupervisionProgress, final: boolean): Promise<void> {
    const files = sandboxFiles(sandboxDir(runId));
    const events: RunEventInput[] = [];
    for (const stream of ['stdout', 'stderr'] as const) {
      const path = stream === 'stdout' ? files.stdout : files.stderr;
      const { lines, nextOffset } = readNewLines(path, progress.offsets[stream]);
      progress.offsets[stream] = nextOffset;
      if (final) {
        const rest = readRemainder(path, nextOffset);
        if (rest) {
          lines.push(rest);
          progress.offsets[stream] = rest.offset + Buffer.byteLength(rest.text);
        }
      }
      for (const line of lines) events.push(outputEvent(adapter, stream, line, progress));
    }
    // Egress the sandbox's proxies refused: written by svc, outside the sandbox, so to be believed.
    const refused = readNewLines(files.refusals, progress.offsets.refusals ?? 0);
    progress.offsets.refusals = refused.nextOffset;
    for (const line of refused.lines) {
      const record = JSON.parse(line.text) as EgressRefusalRecord;
      events.push({ dedupeKey: `egress:${line.offset}`, kind: 'sandbox.egress_refused', stream: 'system', ts: record.ts, payload: record });
    }
    if (events.length) await appendRunEvents(deps.readModel.em(), runId, events);
  }

  return {
    async projectRun({ snapshot, events, triggerFire, inbox }: { snapshot: RunSnapshot; events: RunEventInput[]; triggerFire?: { projectId: string; triggerId: string } | null; inbox?: InboxItem[] }): Promise<void> {
      await projectRunRow(deps.readModel.em(), snapshot);
      if (inbox?.length) await saveInboxItems(deps.readModel.em(), snapshot.id, inbox);
      if (events.length) await appendRunEvents(deps.readModel.em(), snapshot.id, events);
      if (triggerFire) {
        await deps.readModel.em().nativeUpdate(ProjectTriggerEntity, triggerFire, { lastFiredAt: new Date(snapshot.createdAt), lastRunId: snapshot.id });
      }
    },

    /**
     * A clone of the project when there is one, else an empty scratch directory. Idempotent. The
     * clone starts from the base (or the pinned commit) on the run's branch, with origin pointing
     * at GitHub, so the sandbox pushes there and nowhere else.
     */
    async prepareWorkspace(input: { runId: string; projectId: string | null; workspacePath: string; branch?: string | null; baseBranch?: string | null; baseCommit?: string | null; continueFromBranch?: string | null }) {
      const { runId, projectId, workspacePath } = input;
      const project = projectId ? await deps.readModel.em().findOne(ProjectEntity, { id: projectId }) : null;
      const source = project && existsSync(join(project.localPath, '.git')) ? project.localPath : null;
      if (existsSync(workspacePath)) return { workspacePath, kind: source ? ('clone' as const) : ('scratch' as const) };
      mkdirSync(dirname(workspacePath), { recursive: true });
      const hostId = sandboxHostId(runId, deps.sandbox);
      if (!source || !project) {
        const scratch = `${workspacePath}.partial-${runId}`;
        rmSync(scratch, { recursive: true, force: true });
        mkdirSync(scratch, { recursive: true });
        await handOver(scratch, hostId);
        renameSync(scratch, workspacePath);
        return { workspacePath, kind: 'scratch' as const };
      }
      // Made next to the target and renamed: a retry never sees a half-made workspace. The shared
      // project lock keeps a concurrent refresh from moving the clone under our feet.
      const partial = `${workspacePath}.partial-${runId}`;
      rmSync(partial, { recursive: true, force: true });
      const [owner, name] = source.split('/').slice(-2) as [string, string];
      const baseBranch = input.baseBranch ?? project.defaultBranch;
      await withProjectLock(projectLockFile(deps.projectsRoot, owner, name), 'shared', async () => {
        await git(['clone', '--quiet', '--no-hardlinks', '--no-checkout', source, partial]);
        await git(['fetch', '--quiet', '--no-tags', source, '+refs/remotes/origin/*:refs/remotes/origin/*'], { cwd: partial });
      });
      if (input.continueFromBranch) {
        // A continuation starts from the parent's pushed work, fetched from the forge.
        await git(['fetch', '--quiet', '--no-tags', `${project.gitUrl}.git`, `+refs/heads/${input.continueFromBranch}:refs/remotes/parent/head`], { cwd: partial, token: deps.githubToken });
      }
      const start = input.continueFromBranch ? 'refs/remotes/parent/head' : (input.baseCommit ?? `refs/remotes/origin/${baseBranch}`);
      if (!(await gitProbe(['rev-parse', '--verify', '--quiet', `${start}^{commit}`], { cwd: partial }))) {
        rmSync(partial, { recursive: true, force: true });
        throw ApplicationFailure.nonRetryable(`${input.baseCommit ? `commit ${input.baseCommit}` : `branch ${baseBranch}`} is not in the project clone (refresh the project?)`, 'workspace_unavailable');
      }
      await git(['checkout', '--quiet', '-B', input.branch ?? `svc/${runId}`, start], { cwd: partial });
      await git(['remote', 'set-url', 'origin', `${project.gitUrl}.git`], { cwd: partial });
      await git(['config', 'user.name', 'svc agent'], { cwd: partial });
      await git(['config', 'user.email', `${runId}@svc.invalid`], { cwd: partial });
      // From here on the workspace is the agent's: svc never runs git in it again.
      await handOver(partial, hostId);
      renameSync(partial, workspacePath);
      return { workspacePath, kind: 'clone' as const };
    },

    /** Starts the agent once, in its sandbox; on a retry, reports the agent that is already there. */
    async startAgent({ runId, agent, prompt, workspacePath, memoryLimitMiB, network }: { runId: string; agent: AgentDefinition; prompt: string; workspacePath: string; memoryLimitMiB?: number | null; network?: SandboxNetworkSettings | null }) {
      const adapter = runtimeFor(agent.runtime);
      const launch = adapter.buildLaunch(agent, { runId, prompt, workspacePath, hostEnv: process.env });
      const costBasis = adapter.costBasis(process.env);
      let isolation;
      try {
        isolation = chooseIsolation(deps.sandbox);
      } catch (error) {
        return { isolation: null, sandbox: null, costBasis, memory: null, status: 'sandbox_failed' as const, sandboxRunId: null, spawnedAt: null, endedAt: null, message: (error as Error).message };
      }
      const egress = agentEgressRules({ modelEndpoints: adapter.modelEndpoints(process.env), githubApiUrl: deps.githubApiUrl, operator: deps.sandbox.egress, project: network });
      // The sandbox's only way to svc: this run's callback routes, with a token only for them.
      const callback = deps.agentApi ? { baseUrl: deps.agentApi.baseUrl, runId, token: mintRunToken(deps.agentApi.operatorToken, runId) } : null;
      const dir = sandboxDir(runId);
      const { spec, note } = sandboxLaunch({ dir, launch, isolation, settings: deps.sandbox, hostId: sandboxHostId(runId, deps.sandbox), egress, callback, dieWithParent: true, forbidden: [deps.dataDir, deps.projectsRoot], trustCommand: agent.source !== 'project' });
      const limitMiB = memoryLimitMiB ?? deps.sandbox.memoryLimitMiB;
      const memoryLimit: MemoryLimitOutcome | null = limitMiB ? createMemoryCgroup(runId, limitMiB) : null;
      const status = await startSandbox(dir, { ...spec, memoryCgroup: memoryLimit?.enforced ? memoryLimit.cgroup : null });
      const memory = memoryLimit && (memoryLimit.enforced ? { limitMiB, enforced: true } : { limitMiB, enforced: false, reason: memoryLimit.reason });
      const common = { isolation, sandbox: note, costBasis, memory };
      switch (status.kind) {
        case 'running':
          return { ...common, status: 'running' as const, sandboxRunId: sandboxRunId(status.supervisor), spawnedAt: status.agent?.spawnedAt ?? null, endedAt: null, message: null };
        case 'exited': {
          const failure = status.exit.spawnError;
          if (failure) {
            const failed = failure.code === 'SANDBOX_NETWORK' ? ('sandbox_failed' as const) : ('spawn_failed' as const);
            return { ...common, status: failed, sandboxRunId: null, spawnedAt: null, endedAt: status.exit.endedAt, message: failed === 'sandbox_failed' ? failure.message : `spawn ${agent.command[0]} ${failure.code}: ${failure.message}` };
          }
          return { ...common, status: 'running' as const, sandboxRunId: null, spawnedAt: status.agent?.spawnedAt ?? status.exit.endedAt, endedAt: null, message: null };
        }
        default:
          return { ...common, status: 'lost' as const, sandboxRunId: null, spawnedAt: null, endedAt: null, message: status.kind === 'lost' ? status.reason : 'sandbox did not start' };
      }
    },

    /**
     * Follows the agent until it exits, turning its output into run events. Heartbeats carry the
     * read offsets, so an attempt on a new worker resumes exactly where the last one stopped.
     */
    async superviseAgent({ runId, runtime, maxCostUsd }: { runId: string; runtime?: RuntimeId; maxCostUsd?: number | null }): Promise<AgentExitEvidence & { endedAt: string | null; usage: Usage | null; costCap: CostCapCrossing | null }> {
      const context = Context.current();
      const adapter = runtimeFor(runtime ?? 'command');
      const progress: SupervisionProgress = (context.info.heartbeatDetails as SupervisionProgress | undefined) ?? { offsets: { stdout: 0, stderr: 0 }, runtime: initialRuntimeState(), stderrHead: [] };
      const files = sandboxFiles(sandboxDir(runId));
      const seen = () => ({ sawOutput: progress.runtime.modelOutput, stderrHead: progress.stderrHead, providerError: progress.runtime.providerError, usage: progress.runtime.usage, costCap: progress.costCap ?? null, oomKilled: false });
      for (;;) {
        const status = inspectSandbox(files);
        const done = status.kind === 'exited' || status.kind === 'lost';
        await ingestOutput(runId, adapter, progress, done);
        const costUsd = progress.runtime.usage?.costUsd ?? null;
        if (maxCostUsd && costUsd !== null && costUsd > maxCostUsd && !progress.costCap) {
          // Strict: the first report above the cap stops the agent, whatever the runtime.
          progress.costCap = { costUsd, maxCostUsd };
          if (!done) stopSandbox(files);
          await appendRunEvents(deps.readModel.em(), runId, [{ dedupeKey: 'cost:cap_exceeded', kind: 'cost.cap_exceeded', stream: 'system', ts: new Date().toISOString(), payload: progress.costCap }]);
        }
        heartbeat(progress);
        if (status.kind === 'exited') {
          const { exit } = status;
          if (exit.oomKilled) {
            // Recorded even when the agent survived it (a build it ran was killed, say).
            await appendRunEvents(deps.readModel.em(), runId, [{ dedupeKey: 'sandbox:oom_kill', kind: 'sandbox.oom_kill', stream: 'system', ts: exit.endedAt, payload: { agentExitCode: exit.exitCode, agentSignal: exit.signal } }]);
          }
          return { ...seen(), spawnError: exit.spawnError, exitCode: exit.exitCode, signal: exit.signal, stoppedBySvc: exit.stoppedBySvc, oomKilled: exit.oomKilled ?? false, lost: false, endedAt: exit.endedAt };
        }
        if (status.kind === 'lost') {
          return { ...seen(), spawnError: null, exitCode: null, signal: null, stoppedBySvc: false, lost: true, endedAt: null };
        }
        await context.sleep(pollIntervalMs);
      }
    },

    /** When the agent last wrote anything (its output files' modification time). */
    async agentActivity({ runId }: { runId: string }): Promise<{ lastOutputAt: number }> {
      const files = sandboxFiles(sandboxDir(runId));
      const agent = readJsonIfExists<{ spawnedAt: string }>(files.agent);
      const times = [files.stdout, files.stderr].map((path) => (existsSync(path) ? statSync(path).mtimeMs : 0));
      return { lastOutputAt: Math.max(...times, agent ? Date.parse(agent.spawnedAt) : 0) };
    },

    /** Stops the agent (SIGTERM to its process group, SIGKILL after 5 s) and waits until it has gone. */
    async stopAgent({ runId }: { runId: string }): Promise<{ stopped: boolean }> {
      const files = sandboxFiles(sandboxDir(runId));
      stopSandbox(files);
      const deadline = Date.now() + STOP_WAIT_MS;
      while (Date.now() < deadline) {
        const status = inspectSandbox(files);
        if (status.kind === 'exited' || status.kind === 'lost') return { stopped: true };
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return { stopped: false };
    },
  };
}

const STOP_WAIT_MS = 15_000;

/** Gives a workspace to its sandbox's host uid (svc is root), before the agent ever sees it. */
async function handOver(path: string, hostId: number | null): Promise<void> {
  if (hostId === null) return;
  await new Promise<void>((resolve, reject) => execFile('chown', ['-R', '--no-dereference', `${hostId}:${hostId}`, path], (error) => (error ? reject(error) : resolve())));
}

function outputEvent(adapter: RuntimeAdapter, stream: EventStream, line: { offset: number; text: string }, progress: SupervisionProgress): RunEventInput {
  if (stream === 'stderr' && progress.stderrHead.length < STDERR_HEAD_LINES) progress.stderrHead.push(line.text);
  const parsed = adapter.parseLine(stream, line.text, progress.runtime);
  return { dedupeKey: `${stream}:${line.offset}`, kind: parsed.kind, stream, ts: new Date().toISOString(), payload: parsed.payload };
}

export type RunActivities = ReturnType<typeof createRunActivities>;
