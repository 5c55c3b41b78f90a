import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import { EXIT, RemoteCommand, table } from '../../base-command.ts';
import { resolveProject } from '../../client/projects.ts';
import type { ListPlanRunsResponse } from '../../client/responses.ts';

const STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'active'] as const;

export class PlanListCommand extends RemoteCommand {
  static override paths = [['plan', 'list']];

  static override usage = Command.Usage({
    category: 'Plan-runs',
    description: 'list plan-runs, newest first',
    details: `
      GET /plan-runs. One plan-run per line, \`--output json\` one JSON array, or with \`--output pretty\` a table.
      \`--state active\` means queued or running.
    `,
    examples: [
      ['Every plan-run', '$0 plan list'],
      [
        'Running plan-runs of one project, as a table',
        '$0 plan list --project prj_0123456789ab --state active --output pretty',
      ],
    ],
  });

  project = Option.String('--project', { description: 'only this project: its id (prj_…) or owner/repo' });
  state = Option.String('--state', {
    description: `only this state: ${STATES.join(', ')}`,
    validator: t.isEnum(STATES),
  });

  protected async run(): Promise<number> {
    const query = new URLSearchParams({
      ...(this.project ? { project: await resolveProject(this.client, this.project) } : {}),
      ...(this.state ? { state: this.state } : {}),
    }).toString();
    const { planRuns } = await this.client.request<ListPlanRunsResponse>(
      'GET',
      `/plan-runs${query ? `?${query}` : ''}`,
    );
    if (this.output === 'pretty') {
      const rows = planRuns.map((plan: any) => [
        plan.id,
        plan.state,
        plan.planId ?? '(issues)',
        plan.agentName,
        plan.projectId,
        plan.createdAt,
        plan.failureReason ?? '',
      ]);
      this.line(
        rows.length ? table(['ID', 'STATE', 'PLAN', 'AGENT', 'PROJECT', 'CREATED', 'FAILURE'], rows) : '(no plan-runs)',
      );
    } else this.list(planRuns);
    return EXIT.ok;
  }
}
