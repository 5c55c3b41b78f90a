import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import type { z } from 'zod';
import type { listRunsResponse } from '../../../api/routes/runs.schema.ts';
import { RUN_STATES } from '../../../core/run-states.ts';
import { EXIT, outputOption, RemoteCommand, table } from '../../base-command.ts';
import { resolveProject } from '../../client/projects.ts';
import { stateColour } from '../../terminal-text.ts';
import { projectNames } from './project-names.ts';
import { RUN_TABLE_HEADERS, runRow } from './run-text.ts';

type ListRuns = z.output<typeof listRunsResponse>;

/** `active` is queued or running. */
const STATE_WORDS = [...RUN_STATES, 'active'] as const;

export class RunsListCommand extends RemoteCommand {
  static override paths = [['runs', 'list'], ['runs']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: 'list runs, newest first',
    details: `
      GET /runs. A table by default: \`ID STATE AGENT PROJECT CREATED COST PROMPT\` (the project as owner/repo, the
      prompt's first line), and a last line saying how many more there are. \`--output json\` prints one JSON array of
      runs, \`--output ndjson\` one run per line.

      \`--state\` takes one or more of ${RUN_STATES.join(', ')} and active (queued or running), comma-separated.
      \`--project\` takes a project id or owner/repo; a project and an agent cannot be combined.

      Exit codes: 0 listed (even none), 2 a bad filter or an unknown project, 3 server unreachable, 4 token refused.
    `,
    examples: [
      ['The latest runs', '$0 runs list'],
      ['What is running now', '$0 runs list --state active'],
      ['Failed runs of one repository', '$0 runs list --project acme/widget --state failed'],
      ['Ids of the last 5 shell runs', "$0 runs list --agent shell --limit 5 --output json | jq -r '.[].id'"],
    ],
  });

  override output = outputOption('pretty');
  state = Option.String('--state', { description: `only these states, comma-separated: ${STATE_WORDS.join(', ')}` });
  project = Option.String('--project', { description: 'only this project: its id (prj_…) or owner/repo' });
  agent = Option.String('--agent', { description: 'only runs of this agent' });
  limit = Option.String('--limit', '20', {
    description: 'at most this many runs, 1 to 500 (default 20)',
    validator: t.cascade(t.isNumber(), [t.isInteger(), t.isInInclusiveRange(1, 500)]),
  });

  protected async run(): Promise<number> {
    const query = new URLSearchParams({ limit: String(this.limit) });
    if (this.state) query.set('state', states(this.state).join(','));
    if (this.project && this.agent) throw new UsageError('filter by --project or by --agent, not both');
    if (this.project) query.set('project', await resolveProject(this.client, this.project));
    if (this.agent) query.set('agent', this.agent);
    const answer = await this.client.request<ListRuns>('GET', `/runs?${query}`);
    if (this.output !== 'pretty') {
      this.list(answer.runs);
      return EXIT.ok;
    }
    if (answer.runs.length === 0) {
      this.line('(no runs)');
      return EXIT.ok;
    }
    const name = await projectNames(this.client);
    const now = Date.now();
    const [header, ...rows] = table(
      RUN_TABLE_HEADERS,
      answer.runs.map((run) => runRow(run, name, now)),
    ).split('\n');
    this.line(header!, 'bold');
    rows.forEach((row, index) => this.line(row, stateColour(answer.runs[index]!.state)));
    if (answer.total > answer.runs.length)
      this.line(`showing ${answer.runs.length} of ${answer.total} runs (--limit for more)`, 'dim');
    return EXIT.ok;
  }
}

/** `--state failed,active` → the API's states; a word it does not know is a usage error. */
function states(words: string): string[] {
  const wanted = words.split(',').map((word) => word.trim());
  const unknown = wanted.filter((word) => !(STATE_WORDS as readonly string[]).includes(word));
  if (unknown.length) throw new UsageError(`unknown state ${unknown.join(', ')}: use ${STATE_WORDS.join(', ')}`);
  return [...new Set(wanted.flatMap((word) => (word === 'active' ? ['queued', 'running'] : [word])))];
}
