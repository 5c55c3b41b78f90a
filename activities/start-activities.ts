// A run's first start in one activity: cut the workspace, then start the agent. One workflow task
// and one activity fewer per run than prepareWorkspace and startAgent one after the other (six
// history events of a trivial run's 24: docs/decisions/0036-the-run-start-in-one-activity.md), with what
// the workflow did between them kept: a run cancelled while its clone was cut never starts its
// agent, and messages steered meanwhile are folded into its prompt. The activity asks the workflow
// (a query: no history) after a clone, and on any retry; a first attempt on an empty scratch
// workspace does not (cutting one takes no longer than the start itself, and the workflow looked
// just before scheduling it).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { foldIntoPrompt, inClaimOrder, type InboxItem } from '../core/inbox.ts';
import { DISK_NEARLY_FULL, NOT_LAUNCHED } from '../core/run-states.ts';
import { dataPaths } from '../platform/config.ts';
import {
  belowFloor,
  describeFloor,
  describeFreeSpace,
  floorIsOff,
  freeSpace,
  type DiskFloor,
} from '../platform/disk-space.ts';
import { claimInboxUpdate, startGateQuery } from '../workflows/messages.ts';
import type { AgentActivities } from './agent-activities.ts';
import type { RunActivityDeps } from './run-activities.ts';
import { chooseIsolation, sandboxFiles } from '../sandbox/index.ts';
import { ProjectEntity } from '../db/entities/index.ts';
import { readRunEnvironment, type RunEnvironment } from './environment-activities.ts';
import { createProjectSecretAccess } from './project-secret-access.ts';
import { ENVIRONMENT_FILE } from '../core/environment.ts';
import { mcpRefusal } from '../core/mcp-servers.ts';
import { prepareRunWorkspace, type PrepareWorkspaceInput } from './workspace/prepare-workspace.ts';

export interface StartActivityDeps extends RunActivityDeps {
  temporal: Client;
}

type StartInput = Parameters<AgentActivities['startAgent']>[0];

/** The start's input, but the workspace is cut here: its path and kind come from the cut. */
export type PrepareAndStartInput = Omit<StartInput, 'workspacePath'> & {
  workspace: PrepareWorkspaceInput;
  /** Taken from the inbox by the workflow while the run was queued; folded in with any taken here. */
  claimed: InboxItem[];
};

export function createStartActivities(deps: StartActivityDeps, agents: Pick<AgentActivities, 'startAgent'>) {
  return {
    /**
     * Cuts the run's workspace, then starts its agent there (startAgent, whose retry reports the
     * agent already started). A failure before the launch (the cut, or asking the workflow) fails
     * as `not_launched`, which the workflow ends `never_started`.
     */
    async prepareAndStartAgent({ workspace, claimed, ...start }: PrepareAndStartInput) {
      // Only a fresh cut: a retry finds its workspace (and maybe its agent) already there.
      if (deps.diskFloor && !existsSync(workspace.workspacePath)) refuseOnAFullDisk(deps.dataDir, deps.diskFloor);
      const prepared = await notLaunchedOnFailure(prepareRunWorkspace(deps, workspace));
      // An earlier attempt that got as far as the launch (its spec written, its supervisor maybe
      // still loading): startAgent reports that agent, whatever happened since; no second look.
      const files = sandboxFiles(join(dataPaths.sandboxes(deps.dataDir), start.runId));
      const launching = existsSync(files.spec) || existsSync(files.claim);
      // A retry may come long after the workflow last looked: it asks too, even for a scratch workspace.
      const retry = Context.current().info.attempt > 1;
      // A repository with an environment: its setup runs first, from the workflow (it may take
      // minutes), which then starts the agent and looks for a cancel and steered messages itself.
      if (!launching && prepared.kind === 'clone') {
        const environment = await notLaunchedOnFailure(environmentOf(deps, workspace, start));
        if (environment) return { environment, workspace: prepared };
      }
      let messages = claimed;
      if (!launching && (prepared.kind === 'clone' || retry)) {
        const gate = await notLaunchedOnFailure(startGate(deps.temporal, start.runId, retry));
        if (gate === 'cancelled') return { ...NOT_STARTED, workspace: prepared };
        if (gate.length > 0) messages = inClaimOrder([...claimed, ...gate]);
      }
      const outcome = await agents.startAgent({
        ...start,
        prompt: foldIntoPrompt(start.prompt, messages),
        workspacePath: prepared.workspacePath,
      });
      return { ...outcome, workspace: prepared };
    },
  };
}

/** The run's repository environment at its base (activities/environment-activities.ts), or null when it has none. */
async function environmentOf(
  deps: StartActivityDeps,
  workspace: PrepareWorkspaceInput,
  { image = null, agent, network }: Pick<StartInput, 'image' | 'agent' | 'network'>,
): Promise<RunEnvironment | null> {
  if (!workspace.projectId) return null;
  const project = await deps.readModel.em().findOne(ProjectEntity, { id: workspace.projectId });
  if (!project) return null;
  const rev = workspace.baseCommit ?? `refs/remotes/origin/${workspace.baseBranch ?? project.defaultBranch}`;
  let backend: string;
  try {
    backend = chooseIsolation(deps.sandbox);
  } catch {
    backend = 'unavailable'; // the setup's own start says why
  }
  const environment = await readRunEnvironment(deps.projectsRoot, {
    projectId: project.id,
    clone: project.localPath,
    rev,
    backend,
    image,
    defaultBranch: project.defaultBranch,
  });
  if (!environment || 'invalid' in environment || !environment.plan.mcp) return environment;
  // MCP servers this run's agent cannot be given fail the run before its setup, like any invalid file.
  const scopes = await createProjectSecretAccess(deps.readModel, deps.secretsKeys).scopes(project.id);
  const refusal = mcpRefusal(environment.plan.mcp, agent.runtime, scopes, network?.mode === 'none');
  return refusal ? { invalid: `${ENVIRONMENT_FILE}: ${refusal}` } : environment;
}

/** The answer for a run cancelled while its workspace was cut: no sandbox, no agent. */
const NOT_STARTED = {
  isolation: null,
  sandbox: null,
  costBasis: null,
  memory: null,
  status: 'cancelled' as const,
  sandboxRunId: null,
  spawnedAt: null,
  endedAt: null,
  message: 'cancelled while the workspace was cut',
};

/**
 * After the cut: `cancelled` when the run was cancelled meanwhile, else the messages steered
 * meanwhile, claimed. The claim has a fixed update id: a retry after an attempt that claimed
 * (and died before the launch) gets the same messages back from Temporal, not an empty inbox, so
 * a retry claims whether or not anything is unread.
 */
export async function startGate(temporal: Client, runId: string, retry: boolean): Promise<'cancelled' | InboxItem[]> {
  const handle = temporal.workflow.getHandle(runId);
  const gate = await handle.query(startGateQuery);
  if (gate.cancelRequested) return 'cancelled';
  if (gate.unread === 0 && !retry) return [];
  return handle.executeUpdate(claimInboxUpdate, { updateId: `${runId}:start-claim` });
}

/**
 * A run is not started on a worker whose data directory is below the floor: its clone, its agent's
 * writes and the read model would fill what is left. The API checks its own data directory at the
 * door; this is the worker's, which may be another disk.
 */
function refuseOnAFullDisk(dataDir: string, floor: DiskFloor): void {
  if (floorIsOff(floor)) return;
  let space;
  try {
    space = freeSpace(dataDir);
  } catch {
    return; // a filesystem that cannot be asked: the cut itself will say what is wrong
  }
  if (belowFloor(space, floor))
    throw ApplicationFailure.create({
      type: DISK_NEARLY_FULL,
      // The reason a failed run shows: the disk, not where it is mounted.
      message: `the worker's disk is nearly full: ${describeFreeSpace(space)}, below ${describeFloor(floor)}`,
      nonRetryable: true,
    });
}

/** A failure before the launch, typed so the workflow tells it from a failed start; retryable as it was. */
async function notLaunchedOnFailure<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    const cause = error instanceof Error ? error : new Error(String(error));
    throw ApplicationFailure.create({
      message: cause.message,
      type: NOT_LAUNCHED,
      nonRetryable: error instanceof ApplicationFailure && error.nonRetryable === true,
      cause,
    });
  }
}
