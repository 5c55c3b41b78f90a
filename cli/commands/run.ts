import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { EXIT, exitForRunState } from '../base-command.ts';
import { projectLabel } from '../client/project-label.ts';
import { resolveProject } from '../client/projects.ts';
import type { DispatchRunResponse } from '../client/responses.ts';
import { stateColour } from '../terminal-text.ts';
import { RunStreamCommand } from './runs/run-stream-command.ts';

export class RunCommand extends RunStreamCommand {
  static override paths = [['run']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: 'dispatch a one-shot run, tail its events as NDJSON, then exit',
    details: `
      Dispatches a run of \`<agent>\` (POST /runs), then follows its events (GET /runs/{id}/events) until the run ends.
      The project is a project id (prj_…) or owner/repo, as the second argument or \`--project\`; without one the run
      starts in an empty workspace.

      Prints one JSON object per line: \`{"type":"run.spawned","run","sandbox","links"}\` (\`links.dashboard\`: the
      run's dashboard page), then \`{"type":"run.event",…}\` for every event, and last
      \`{"type":"run.terminal","runId","state","failureReason","prUrl"}\`. \`--output json\` prints the same records as
      one JSON array when the run ends; \`--output pretty\` as text lines: the run, its project as \`owner/repo (id)\`
      and its dashboard page first. The agent's escape sequences are shown as text unless \`--raw\`.

      Exit codes: 0 when the run succeeded, 1 when it failed, 5 when it was cancelled, 2 for a rejected request, 3 when
      the server is unreachable, 4 when the token is refused, 130 when you detach with Ctrl-C (the run goes on: \`svc
      runs logs <id> -f\` attaches again).
    `,
    examples: [
      ['Run the shell agent on a project', '$0 run shell acme/widget -p "make test"'],
      ['The same, by project id, as text', '$0 run shell --project prj_0123456789ab -p "make test" --output pretty'],
      ['A run without a project', '$0 run shell -p "uname -a"'],
      [
        'Cap the spend and pin the workspace cut',
        '$0 run claude-code prj_0123456789ab -p "fix the flaky test" --max-cost-usd 2 --base-commit ' +
          '0123456789abcdef0123456789abcdef01234567',
      ],
    ],
  });

  agent = Option.String({ required: true, name: 'agent' });
  projectArgument = Option.String({ required: false, name: 'project' });
  project = Option.String('--project', { description: 'the project: its id (prj_…) or owner/repo' });
  // Not required by the parser: a missing prompt is a usage error that says so, not "command not found".
  prompt = Option.String('-p,--prompt', { description: 'what the agent should do (required)' });
  trigger = Option.String('--trigger', 'cli', { description: 'the trigger label recorded on the run (default cli)' });
  provider = Option.String('--provider', { description: 'override the agent provider' });
  model = Option.String('--model', { description: 'override the agent model' });
  maxCostUsd = Option.String('--max-cost-usd', {
    description: 'spend cap for this run, in USD',
    validator: t.cascade(t.isNumber(), [t.isPositive()]),
  });
  seed = Option.String('--seed', { description: 'link the run to an issue (seed id)' });
  baseCommit = Option.String('--base-commit', {
    description: 'pin the workspace cut to this 40-hex commit',
    validator: t.cascade(t.isString(), [t.matchesRegExp(/^[0-9a-f]{40}$/)]),
  });

  protected async run(): Promise<number> {
    if (this.prompt === undefined) throw new UsageError('say what the agent should do: -p, --prompt <text>');
    if (this.projectArgument && this.project && this.projectArgument !== this.project)
      throw new UsageError('name the project once: as the second argument or --project');
    const named = this.project ?? this.projectArgument;
    const body = {
      agent: this.agent,
      ...(named ? { project: await resolveProject(this.client, named) } : {}),
      prompt: this.prompt,
      trigger: this.trigger,
      ...(this.provider ? { providerOverride: this.provider } : {}),
      ...(this.model ? { modelOverride: this.model } : {}),
      ...(this.maxCostUsd !== undefined ? { maxCostUsd: this.maxCostUsd } : {}),
      ...(this.seed ? { seedId: this.seed } : {}),
      ...(this.baseCommit ? { baseCommit: this.baseCommit } : {}),
    };
    const { run, sandbox, links } = await this.client.request<DispatchRunResponse>('POST', '/runs', body);
    const project = this.output === 'pretty' && run.projectId ? await projectLabel(this.client, run.projectId) : null;
    this.emit(
      { type: 'run.spawned', run, sandbox, links },
      [
        `run ${run.id} dispatched: agent ${run.agentName}${project ? `, project ${project}` : ''}`,
        `dashboard: ${links.dashboard}`,
        ...(links.temporalUi ? [`temporal: ${links.temporalUi}`] : []),
      ].join('\n'),
    );

    const final = await this.printEvents(run.id, true, (event) => ({ type: 'run.event', ...event }));
    if (final === 'detached') {
      this.context.stderr.write(
        `svc: detached from ${run.id}; it goes on (svc run does not cancel it; \`svc runs logs ${run.id} -f\` ` +
          `attaches again)\n`,
      );
      return EXIT.interrupted;
    }
    this.emit(
      {
        type: 'run.terminal',
        runId: final.id,
        state: final.state,
        failureReason: final.failureReason,
        prUrl: final.prUrl,
      },
      `run ${final.id} ${final.state}${final.failureReason ? `: ${final.failureReason}` : ''}` +
        (final.prUrl ? ` — ${final.prUrl}` : ''),
      stateColour(final.state),
    );
    return exitForRunState(final.state);
  }
}
