// The I/O of a repository's environment (.svc/environment.yaml, core/environment.ts): reading the
// file at the run's base commit with svc's git, keying its result, and running its setup in a
// sandbox like the agent's (same backend, uid, memory limit and the project's egress rules; no svc
// credential, no callback routes) in the run's workspace, before the agent starts. The setup is
// hostile content as much as the agent is: svc only reads the records its supervisor leaves.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { basename, join } from 'node:path';
import { Context, heartbeat } from '@temporalio/activity';
import {
  ENVIRONMENT_FILE,
  ENVIRONMENT_FILE_MAX_BYTES,
  isDefaultCacheKeyFile,
  parseEnvironment,
  type EnvironmentPlan,
} from '../core/environment.ts';
import type { ProjectSandboxSettings } from '../core/run-model.ts';
import { dataPaths } from '../platform/config.ts';
import type { Isolation } from '../platform/sandbox-settings.ts';
import { ProjectEntity, RunEntity } from '../db/entities/index.ts';
import { createProjectSecretAccess, launchedSecretNames } from './project-secret-access.ts';
import type { SecretStep } from '../core/project-secrets.ts';
import { environmentBuildWorkflowId, type EnvironmentBuildInput } from '../core/environment.ts';
import {
  cacheRefusal,
  entryReady,
  environmentBuildDir,
  environmentBuildsDir,
  environmentEntry,
  keepBuild,
  mountRunLayers,
  onDefaultBranch,
  runHome,
} from './environment-cache.ts';
import { prepareRunWorkspace } from './workspace/prepare-workspace.ts';
import { git, gitProbe } from '../platform/host-git.ts';
import { projectLockFile, withProjectLock } from '../platform/project-lock.ts';
import { sandboxCpuLimit } from '../platform/sandbox-settings.ts';
import { appendRunEvents, type RunEventInput } from './read-model/run-projection.ts';
import type { RunActivityDeps } from './run-activities.ts';
import {
  agentEgressRules,
  chooseIsolation,
  engineFacts,
  imageRefusal,
  inspectSandbox,
  readNewLines,
  reattachSandbox,
  sandboxFiles,
  sandboxHostId,
  sandboxLaunch,
  startSandbox,
  stopSandbox,
  watchForExit,
  createMemoryCgroup,
  MAX_REATTACHMENTS,
  outlivesSupervisor,
  supervisorHolds,
  type SandboxFiles,
} from '../sandbox/index.ts';

/** The setup's lines kept in the run's events: the first ones as they come, then the last of each stream. */
const LOG_LINES_LIVE = 400;
const LOG_LINES_TAIL = 50;
const LOG_LINE_MAX_CHARS = 2000;
/** What the setup's supervisor allows beyond the setup's own timeout (which `timeout` enforces inside). */
const BACKSTOP_SLACK_MS = 60_000;

/**
 * A repository's environment as a run reads it at its base: what to run, the key of its result, the
 * base's commit, and whether that base is on the project's default branch (only such a base may
 * build or use the shared cache: activities/environment-cache.ts).
 */
export type RunEnvironment =
  { plan: EnvironmentPlan; key: string; commit: string; shared: boolean } | { invalid: string };

/** Where a project's clone is and which commit a run starts from. */
export interface EnvironmentSource {
  projectId: string;
  /** The project clone (its `.git`'s parent). */
  clone: string;
  /** The base: a pinned commit, or `refs/remotes/origin/<base branch>` (never a parent run's branch). */
  rev: string;
  /** What the setup runs on: the backend and the project's image. */
  backend: string;
  image: string | null;
  /** The project's default branch: a base reachable from it may share a kept environment. */
  defaultBranch: string;
}

/**
 * The environment file at the run's base, read from the project clone with svc's git (the blob
 * itself: no filter, no textconv), or null when the base has none. A continuation reads its base's
 * file too, not the parent's branch: an agent's edit to the file runs only once it is merged.
 */
export async function readRunEnvironment(
  projectsRoot: string,
  source: EnvironmentSource,
): Promise<RunEnvironment | null> {
  const [owner, name] = source.clone.split('/').slice(-2) as [string, string];
  return withProjectLock(projectLockFile(projectsRoot, owner, name), 'shared', async () => {
    const cwd = source.clone;
    const object = `${source.rev}:${ENVIRONMENT_FILE}`;
    const type = await gitProbe(['cat-file', '-t', object], { cwd });
    if (type === undefined) return null;
    if (type !== 'blob') return { invalid: `${ENVIRONMENT_FILE}: not a file` };
    const size = Number(await git(['cat-file', '-s', object], { cwd }));
    if (size > ENVIRONMENT_FILE_MAX_BYTES)
      return { invalid: `${ENVIRONMENT_FILE}: ${size} bytes, more than ${ENVIRONMENT_FILE_MAX_BYTES}` };
    const read = parseEnvironment(await git(['cat-file', 'blob', object], { cwd }));
    if ('invalid' in read) return read;
    const keyFiles = await cacheKeyFiles(cwd, source.rev, read.plan.cacheKey);
    const commit = await git(['rev-parse', '--verify', `${source.rev}^{commit}`], { cwd });
    const shared = await onDefaultBranch(cwd, commit, source.defaultBranch);
    return { plan: read.plan, key: environmentKey(source, read.plan, keyFiles), commit, shared };
  });
}

/**
 * The files whose content keys the setup's result, each as its path and blob id (equal content,
 * equal id): the paths the file names (a directory counts with everything under it; a path the
 * base lacks counts as absent), else the lockfiles at the repository's root.
 */
async function cacheKeyFiles(cwd: string, rev: string, named: string[] | null): Promise<[string, string][]> {
  const listing = named
    ? await git(['ls-tree', '-r', '-z', '--full-tree', rev, '--', ...named.map((path) => `:(literal)${path}`)], { cwd })
    : await git(['ls-tree', '-z', '--full-tree', rev], { cwd });
  const files: [string, string][] = [];
  for (const entry of listing.split('\0')) {
    const match = /^\d+ blob ([0-9a-f]+)\t(.+)$/s.exec(entry);
    if (match && (named || isDefaultCacheKeyFile(match[2]!))) files.push([match[2]!, match[1]!]);
  }
  return files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** sha256 over what the setup's result depends on: the project, the script, the key files, the backend and image. */
export function environmentKey(source: EnvironmentSource, plan: EnvironmentPlan, files: [string, string][]): string {
  return createHash('sha256')
    .update(
      JSON.stringify({
        version: 1,
        project: source.projectId,
        setup: plan.setup,
        cacheKey: plan.cacheKey,
        files,
        backend: source.backend,
        image: source.image,
      }),
    )
    .digest('hex');
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The setup under bash -e, stopped at its timeout (and killed 10 s later if it lingers). */
function setupScript(plan: EnvironmentPlan): string {
  const seconds = Math.max(1, Math.round(plan.setupTimeoutMs / 1000));
  // A plan without a setup never starts one (workflows/run/start.ts): `true` only keeps the type whole.
  return `exec timeout --kill-after=10 ${seconds} bash -e -c ${quote(plan.setup ?? 'true')}`;
}

export interface SetupOutcome {
  ok: boolean;
  durationMs: number;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Why it failed, for the run's failure message. */
  message: string | null;
}

interface SetupProgress {
  offsets: { stdout: number; stderr: number };
  kept: number;
  skipped: number;
  reattachments: number;
}

/** Where a setup runs: its sandbox's directory and name, its checkout and its home. */
interface SetupPlace {
  /** Names the sandbox and its host uid: a run's id, or a build's name. */
  name: string;
  dir: string;
  home: string;
  workspacePath: string;
}

/** One build of a key: its workflow execution's run id names its directory. */
interface BuildRef {
  projectId: string;
  key: string;
  buildRunId: string;
}

export type EnvironmentActivityDeps = RunActivityDeps & { temporal: Client; taskQueue: string };

/** A build's name: its sandbox's and its uid's (each build a uid of its own, as each run). */
const buildName = (key: string) => `environment-${key.slice(0, 16)}`;

export function createEnvironmentActivities(deps: EnvironmentActivityDeps) {
  const projectSecrets = createProjectSecretAccess(deps.readModel, deps.secretsKeys);
  const projectOfRun = async (runId: string) =>
    (await deps.readModel.em().findOne(RunEntity, { id: runId }, { fields: ['projectId'] }))?.projectId ?? null;
  /** A setup's lines are masked like the agent's: every value of its project's secrets, and those it was given. */
  const setupMask = async (projectId: string | null, files: SandboxFiles) =>
    (await projectSecrets.mask(projectId, files.spec)) ?? ((text: string) => text);
  const runSetup = (runId: string): SetupPlace => ({
    name: runId,
    dir: join(dataPaths.sandboxes(deps.dataDir), runId, 'setup'),
    home: runHome(deps.dataDir, runId),
    workspacePath: '',
  });
  /** A build's place: one directory per build workflow execution, so its lines are never another's. */
  const buildSetup = ({ key, buildRunId }: BuildRef): SetupPlace => {
    const root = environmentBuildDir(deps.dataDir, key, buildRunId);
    return {
      name: buildName(key),
      dir: join(root, 'sandbox'),
      home: join(root, 'home'),
      workspacePath: join(root, 'workspace'),
    };
  };

  /**
   * Starts a setup once, under its own supervisor (it outlives the worker, as the agent does): a
   * retry finds its claim and starts nothing.
   */
  async function startSetup(
    place: SetupPlace,
    projectId: string | null,
    step: SecretStep,
    plan: EnvironmentPlan,
    { network, memoryLimitMiB, image, cpuMillicores, pod }: ProjectSandboxSettings,
  ): Promise<{ ok: true } | { ok: false; message: string }> {
    const { dir } = place;
    if (existsSync(sandboxFiles(dir).claim)) return { ok: true };
    let isolation;
    try {
      isolation = chooseIsolation(deps.sandbox);
    } catch (error) {
      return { ok: false, message: (error as Error).message };
    }
    const refusal = imageRefusal(isolation, image, deps.sandbox);
    if (refusal) return { ok: false, message: refusal };
    const limitMiB = memoryLimitMiB ?? deps.sandbox.memoryLimitMiB;
    // The project's secrets for the step (a registry token the install needs), read now.
    const secrets = await projectSecrets.environment(projectId, step);
    const env = { ...secrets, PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
    const { spec } = sandboxLaunch({
      name: `${place.name}-setup`,
      image: image ?? null,
      cpuMillicores: sandboxCpuLimit(cpuMillicores, deps.sandbox),
      projectPod: pod ?? null,
      engineFacts:
        isolation === 'container' ? await engineFacts(deps.sandbox.container.engine).catch(() => null) : null,
      memoryLimitMiB: limitMiB,
      dir,
      home: place.home,
      launch: {
        argv: ['bash', '-c', setupScript(plan)],
        cwd: place.workspacePath,
        env,
        secretNames: launchedSecretNames(env, secrets),
        stdin: null,
        maxLifetimeMs: plan.setupTimeoutMs + BACKSTOP_SLACK_MS,
      },
      isolation,
      settings: deps.sandbox,
      hostId: sandboxHostId(place.name, deps.sandbox),
      // The project's egress rules, as the agent has them; no model endpoint: the setup has no model.
      egress: agentEgressRules({
        modelEndpoints: [],
        githubApiUrl: deps.githubApiUrl,
        operator: deps.sandbox.egress,
        project: network ?? null,
      }),
      callback: null,
      dieWithParent: false,
      forbidden: [deps.dataDir, deps.projectsRoot],
      trustCommand: false,
    });
    const memory = limitMiB ? createMemoryCgroup(`${place.name}-setup`, limitMiB) : null;
    const status = await startSandbox(dir, { ...spec, memoryCgroup: memory?.enforced ? memory.cgroup : null });
    if (status.kind === 'lost') return { ok: false, message: `the setup's sandbox did not start: ${status.reason}` };
    return { ok: true };
  }

  return {
    /**
     * Starts the environment's setup in the run's own workspace (uncached). Its home is the agent's,
     * so what it leaves there (a package manager's cache) is the agent's too.
     */
    async startEnvironmentSetup({
      runId,
      plan,
      workspacePath,
      trusted,
      ...settings
    }: {
      runId: string;
      plan: EnvironmentPlan;
      workspacePath: string;
      /**
       * The workspace is a fresh cut of a base on the project's default branch: the setup may have
       * `setup` secrets. A continuation's workspace holds an agent's work, which the setup would run.
       */
      trusted: boolean;
    } & ProjectSandboxSettings): Promise<{ ok: true } | { ok: false; message: string }> {
      const step = trusted ? 'setup' : 'run';
      return startSetup({ ...runSetup(runId), workspacePath }, await projectOfRun(runId), step, plan, settings);
    },

    /** Stops the setup (the run was cancelled meanwhile): its watcher then sees it end like any other. */
    async stopEnvironmentSetup({ runId }: { runId: string }): Promise<void> {
      const files = sandboxFiles(runSetup(runId).dir);
      if (existsSync(files.claim)) stopSandbox(files);
    },

    /**
     * Follows the setup until it ends, its lines into the run's events (`environment.log`, bounded:
     * the first LOG_LINES_LIVE as they come, then the last LOG_LINES_TAIL of each stream). Heartbeats
     * carry the read offsets: an attempt on another worker goes on where the last one stopped.
     */
    async awaitEnvironmentSetup({
      runId,
      plan,
      build,
    }: {
      /** The run whose events get the lines; null for a build, which its runs follow themselves. */
      runId: string | null;
      plan: EnvironmentPlan;
      build?: BuildRef;
    }): Promise<SetupOutcome> {
      const context = Context.current();
      const files = sandboxFiles((build ? buildSetup(build) : runSetup(runId ?? '')).dir);
      const mask = await setupMask(build ? build.projectId : runId && (await projectOfRun(runId)), files);
      const progress: SetupProgress = (context.info.heartbeatDetails as SetupProgress | undefined) ?? {
        offsets: { stdout: 0, stderr: 0 },
        kept: 0,
        skipped: 0,
        reattachments: 0,
      };
      const exitWatch = watchForExit(files.exit);
      try {
        for (;;) {
          const status = inspectSandbox(files);
          if (status.kind === 'lost' && progress.reattachments < MAX_REATTACHMENTS && outlivesSupervisor(files)) {
            progress.reattachments += 1;
            heartbeat(progress);
            if (await reattachSandbox(files.dir)) continue;
          }
          const done = status.kind === 'exited' || status.kind === 'lost';
          const lines = readLines(files, progress, done, mask);
          if (runId) await appendRunEvents(deps.readModel.em(), runId, lines);
          heartbeat(progress);
          if (status.kind === 'lost')
            return failed(0, null, null, false, `the setup's sandbox was lost: ${status.reason}`);
          if (status.kind === 'exited') {
            const { exit, agent } = status;
            const startedAt = agent ? Date.parse(agent.spawnedAt) : Date.parse(exit.endedAt);
            const durationMs = Math.max(0, Date.parse(exit.endedAt) - startedAt);
            if (exit.spawnError) return failed(durationMs, null, null, false, exit.spawnError.message);
            // `timeout` answers 124 when it stopped the setup (137 when it had to kill it).
            const timedOut =
              (exit.exitCode === 124 || exit.exitCode === 137 || exit.stoppedBySvc) &&
              durationMs >= plan.setupTimeoutMs;
            if (timedOut)
              return failed(
                durationMs,
                exit.exitCode,
                exit.signal,
                true,
                `timed out after ${plan.setupTimeoutMs / 1000} s`,
              );
            if (exit.oomKilled) return failed(durationMs, exit.exitCode, exit.signal, false, 'ran out of memory');
            if (exit.exitCode !== 0)
              return failed(
                durationMs,
                exit.exitCode,
                exit.signal,
                false,
                exit.exitCode === null ? `stopped by ${exit.signal ?? 'a signal'}` : `exited with ${exit.exitCode}`,
              );
            return { ok: true, durationMs, exitCode: 0, signal: null, timedOut: false, message: null };
          }
          await exitWatch.wait(250, context.cancellationSignal);
          if (context.cancellationSignal.aborted) await context.cancelled;
        }
      } finally {
        exitWatch.close();
      }
    },

    /**
     * How a run's environment is had: from the kept entry of its key (`ready`), from the build of
     * that entry (started here unless one runs: the build workflow's id is the project and key, and
     * Temporal starts one per id), or set up in the run's own workspace (`uncached`, and why).
     */
    async useEnvironmentCache(
      input: EnvironmentBuildInput & { shared: boolean },
    ): Promise<
      { use: 'ready' } | { use: 'build'; workflowId: string; buildRunId: string } | { use: 'uncached'; why: string }
    > {
      let isolation: Isolation | 'unavailable';
      try {
        isolation = chooseIsolation(deps.sandbox);
      } catch {
        isolation = 'unavailable';
      }
      const refusal = cacheRefusal(isolation);
      if (refusal) return { use: 'uncached', why: refusal };
      if (!input.shared) return { use: 'uncached', why: "the base is not on the project's default branch" };
      if (entryReady(deps.dataDir, input.projectId, input.key)) return { use: 'ready' };
      const { shared: _shared, ...build } = input;
      const workflowId = environmentBuildWorkflowId(input.projectId, input.key);
      const handle = await deps.temporal.workflow.start('environmentBuildWorkflow', {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [build],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      });
      // The running build's execution when one runs already: its lines are the ones to follow.
      return { use: 'build', workflowId, buildRunId: handle.firstExecutionRunId };
    },

    /**
     * Follows a build a run waits for until it ends: the setup's lines into the run's events (each
     * run waiting for it gets the same ones), then the build's outcome. Heartbeats carry the read offsets.
     */
    async followEnvironmentBuild({
      runId,
      workflowId,
      ...build
    }: BuildRef & { runId: string; workflowId: string }): Promise<SetupOutcome> {
      const context = Context.current();
      const files = sandboxFiles(buildSetup(build).dir);
      const mask = await setupMask(build.projectId, files);
      const progress: SetupProgress = (context.info.heartbeatDetails as SetupProgress | undefined) ?? {
        offsets: { stdout: 0, stderr: 0 },
        kept: 0,
        skipped: 0,
        reattachments: 0,
      };
      let outcome: { value: SetupOutcome } | { error: Error } | null = null;
      // The long poll for the build's result ends with this activity, however it ends: left behind,
      // it would retry on a connection the worker has closed at shutdown.
      const polling = new AbortController();
      const ended = deps.temporal
        .withAbortSignal(polling.signal, () => deps.temporal.workflow.getHandle(workflowId, build.buildRunId).result())
        .then(
          (value: SetupOutcome) => (outcome = { value }),
          (error: Error) => (outcome = { error }),
        );
      try {
        for (;;) {
          const done = outcome !== null;
          await appendRunEvents(deps.readModel.em(), runId, readLines(files, progress, done, mask));
          heartbeat(progress);
          if (outcome) {
            const result = outcome as { value: SetupOutcome } | { error: Error };
            if ('value' in result) return result.value;
            return failed(0, null, null, false, `build failed: ${result.error.message}`);
          }
          await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 250))]);
          if (context.cancellationSignal.aborted) await context.cancelled;
        }
      } finally {
        polling.abort();
      }
    },

    /** Mounts the run's workspace and home over the kept entry of its key (activities/environment-cache.ts). */
    async mountEnvironment({
      runId,
      projectId,
      key,
      workspacePath,
    }: {
      runId: string;
      projectId: string;
      key: string;
      workspacePath: string;
    }): Promise<void> {
      await mountRunLayers(
        deps.dataDir,
        runId,
        environmentEntry(deps.dataDir, projectId, key),
        workspacePath,
        sandboxHostId(runId, deps.sandbox),
      );
    },

    /**
     * A build's fresh checkout of the base (the run's own cut: prepare-workspace.ts), under the
     * build's directory; `done` when the entry is kept already (a build started as another ended).
     */
    async prepareEnvironmentBuild({
      projectId,
      key,
      commit,
      buildRunId,
    }: EnvironmentBuildInput & BuildRef): Promise<{ done: boolean }> {
      if (entryReady(deps.dataDir, projectId, key)) return { done: true };
      const place = buildSetup({ projectId, key, buildRunId });
      // Earlier builds of the key have ended (one runs at a time): their records go.
      const builds = environmentBuildsDir(deps.dataDir);
      mkdirSync(builds, { recursive: true, mode: 0o700 });
      const mine = basename(environmentBuildDir(deps.dataDir, key, buildRunId));
      for (const other of readdirSync(builds))
        if (other.startsWith(`${key.slice(0, 16)}-`) && other !== mine)
          rmSync(join(builds, other), { recursive: true, force: true });
      await prepareRunWorkspace(deps, {
        runId: place.name,
        projectId,
        workspacePath: place.workspacePath,
        baseCommit: commit,
      });
      return { done: false };
    },

    /** Starts a build's setup in its checkout, with its own home. */
    async startEnvironmentBuildSetup({ plan, sandbox, ...build }: EnvironmentBuildInput & BuildRef) {
      // A build is a fresh checkout of a base on the default branch (no other is shared).
      return startSetup(buildSetup(build), build.projectId, 'setup', plan, sandbox);
    },

    /**
     * Keeps what a successful build's setup added (environment-cache.ts), then removes the build's
     * checkout and home; its setup's records stay for the runs that follow its lines, until the
     * key's next build or retention.
     */
    async endEnvironmentBuild({
      projectId,
      key,
      commit,
      buildRunId,
      ok,
    }: EnvironmentBuildInput & BuildRef & { ok: boolean }): Promise<void> {
      const place = buildSetup({ projectId, key, buildRunId });
      if (existsSync(sandboxFiles(place.dir).claim) && supervisorHolds(sandboxFiles(place.dir)))
        stopSandbox(sandboxFiles(place.dir));
      if (ok) {
        const project = await deps.readModel.em().findOneOrFail(ProjectEntity, { id: projectId });
        await keepBuild(
          { workspace: place.workspacePath, home: place.home },
          project.localPath,
          commit,
          environmentEntry(deps.dataDir, projectId, key),
        );
      }
      rmSync(place.workspacePath, { recursive: true, force: true });
      rmSync(place.home, { recursive: true, force: true });
    },
  };
}

function failed(
  durationMs: number,
  exitCode: number | null,
  signal: string | null,
  timedOut: boolean,
  why: string,
): SetupOutcome {
  return { ok: false, durationMs, exitCode, signal, timedOut, message: `the environment's setup ${why}` };
}

/**
 * The setup's new lines as run events, within the bound: live until LOG_LINES_LIVE are kept; past
 * it they are counted, and once the setup ended its last LOG_LINES_TAIL lines of each stream are kept.
 */
function readLines(
  files: ReturnType<typeof sandboxFiles>,
  progress: SetupProgress,
  done: boolean,
  mask: (text: string) => string,
): RunEventInput[] {
  const events: RunEventInput[] = [];
  for (const stream of ['stdout', 'stderr'] as const) {
    const path = files[stream];
    for (;;) {
      const { lines, nextOffset } = readNewLines(path, progress.offsets[stream]);
      if (lines.length === 0) break;
      progress.offsets[stream] = nextOffset;
      for (const line of lines) {
        if (progress.kept >= LOG_LINES_LIVE) {
          progress.skipped += 1;
          continue;
        }
        progress.kept += 1;
        events.push(logEvent(stream, line.offset, mask(line.text)));
      }
      if (events.length >= 200) break;
    }
  }
  if (done && progress.skipped > 0) events.push(...tails(files, progress, mask));
  return events;
}

function logEvent(stream: 'stdout' | 'stderr', offset: number, text: string): RunEventInput {
  return {
    dedupeKey: `environment:${stream}:${offset}`,
    kind: 'environment.log',
    // svc's record of the setup's line: the run's stdout and stderr are its agent's.
    stream: 'system',
    ts: new Date().toISOString(),
    payload: { stream, text: text.length > LOG_LINE_MAX_CHARS ? `${text.slice(0, LOG_LINE_MAX_CHARS)}…` : text },
  };
}

/** The last lines of each stream beyond what was kept live, after a line that says how many were left out. */
function tails(
  files: ReturnType<typeof sandboxFiles>,
  progress: SetupProgress,
  mask: (text: string) => string,
): RunEventInput[] {
  const events: RunEventInput[] = [];
  let left = progress.skipped;
  const kept: RunEventInput[] = [];
  for (const stream of ['stdout', 'stderr'] as const) {
    // The last lines only: those before them were counted while the setup ran.
    const all = readNewLines(files[stream], 0, 64 << 20).lines;
    for (const line of all.slice(-LOG_LINES_TAIL)) kept.push(logEvent(stream, line.offset, mask(line.text)));
  }
  left = Math.max(0, left - kept.length);
  events.push({
    dedupeKey: 'environment:skipped',
    kind: 'environment.log',
    stream: 'system',
    ts: new Date().toISOString(),
    payload: { stream: 'system', text: `… ${left} lines of the setup not kept` },
  });
  // A tail line kept live already has its event (the same dedupe key): it is not written twice.
  return [...events, ...kept];
}
