// The I/O of a run's agent: starting it in its sandbox, following it (output, usage, the spend cap,
// refused egress) until it exits, and stopping it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Context, heartbeat } from '@temporalio/activity';
import { createOutputIngest } from './agent-output.ts';
import { workspaceReady } from './environment-cache.ts';
import type { AgentDefinition, RuntimeId } from '../core/agents.ts';
import type { AgentExitEvidence } from '../core/agent-exit.ts';
import type { ServicePlan } from '../core/environment-services.ts';
import { mcpEndpoints, resolveMcpServers, type McpServer } from '../core/mcp-servers.ts';
import type { ProjectSandboxSettings } from '../core/run-model.ts';
import { mintRunToken } from '../core/run-token.ts';
import { RunEntity } from '../db/entities/index.ts';
import { createProjectSecretAccess, launchedSecretNames } from './project-secret-access.ts';
import { dataPaths } from '../platform/config.ts';
import { svcMetrics } from '../platform/metrics.ts';
import { sandboxCpuLimit } from '../platform/sandbox-settings.ts';
import { appendRunEvents } from './read-model/run-projection.ts';
import type { RunActivityDeps } from './run-activities.ts';
import { runtimeFor } from './runtimes/index.ts';
import { boundedUsage, initialRuntimeState, type Usage } from './runtimes/types.ts';
import {
  agentEgressRules,
  sandboxFiles,
  chooseIsolation,
  imageRefusal,
  sandboxHostId,
  inspectSandbox,
  MAX_REATTACHMENTS,
  outlivesSupervisor,
  reattachSandbox,
  startSandbox,
  stopSandbox,
  createMemoryCgroup,
  type MemoryLimitOutcome,
  sandboxLaunch,
  sandboxServices,
  launchOutcome,
  engineFacts,
  watchForExit,
  readJsonIfExists,
  type LaunchSpec,
} from '../sandbox/index.ts';
import { type CostCapCrossing, type SupervisionProgress } from './output-ingest.ts';
import { workspaceSizeGuard, type WorkspaceCrossing } from './workspace/workspace-size.ts';

export function createAgentActivities(deps: RunActivityDeps) {
  const sandboxDir = (runId: string) => join(dataPaths.sandboxes(deps.dataDir), runId);
  const pollIntervalMs = deps.pollIntervalMs ?? 250;

  const ingestOutput = createOutputIngest(deps.readModel, sandboxDir, deps.runOutputMaxBytes ?? null);
  const projectSecrets = createProjectSecretAccess(deps.readModel, deps.secretsKeys);
  /** The run's project (Temporal carries the run's id only): its secrets are read here, never handed in. */
  const projectOf = async (runId: string) =>
    (await deps.readModel.em().findOne(RunEntity, { id: runId }, { fields: ['projectId'] }))?.projectId ?? null;

  return {
    /** Starts the agent once, in its sandbox; on a retry, reports the agent that is already there. */
    async startAgent({
      runId,
      agent,
      prompt,
      workspacePath,
      memoryLimitMiB,
      network,
      image,
      cpuMillicores,
      pod,
      generation,
      repoContext,
      services,
      mcp,
    }: {
      runId: string;
      /** The run's services: the agent joins their loopback (container backend). */
      services?: ServicePlan[];
      /** The MCP servers of the run's environment, their secrets as references: resolved here. */
      mcp?: McpServer[];
      /** A run resumed after a pause: its sandbox's generation (2, 3…), which names it anew. */
      generation?: number;
      agent: AgentDefinition;
      prompt: string;
      workspacePath: string;
      /** The project's `repoContext` (activities/runtimes/types.ts says who reads it where). */
      repoContext?: string;
    } & ProjectSandboxSettings) {
      const adapter = runtimeFor(agent.runtime);
      const projectEnv = await projectSecrets.environment(await projectOf(runId), 'run');
      const costBasis = adapter.costBasis(process.env);
      let launch;
      let isolation;
      try {
        // A secret a server names was removed (or made `setup`) since the environment was read: no start.
        const mcpServers = resolveMcpServers(mcp ?? [], projectEnv);
        launch = adapter.buildLaunch(agent, {
          runId,
          prompt,
          workspacePath,
          hostEnv: process.env,
          projectEnv,
          repoContext: repoContext ?? null,
          mcpServers,
        });
        launch.secretNames = launchedSecretNames(launch.env, projectEnv);
        // A start and a restart alike: the workspace's layers, lost to a reboot or an unmount, mounted again.
        const unmountable = await workspaceReady(deps.dataDir, runId, sandboxHostId(runId, deps.sandbox));
        if (unmountable) throw new Error(unmountable);
        isolation = chooseIsolation(deps.sandbox);
        const refusal = imageRefusal(isolation, image, deps.sandbox);
        if (refusal) throw new Error(refusal);
      } catch (error) {
        return {
          isolation: null,
          sandbox: null,
          costBasis,
          memory: null,
          status: 'sandbox_failed' as const,
          sandboxRunId: null,
          spawnedAt: null,
          endedAt: null,
          message: (error as Error).message,
        };
      }
      const egress = agentEgressRules({
        modelEndpoints: adapter.modelEndpoints(process.env),
        githubApiUrl: deps.githubApiUrl,
        operator: deps.sandbox.egress,
        project: network,
        mcpEndpoints: mcpEndpoints(mcp ?? []),
      });
      // The sandbox's only way to svc: this run's callback routes, with a token only for them.
      const callback = deps.agentApi
        ? { baseUrl: deps.agentApi.baseUrl, runId, token: mintRunToken(deps.agentApi.operatorToken, runId) }
        : null;
      const dir = sandboxDir(runId);
      const limitMiB = memoryLimitMiB ?? deps.sandbox.memoryLimitMiB;
      const { spec, note } = sandboxLaunch({
        name: generation ? `${runId}-g${generation}` : runId,
        engineFacts:
          isolation === 'container' ? await engineFacts(deps.sandbox.container.engine).catch(() => null) : null,
        image,
        cpuMillicores: sandboxCpuLimit(cpuMillicores, deps.sandbox),
        projectPod: pod ?? null,
        memoryLimitMiB: limitMiB,
        services: services?.length ? sandboxServices(runId, services) : null,
        dir,
        launch,
        isolation,
        settings: deps.sandbox,
        hostId: sandboxHostId(runId, deps.sandbox),
        egress,
        callback,
        dieWithParent: true,
        forbidden: [deps.dataDir, deps.projectsRoot],
        trustCommand: agent.source !== 'project',
      });
      const memoryLimit: MemoryLimitOutcome | null = limitMiB ? createMemoryCgroup(runId, limitMiB) : null;
      const launchedFresh = !existsSync(sandboxFiles(dir).claim);
      const launchStarted = performance.now();
      const status = await startSandbox(dir, {
        ...spec,
        memoryCgroup: memoryLimit?.enforced ? memoryLimit.cgroup : null,
      });
      // A retried start finds the sandbox already there: only a fresh launch is a measurement. An
      // agent that started and already ended (a fast one, a fast machine) had its sandbox ready too.
      const started = status.kind === 'running' || (status.kind === 'exited' && status.agent !== undefined);
      if (launchedFresh && started) svcMetrics.sandboxReadySeconds.observe((performance.now() - launchStarted) / 1000);
      const memory =
        memoryLimit &&
        (memoryLimit.enforced
          ? { limitMiB, enforced: true }
          : { limitMiB, enforced: false, reason: memoryLimit.reason });
      return { isolation, sandbox: note, costBasis, memory, ...launchOutcome(status, agent.command[0] ?? 'agent') };
    },

    /**
     * Follows the agent until it exits, turning its output into run events. Heartbeats carry the
     * read offsets, so an attempt on a new worker resumes exactly where the last one stopped.
     */
    async superviseAgent({
      runId,
      runtime,
      maxCostUsd,
      workspacePath,
      generation,
      spentUsd = 0,
    }: {
      runId: string;
      runtime?: RuntimeId;
      maxCostUsd?: number | null;
      /** The run's workspace, held to SVC_RUN_WORKSPACE_MAX_MIB while the agent runs. */
      workspacePath?: string | null;
      /** A resumed run's agent (workflows/run/pause.ts): its output gets its own event keys. */
      generation?: number;
      /** What the run's earlier generations spent: the cap counts it. */
      spentUsd?: number;
    }): Promise<
      AgentExitEvidence & {
        endedAt: string | null;
        usage: Usage | null;
        costCap: CostCapCrossing | null;
        workspaceTooLarge: WorkspaceCrossing | null;
        /** The model the agent said it ran, when it said one. */
        model?: string | null;
      }
    > {
      const context = Context.current();
      const adapter = runtimeFor(runtime ?? 'command');
      const progress: SupervisionProgress = (context.info.heartbeatDetails as SupervisionProgress | undefined) ?? {
        offsets: { stdout: 0, stderr: 0 },
        runtime: initialRuntimeState(),
        stderrHead: [],
        ...(generation ? { generation } : {}),
      };
      const files = sandboxFiles(sandboxDir(runId));
      const seen = () => ({
        sawOutput: progress.runtime.modelOutput,
        stderrHead: progress.stderrHead,
        providerError: progress.runtime.providerError,
        usage: boundedUsage(progress.runtime.usage),
        costCap: progress.costCap ?? null,
        workspaceTooLarge: progress.workspace ?? null,
        model: progress.runtime.model ?? null,
        oomKilled: false,
      });
      const mask = await projectSecrets.mask(await projectOf(runId), files.spec);
      const exitWatch = watchForExit(files.exit);
      // A pod's workspace is in its own volume, bounded by its size limit (the kubelet evicts past it).
      const maxMiB = deps.sandbox.workspaceMaxMiB;
      const size =
        maxMiB && workspacePath && !readJsonIfExists<LaunchSpec>(files.spec)?.pod
          ? workspaceSizeGuard([workspacePath, files.dir], maxMiB)
          : null;
      const suffix = generation ? `:g${generation}` : '';
      try {
        return await supervise();
      } finally {
        exitWatch.close();
        size?.close();
      }

      async function supervise() {
        for (;;) {
          const status = inspectSandbox(files);
          // A container or pod whose supervisor died is taken over by a new one (a bounded number of times).
          if (
            status.kind === 'lost' &&
            (progress.reattachments ?? 0) < MAX_REATTACHMENTS &&
            outlivesSupervisor(files)
          ) {
            progress.reattachments = (progress.reattachments ?? 0) + 1;
            heartbeat(progress);
            if (await reattachSandbox(files.dir)) continue;
          }
          const done = status.kind === 'exited' || status.kind === 'lost';
          await ingestOutput(runId, adapter, progress, done, mask);
          // Bounded as recorded: a negative or NaN claim must not dodge the cap.
          const costUsd = boundedUsage(progress.runtime.usage)?.costUsd ?? null;
          if (maxCostUsd && costUsd !== null && spentUsd + costUsd > maxCostUsd && !progress.costCap) {
            // Strict: the first report above the cap stops the agent, whatever the runtime.
            progress.costCap = { costUsd: spentUsd + costUsd, maxCostUsd };
            if (!done) stopSandbox(files);
            await appendRunEvents(deps.readModel.em(), runId, [
              {
                dedupeKey: `cost:cap_exceeded${suffix}`,
                kind: 'cost.cap_exceeded',
                stream: 'system',
                ts: new Date().toISOString(),
                payload: progress.costCap,
              },
            ]);
          }
          const crossing = !done && !progress.costCap && !progress.workspace ? (size?.look() ?? null) : null;
          if (crossing) {
            // Stopped as at the cap: the agent's own exit then ends the run, every line recorded.
            progress.workspace = crossing;
            stopSandbox(files);
            await appendRunEvents(deps.readModel.em(), runId, [
              {
                dedupeKey: `workspace:too_large${suffix}`,
                kind: 'workspace.too_large',
                stream: 'system',
                ts: new Date().toISOString(),
                payload: crossing,
              },
            ]);
          }
          heartbeat(progress);
          if (status.kind === 'exited') {
            const { exit } = status;
            if (exit.oomKilled) {
              // Recorded even when the agent survived it (a build it ran was killed, say).
              await appendRunEvents(deps.readModel.em(), runId, [
                {
                  dedupeKey: `sandbox:oom_kill${suffix}`,
                  kind: 'sandbox.oom_kill',
                  stream: 'system',
                  ts: exit.endedAt,
                  payload: { agentExitCode: exit.exitCode, agentSignal: exit.signal },
                },
              ]);
            }
            return {
              ...seen(),
              spawnError: exit.spawnError,
              exitCode: exit.exitCode,
              signal: exit.signal,
              stoppedBySvc: exit.stoppedBySvc,
              oomKilled: exit.oomKilled ?? false,
              lost: exit.loss === 'vanished',
              unreachable: exit.loss === 'unreachable',
              evicted: exit.loss === 'evicted',
              notHandedBack: exit.notHandedBack ?? false,
              serviceFailure: exit.serviceFailure ?? null,
              endedAt: exit.endedAt,
            };
          }
          if (status.kind === 'lost') {
            return {
              ...seen(),
              spawnError: null,
              exitCode: null,
              signal: null,
              stoppedBySvc: false,
              lost: true,
              endedAt: null,
            };
          }
          // Not context.sleep: each of those leaves a handler on the activity's cancellation for good.
          await exitWatch.wait(pollIntervalMs, context.cancellationSignal);
          if (context.cancellationSignal.aborted) await context.cancelled;
        }
      }
    },
  };
}

export type AgentActivities = ReturnType<typeof createAgentActivities>;
