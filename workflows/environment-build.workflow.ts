// environmentBuildWorkflow: the one build of a project's environment key (docs/decisions/0051-environment-cache.md).
// Its id is the project and the key; runs start it with a use-existing policy, so concurrent runs
// share it, and each follows its setup's lines and waits for its outcome. It checks out the base
// fresh, runs the setup in a sandbox of its own (bounded by setupTimeout), keeps what the setup
// added, and answers the setup's outcome; a failed build keeps nothing, and the next run builds anew.
import type { SetupOutcome } from '../activities/environment-activities.ts';
import type { EnvironmentBuildInput } from '../core/environment.ts';
import { workflowInfo } from '@temporalio/workflow';
import { environmentBuild, environmentWatch } from './activity-proxies.ts';

export async function environmentBuildWorkflow(request: EnvironmentBuildInput): Promise<SetupOutcome> {
  const input = { ...request, buildRunId: workflowInfo().runId };
  const { done } = await environmentBuild.prepareEnvironmentBuild(input);
  if (done) return { ok: true, durationMs: 0, exitCode: 0, signal: null, timedOut: false, message: null };
  const started = await environmentBuild.startEnvironmentBuildSetup(input);
  let outcome: SetupOutcome;
  if (started.ok)
    outcome = await environmentWatch.awaitEnvironmentSetup({
      runId: null,
      plan: input.plan,
      build: { projectId: input.projectId, key: input.key, buildRunId: input.buildRunId },
    });
  else
    outcome = {
      ok: false,
      durationMs: 0,
      exitCode: null,
      signal: null,
      timedOut: false,
      message: `the environment's setup did not start: ${started.message}`,
    };
  await environmentBuild.endEnvironmentBuild({ ...input, ok: outcome.ok });
  return outcome;
}
