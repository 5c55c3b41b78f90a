import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import { EXIT, RemoteCommand } from '../base-command.ts';
import { projectLabel } from '../client/project-label.ts';
import type { DispatchRunResponse, GetRunResponse } from '../client/responses.ts';

export class RunCommand extends RemoteCommand {
  static override paths = [['run']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: 'dispatch a one-shot run, tail its events as NDJSON, then exit',
    details: `
      Dispatches a run of \`<agent>\` against the project \`<project>\` (POST /runs), then follows its events (GET /runs/{id}/events) until the run ends.

      Prints one JSON object per line: \`{"type":"run.spawned","run","sandbox","links"}\` (\`links.dashboard\`: the run's dashboard page), then \`{"type":"run.event",…}\` for every event, and last \`{"type":"run.terminal","runId","state","failureReason","prUrl"}\`. \`--output pretty\` prints the same as short text lines: the run, its project as \`owner/repo (id)\` and its dashboard page first.

      Exit codes: 0 when the run succeeded, 1 when it failed or was cancelled, 2 for a rejected request, 3 when the server is unreachable, 4 when the token is refused, 130 when you detach with Ctrl-C (the run goes on).
    `,
    examples: [
      ['Run the shell agent on a project', '$0 run shell prj_0123456789ab -p "make test"'],
      [
        'Cap the spend and pin the workspace cut',
        '$0 run claude-code prj_0123456789ab -p "fix the flaky test" --max-cost-usd 2 --base-commit 0123456789abcdef0123456789abcdef01234567',
      ],
    ],
  });

  agent = Option.String({ required: true, name: 'agent' });
  project = Option.String({ required: true, name: 'project' });
  prompt = Option.String('-p,--prompt', { required: true, description: 'what the agent should do' });
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
    const body = {
      agent: this.agent,
      project: this.project,
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

    const followed = await this.tail(`/runs/${run.id}/events?follow=1`, (event) =>
      this.emit(
        { type: 'run.event', ...event },
        `${event.ts} ${event.kind}${typeof event.payload?.text === 'string' ? ` ${event.payload.text}` : ''}`,
      ),
    );
    if (followed === 'detached') {
      this.context.stderr.write(`svc: detached from ${run.id}; it goes on (svc run does not cancel it)\n`);
      return EXIT.interrupted;
    }
    const final = (await this.client.request<GetRunResponse>('GET', `/runs/${run.id}`)).run;
    this.emit(
      {
        type: 'run.terminal',
        runId: final.id,
        state: final.state,
        failureReason: final.failureReason,
        prUrl: final.prUrl,
      },
      `run ${final.id} ${final.state}${final.failureReason ? `: ${final.failureReason}` : ''}${final.prUrl ? ` — ${final.prUrl}` : ''}`,
    );
    return final.state === 'succeeded' ? EXIT.ok : EXIT.failed;
  }
}
