import { Command, Option } from 'clipanion';
import { EXIT, RemoteCommand } from '../../base-command.ts';
import type { CancelPlanRunResponse } from '../../client/responses.ts';

export class PlanCancelCommand extends RemoteCommand {
  static override paths = [['plan', 'cancel']];

  static override usage = Command.Usage({
    category: 'Plan-runs',
    description: 'cancel a plan-run and its in-flight child run',
    details: `
      POST /plan-runs/{id}/cancel. Prints
      \`{"type":"plan_run.cancelled","planRun","cancelledChild","alreadyTerminal"}\`; cancelling a plan-run that already
      ended changes nothing and says so (\`alreadyTerminal: true\`).

      Exit codes: 0 once the plan-run is cancelled (or had already ended), 2 for an unknown plan-run, 3 when the server
      is unreachable, 4 when the token is refused.
    `,
    examples: [['Cancel a plan-run', '$0 plan cancel plnr_0123456789ab']],
  });

  id = Option.String({ required: true, name: 'plan-run-id' });
  reason = Option.String('--reason', { description: 'why, for the event log' });

  protected async run(): Promise<number> {
    const result = await this.client.request<CancelPlanRunResponse>(
      'POST',
      `/plan-runs/${encodeURIComponent(this.id)}/cancel`,
      this.reason ? { reason: this.reason } : {},
    );
    if (this.output === 'pretty') {
      const { childSeq, runId } = result.cancelledChild;
      const child = childSeq !== undefined ? `; cancelled child ${childSeq} (${runId})` : '';
      this.line(
        result.alreadyTerminal
          ? `plan-run ${this.id} had already ended (${result.planRun.state})`
          : `plan-run ${this.id} ${result.planRun.state}${child}`,
      );
    } else {
      this.line({ type: 'plan_run.cancelled', ...result });
    }
    return EXIT.ok;
  }
}
