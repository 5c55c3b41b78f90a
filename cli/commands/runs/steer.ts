import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import type { z } from 'zod';
import type { steerResponse } from '../../../api/routes/runs.schema.ts';
import { INBOX_PRIORITIES } from '../../../core/run-states.ts';
import { EXIT, outputOption, RemoteCommand } from '../../base-command.ts';

type Steer = z.output<typeof steerResponse>;

export class RunsSteerCommand extends RemoteCommand {
  static override paths = [['runs', 'steer']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: "put a message in a running run's inbox, for its agent to read",
    details: `
      POST /runs/{id}/steer. The agent gets the message at its next look at its inbox (an agent that reads its input
      gets it there); \`svc runs logs <id> -f\` shows what it does with it. Prints \`message <id> queued for run <id>\`;
      \`--output json\` prints the stored message.

      Exit codes: 0 queued, 2 no such run, an ended run or an empty message, 3 server unreachable, 4 token refused.
    `,
    examples: [
      ['Steer a run', '$0 runs steer run_0123456789ab "run the linter before you commit"'],
      [
        'Before anything else it has queued',
        '$0 runs steer run_0123456789ab "stop and push what you have" --priority high',
      ],
    ],
  });

  override output = outputOption('pretty');
  id = Option.String({ required: true, name: 'run-id' });
  message = Option.String({ required: true, name: 'message' });
  priority = Option.String('--priority', 'normal', {
    description: `${INBOX_PRIORITIES.join(', ')} (default normal)`,
    validator: t.isEnum(INBOX_PRIORITIES),
  });

  protected async run(): Promise<number> {
    const { message } = await this.client.request<Steer>('POST', `/runs/${encodeURIComponent(this.id)}/steer`, {
      body: this.message,
      priority: this.priority,
    });
    if (this.output !== 'pretty') this.line({ message });
    else this.line(`message ${message.id} queued for run ${this.id} (${message.priority} priority)`);
    return EXIT.ok;
  }
}
