// The one rule from a project trigger (.svc/triggers.yaml) to a run request, whoever fires it: a
// Temporal Schedule (activities/project-activities.ts) or an operator by hand
// (POST /projects/{id}/triggers/{triggerId}/run).
import type { AgentDefinition } from './agents.ts';
import { projectRunSettings, type RunRequest } from './run-input.ts';
import type { SvcDefaults, Trigger } from './svc-config.ts';

/** The trigger's prompt, else the project's defaultPrompt, else work on its seed. */
export function triggerPrompt(
  trigger: { prompt?: string | undefined; seed?: string | undefined },
  defaultPrompt: string | undefined,
): string | undefined {
  return trigger.prompt ?? defaultPrompt ?? (trigger.seed ? `work on sd ${trigger.seed}` : undefined);
}

/** The run a trigger asks for, or why it cannot ask for one (no prompt at all). */
export function triggerRunRequest(args: {
  trigger: Trigger;
  defaults: SvcDefaults | null | undefined;
  project: { id: string; defaultBranch: string };
  agent: AgentDefinition;
  /** The run's trigger label: `schedule` when Temporal fires it, `manual` by hand. */
  label: string;
  runBranchPrefix: string;
}): Omit<RunRequest, 'runId' | 'createdAt'> | { problem: string } {
  const { trigger, defaults, project } = args;
  const prompt = triggerPrompt(trigger, defaults?.defaultPrompt);
  if (!prompt) return { problem: `trigger "${trigger.id}" has no prompt, seed or project defaultPrompt` };
  return {
    agent: args.agent,
    projectId: project.id,
    prompt,
    trigger: args.label,
    seedId: trigger.seed ?? null,
    maxCostUsd: trigger.maxCostUsd ?? null,
    ...projectRunSettings(defaults, project.defaultBranch, args.runBranchPrefix),
    triggerFire: { projectId: project.id, triggerId: trigger.id },
  };
}
