// A run's first start in one activity (since the startPreparesWorkspace patch): cut the workspace,
// then start the agent. One workflow task and one activity fewer per run than prepareWorkspace and
// startAgent one after the other (docs/performance.md), with what the workflow did between them
// kept: a run cancelled while its clone was cut never starts its agent, and messages steered
// meanwhile are folded into its prompt. The activity asks the workflow (a query: no history) only
// after a clone; an empty scratch workspace takes no longer than the start itself.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { foldIntoPrompt, inClaimOrder, type InboxItem } from '../core/inbox.ts';
import { WORKSPACE_FAILED } from '../core/run-states.ts';
import { dataPaths } from '../platform/config.ts';
import { claimInboxUpdate, startGateQuery } from '../workflows/messages.ts';
import type { ProjectedRun } from '../core/run-started.ts';
import type { AgentActivities } from './agent-activities.ts';
import type { RunActivityDeps } from './run-activities.ts';
import { sandboxFiles } from './sandbox/files.ts';
import { prepareRunWorkspace, type PrepareWorkspaceInput } from './workspace/prepare-workspace.ts';

export interface StartActivityDeps extends RunActivityDeps {
  temporal: Client;
}

type StartInput = Parameters<AgentActivities['startAgent']>[0];

/** The start's input, but the workspace is cut here: its path and kind come from the cut. */
export type PrepareAndStartInput = Omit<StartInput, 'workspacePath' | 'projectRunning'> & {
  workspace: PrepareWorkspaceInput;
  /** Taken from the inbox by the workflow while the run was queued; folded in with any taken here. */
  claimed: InboxItem[];
  /** The run before its start, for the activity to project `running` (as startAgent's). */
  projectRunning?: { snapshot: ProjectedRun };
};

export function createStartActivities(deps: StartActivityDeps, agents: Pick<AgentActivities, 'startAgent'>) {
  return {
    /**
     * Cuts the run's workspace, then starts its agent there (startAgent, whose retry reports the
     * agent already started). A workspace that cannot be cut fails as `workspace_failed`, which the
     * workflow ends `never_started`.
     */
    async prepareAndStartAgent({ workspace, claimed, projectRunning, ...start }: PrepareAndStartInput) {
      const prepared = await prepareRunWorkspace(deps, workspace).catch((error: unknown) => {
        throw workspaceFailure(error);
      });
      // A retry whose agent already started must report it, whatever happened since.
      const launched = existsSync(sandboxFiles(join(dataPaths.sandboxes(deps.dataDir), start.runId)).claim);
      let messages = claimed;
      let projects = projectRunning !== undefined;
      if (prepared.kind === 'clone' && !launched) {
        const handle = deps.temporal.workflow.getHandle(start.runId);
        const gate = await handle.query(startGateQuery);
        if (gate.cancelRequested) return { ...NOT_STARTED, workspace: prepared };
        if (gate.unread > 0) {
          messages = inClaimOrder([...claimed, ...(await handle.executeUpdate(claimInboxUpdate))]);
          // The claim was published: the workflow's projection is newer than the one handed here.
          projects = false;
        }
      }
      const { workspacePath, kind: workspaceKind } = prepared;
      const outcome = await agents.startAgent({
        ...start,
        prompt: foldIntoPrompt(start.prompt, messages),
        workspacePath,
        ...(projects && projectRunning
          ? { projectRunning: { snapshot: { ...projectRunning.snapshot, workspacePath }, workspaceKind } }
          : {}),
      });
      return { ...outcome, workspace: prepared };
    },
  };
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

/** The workspace's failure, typed so the workflow tells it from a failed start; retryable as it was. */
function workspaceFailure(error: unknown): ApplicationFailure {
  const cause = error instanceof Error ? error : new Error(String(error));
  return ApplicationFailure.create({
    message: cause.message,
    type: WORKSPACE_FAILED,
    nonRetryable: error instanceof ApplicationFailure && error.nonRetryable === true,
    cause,
  });
}
