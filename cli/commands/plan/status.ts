import { Command, Option } from 'clipanion';
import { EXIT, RemoteCommand, table } from '../../base-command.ts';
import { projectLabel } from '../../client/project-label.ts';
import type { GetPlanRunResponse } from '../../client/responses.ts';

interface Run {
  id: string;
  costUsd: number | null;
  startedAt: string | null;
  endedAt: string | null;
}

export class PlanStatusCommand extends RemoteCommand {
  static override paths = [['plan', 'status']];

  static override usage = Command.Usage({
    category: 'Plan-runs',
    description: 'show a plan-run: its state and the child table with cost and duration',
    details: `
      GET /plan-runs/{id}. NDJSON prints the whole answer (\`planRun\`, \`children\`, \`runs\`, \`links\`) as one line.
      \`--output pretty\` prints \`plan-run <id> [<state>] — project <owner/repo> (<id>), plan <p>, agent <a>, N
      children\`, a \`failure:\` line when it failed, its \`dashboard:\` page (and \`temporal:\` when the server knows
      the Temporal UI), and the table \`# seed state cost duration run\` (\`—\` where unknown).
    `,
    examples: [
      ['The child table', '$0 plan status plnr_0123456789ab --output pretty'],
      ['The raw detail', '$0 plan status plnr_0123456789ab'],
    ],
  });

  id = Option.String({ required: true, name: 'plan-run-id' });

  protected async run(): Promise<number> {
    const detail = await this.client.request<GetPlanRunResponse>('GET', `/plan-runs/${encodeURIComponent(this.id)}`);
    if (this.output !== 'pretty') {
      this.line(detail);
      return EXIT.ok;
    }
    const { planRun, children, runs } = detail as { planRun: any; children: any[]; runs: Run[] };
    const project = await projectLabel(this.client, planRun.projectId);
    const plan = planRun.planId ?? '(issues)';
    this.line(
      `plan-run ${planRun.id} [${planRun.state}] — project ${project}, plan ${plan}, agent ${planRun.agentName}, ` +
        `${children.length} children`,
    );
    if (planRun.failureReason) this.line(`failure: ${planRun.failureReason}`);
    this.line(`dashboard: ${detail.links.dashboard}`);
    if (detail.links.temporalUi) this.line(`temporal: ${detail.links.temporalUi}`);
    const rows = children.map((child) => {
      const run = runs.find((candidate) => candidate.id === child.runId);
      const duration =
        run?.startedAt && run.endedAt
          ? `${((Date.parse(run.endedAt) - Date.parse(run.startedAt)) / 1000).toFixed(1)}s`
          : '—';
      const cost = run?.costUsd === null || run?.costUsd === undefined ? '—' : `$${run.costUsd.toFixed(4)}`;
      return [String(child.seq), child.seedId, child.state, cost, duration, child.runId ?? '—'];
    });
    this.line(table(['#', 'SEED', 'STATE', 'COST', 'DURATION', 'RUN'], rows));
    return EXIT.ok;
  }
}
