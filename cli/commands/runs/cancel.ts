import { Command, Option } from 'clipanion';
import type { z } from 'zod';
import type { cancelRunResponse } from '../../../api/routes/runs.schema.ts';
import { EXIT, outputOption, RemoteCommand } from '../../base-command.ts';
import { stateColour } from '../../terminal-text.ts';

type CancelRun = z.output<typeof cancelRunResponse>;

export class RunsCancelCommand extends RemoteCommand {
  static override paths = [['runs', 'cancel']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: 'cancel a run: a queued run never starts, a running agent is stopped',
    details: `
      POST /runs/{id}/cancel. Prints \`run <id> cancelled\`, or that it had already ended (cancelling a finished run
      changes nothing). \`--output json\` prints the API's answer (\`{"state","alreadyTerminal","sandboxRun"}\`).

      Exit codes: 0 cancelled or already ended, 2 no such run, 3 server unreachable, 4 token refused.
    `,
    examples: [
      ['Cancel a run', '$0 runs cancel run_0123456789ab'],
      ['Say why, for its event log', '$0 runs cancel run_0123456789ab --reason "wrong branch"'],
    ],
  });

  override output = outputOption('pretty');
  id = Option.String({ required: true, name: 'run-id' });
  reason = Option.String('--reason', { description: 'why, for the event log' });

  protected async run(): Promise<number> {
    const answer = await this.client.request<CancelRun>(
      'POST',
      `/runs/${encodeURIComponent(this.id)}/cancel`,
      this.reason ? { reason: this.reason } : {},
    );
    if (this.output !== 'pretty') this.line(answer);
    else if (answer.alreadyTerminal) this.line(`run ${this.id} had already ended: ${answer.state}`);
    else this.line(`run ${this.id} ${answer.state}`, stateColour(answer.state));
    return EXIT.ok;
  }
}
