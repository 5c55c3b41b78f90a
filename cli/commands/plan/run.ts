import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { EXIT, exitForRunState, RemoteCommand } from '../../base-command.ts';
import { projectLabel } from '../../client/project-label.ts';
import { resolveProject } from '../../client/projects.ts';
import type { CreatePlanRunResponse, GetPlanRunResponse } from '../../client/responses.ts';

export class PlanRunCommand extends RemoteCommand {
  static override paths = [['plan', 'run']];

  static override usage = Command.Usage({
    category: 'Plan-runs',
    description: 'dispatch a serial plan-run (one run per seed) and tail its events',
    details: `
      Dispatches a plan-run (POST /plan-runs) from a plan of the project's seeds tracker (\`[plan-id]\`), or from an
      ordered list of issues (\`--issues a,b,c\`, exclusive with a plan id). Children run strictly one after another;
      each one's pull request must be merged before the next starts.

      Prints \`{"type":"plan_run.dispatched","planRun","children","links"}\`, then (unless \`--no-follow\`)
      \`{"type":"plan_run.event",…}\` for every event of every child run, and last
      \`{"type":"plan_run.terminal","planRunId","state","failureReason"}\`. \`--output pretty\` prints the same as short
      text lines, the plan-run's project (\`owner/repo (id)\`) and dashboard page first; \`--output json\` as one JSON
      array when it ends.

      Exit codes: 0 when the plan-run succeeded (or was dispatched, with \`--no-follow\`), 1 when it failed, 5 when it
      was cancelled, 2 for a rejected request, 3 when the server is unreachable, 4 when the token is refused, 130 when
      you detach with Ctrl-C (the plan-run goes on).
    `,
    examples: [
      [
        'Run every seed of a plan with Claude Code',
        '$0 plan run pl-3f2a --project prj_0123456789ab --agent claude-code',
      ],
      [
        'Run three issues in this order, capped at $2 each',
        '$0 plan run --project prj_0123456789ab --agent claude-code --issues app-1a2b,app-3c4d,app-5e6f ' +
          '--max-cost-usd 2',
      ],
      ['Dispatch and return at once', '$0 plan run pl-3f2a --project prj_0123456789ab --agent shell --no-follow'],
    ],
  });

  planId = Option.String({ required: false, name: 'plan-id' });
  project = Option.String('--project', { required: true, description: 'the project: its id (prj_…) or owner/repo' });
  agent = Option.String('--agent', { required: true, description: 'the agent every child runs' });
  issues = Option.String('--issues', {
    description: 'comma-separated issue ids, run in this order (instead of a plan id)',
  });
  promptTemplate = Option.String('--prompt-template', {
    description: 'the child prompt; {seed_id} and {seed_body} are filled in (default "work on sd {seed_id}")',
  });
  ref = Option.String('--ref', {
    description: 'the git ref children are cut from (default: the project default branch)',
  });
  provider = Option.String('--provider', { description: 'override the agent provider for every child' });
  model = Option.String('--model', { description: 'override the agent model for every child' });
  maxCostUsd = Option.String('--max-cost-usd', {
    description: 'spend cap of each child, in USD',
    validator: t.cascade(t.isNumber(), [t.isPositive()]),
  });
  follow = Option.Boolean('--follow', true, {
    description: 'tail the events until the plan-run ends (--no-follow to return at once)',
  });

  protected async run(): Promise<number> {
    if (Boolean(this.planId) === Boolean(this.issues))
      throw new UsageError('give a plan id or --issues, not both and not neither');
    const issues = this.issues
      ?.split(',')
      .map((id) => id.trim())
      .filter(Boolean);
    if (issues && issues.length === 0) throw new UsageError('--issues needs at least one issue id');
    const body = {
      project: await resolveProject(this.client, this.project),
      agent: this.agent,
      ...(this.planId ? { planId: this.planId } : { issues }),
      ...(this.promptTemplate ? { promptTemplate: this.promptTemplate } : {}),
      ...(this.ref ? { ref: this.ref } : {}),
      ...(this.provider ? { providerOverride: this.provider } : {}),
      ...(this.model ? { modelOverride: this.model } : {}),
      ...(this.maxCostUsd !== undefined ? { maxCostUsd: this.maxCostUsd } : {}),
    };
    const created = await this.client.request<CreatePlanRunResponse>('POST', '/plan-runs', body);
    const id: string = created.planRun.id;
    const project = this.output === 'pretty' ? await projectLabel(this.client, created.planRun.projectId) : '';
    this.emit(
      { type: 'plan_run.dispatched', ...created },
      [
        `plan-run ${id} dispatched: project ${project}, ${created.children.length} children`,
        `dashboard: ${created.links.dashboard}`,
        ...(created.links.temporalUi ? [`temporal: ${created.links.temporalUi}`] : []),
      ].join('\n'),
    );
    if (!this.follow) return EXIT.ok;

    const followed = await this.tail(`/plan-runs/${id}/events?follow=1`, (event) =>
      this.emit({ type: 'plan_run.event', ...event }, `${event.ts} ${event.runId} ${event.kind}${eventDetail(event)}`),
    );
    if (followed === 'detached') {
      this.context.stderr.write(`svc: detached from ${id}; it goes on (cancel it with \`svc plan cancel ${id}\`)\n`);
      return EXIT.interrupted;
    }
    const { planRun } = await this.client.request<GetPlanRunResponse>('GET', `/plan-runs/${id}`);
    // An operator's view carries the failure reason; a spectator's (public mode) does not.
    const failureReason = 'failureReason' in planRun ? planRun.failureReason : null;
    this.emit(
      { type: 'plan_run.terminal', planRunId: id, state: planRun.state, failureReason },
      `plan-run ${id} ${planRun.state}${failureReason ? `: ${failureReason}` : ''}`,
    );
    return exitForRunState(planRun.state);
  }
}

/** What a pretty line shows of an event: a plan event's payload, an agent's line of text. */
function eventDetail(event: { kind: string; payload?: { text?: unknown } }): string {
  if (event.kind.startsWith('plan_run.')) return ` ${JSON.stringify(event.payload)}`;
  return typeof event.payload?.text === 'string' ? ` ${event.payload.text}` : '';
}
