import { Command, Option } from 'clipanion';
import { EXIT, outputOption, RemoteCommand } from '../../base-command.ts';
import type { GetRunResponse } from '../../client/responses.ts';
import { stateColour } from '../../terminal-text.ts';
import { projectNames } from './project-names.ts';
import { runDetail } from './run-text.ts';

export class RunsShowCommand extends RemoteCommand {
  static override paths = [['runs', 'show']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: 'show one run: state, agent, project, times, cost, changes, pull request, links',
    details: `
      GET /runs/{id}. By default \`label: value\` lines (what is not known yet is left out) and the prompt; \`--output
      json\` prints the API's answer (\`{"run","links"}\`) as one document, \`--output ndjson\` as one line.

      Exit codes: 0 shown, 2 no such run, 3 server unreachable, 4 token refused.
    `,
    examples: [
      ['A run', '$0 runs show run_0123456789ab'],
      ['Its pull request', '$0 runs show run_0123456789ab --output json | jq -r .run.prUrl'],
    ],
  });

  override output = outputOption('pretty');
  id = Option.String({ required: true, name: 'run-id' });

  protected async run(): Promise<number> {
    const answer = await this.client.request<GetRunResponse>('GET', `/runs/${encodeURIComponent(this.id)}`);
    if (this.output !== 'pretty') {
      this.line(answer);
      return EXIT.ok;
    }
    const { run } = answer;
    const name = await projectNames(this.client);
    const [title, state, ...rest] = runDetail(run, name(run.projectId), answer.links);
    this.line(title!, 'bold');
    this.line(state!, stateColour(run.state));
    for (const text of rest) this.line(text);
    return EXIT.ok;
  }
}
