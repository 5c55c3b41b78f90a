// The real Claude Code CLI in a sandbox of any backend (in an image: as the image has it) against
// the scripted model server, reached through the sandbox's proxies: it writes and commits through
// its Bash tool, is steered while that runs (svc's relay writes the message into its input, Claude
// Code hands it to the model with the tool's result), svc pushes and opens the PR, and cost and
// tokens come from its own result envelope. One scenario, every backend: dispatch, watch, steer,
// finalize, PR.
import type { ExecutionContext } from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHubStandIn } from './github-stand-in.ts';
import { PullRequestsStandIn } from './pull-requests-stand-in.ts';
import { ScriptedModel } from './scripted-model.ts';
import { waitFor } from './processes.ts';
import { runEvents, startTestStack, waitForRunState } from './stack.ts';

const STEER = 'Also add a farewell file, please.';

/** Runs the scenario on a stack with `backendEnv`, the agent's command `claude`; answers the finished run. */
export async function claudeCommitsAndOpensPr(
  t: ExecutionContext,
  backendEnv: Record<string, string>,
  repo: string,
  claude = 'claude',
): Promise<Record<string, any>> {
  const github = new GitHubStandIn();
  const forge = new PullRequestsStandIn();
  const model = new ScriptedModel([]);
  await forge.start();
  t.teardown(() => forge.stop());
  await model.start();
  t.teardown(() => model.stop());
  const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
  // `claude` as the image has it on its PATH: nothing of the host's toolchain is in an image sandbox.
  writeFileSync(
    agentsFile,
    `agents:\n  - name: claude\n    runtime: claude-code\n    command: ["${claude}"]\n    model: claude-sonnet-4-5\n`,
  );
  github.createRepo('acme', repo);
  model.setScript([
    {
      toolUse: {
        name: 'Bash',
        input: {
          // Long enough to be steered while it runs.
          command:
            'sleep 4 && printf "hello from a sandbox\\n" > greeting.txt && git add greeting.txt && git commit -q -m ' +
            '"Add greeting"',
          description: 'write and commit',
        },
      },
    },
    {
      toolUse: {
        name: 'Bash',
        input: {
          command: 'echo bye > farewell.txt && git add farewell.txt && git commit -q -m "Add farewell"',
          description: 'as steered',
        },
      },
    },
    { text: 'Done.' },
  ]);
  // The runtime reads the model credentials from the worker's environment.
  process.env.ANTHROPIC_BASE_URL = model.url;
  process.env.ANTHROPIC_API_KEY = 'sk-test-key';
  const svc = await startTestStack({
    env: {
      ...backendEnv,
      SVC_AGENTS_FILE: agentsFile,
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'sk-test-key',
    },
  });
  t.teardown(() => svc.stop());
  const gitUrl = `https://github.com/acme/${repo}`;
  const project = (await svc.request('POST', '/projects', { body: { gitUrl } })).body.project.id;
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'claude', project, prompt: 'Add a greeting' } });
  const runId = body.run.id;
  // Watch until the agent works (its first tool call runs for 4 s), then steer it.
  await waitFor(
    async () => (await runEvents(svc, runId)).some((event) => event.kind === 'tool_use'),
    'the agent at work',
    120_000,
  );
  t.is((await svc.request('POST', `/runs/${runId}/steer`, { body: { body: STEER, priority: 'high' } })).status, 200);
  const run = await waitForRunState(svc, runId, undefined, 120_000);
  const ended = (await runEvents(svc, runId)).filter((event) => /^(finalize|reap|run\.|log\.stderr)/.test(event.kind));
  t.is(run.state, 'succeeded', JSON.stringify({ run, ended }));
  t.like(run, { commitsAhead: 2, filesChanged: 2, prState: 'open', model: 'claude-sonnet-4-5' });
  // The message reached the model inside the running turn, with the tool's result.
  const calls = model.requests.filter((request) => request.tools.includes('Bash'));
  const steered = calls.findIndex((request) => request.lastMessage.includes(STEER));
  t.is(steered, 1, JSON.stringify(calls.map((request) => request.lastMessage.slice(0, 300))));
  t.true(calls[steered]!.lastMessage.includes('tool_result'));
  const events = await runEvents(svc, runId);
  t.is(
    events.find((event) => event.kind === 'sandbox.started')?.payload.isolation,
    backendEnv.SVC_SANDBOX ?? 'bubblewrap',
  );
  t.true(events.some((event) => event.kind === 'steer.delivered'));
  t.true(events.some((event) => event.kind === 'agent.user_message' && event.payload.text.includes(STEER)));
  // Three model calls in one turn: Claude Code's own sums.
  t.like(run, { tokensInput: 360, tokensOutput: 90 });
  t.true(run.costUsd > 0);
  t.is(
    github.git(join(github.root, 'acme', `${repo}.git`), 'show', `svc/${run.id}:greeting.txt`),
    'hello from a sandbox',
  );
  t.true(model.requests.some((request) => request.model === 'claude-sonnet-4-5'));
  return run;
}
