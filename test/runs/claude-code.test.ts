// The real Claude Code CLI (@anthropic-ai/claude-code from npm) as a run's agent, pointed at a
// scripted model server: it really writes and commits through its Bash tool, and svc pushes,
// opens the PR, and reads cost and tokens from Claude Code's own result envelope.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { ScriptedModel } from '../support/scripted-model.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { runEvents, startTestStack, waitForRunState } from '../support/stack.ts';

const CLAUDE = resolve('node_modules/.bin/claude');
const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
const model = new ScriptedModel([]);
const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
writeFileSync(
  agentsFile,
  `agents:\n  - name: claude\n    runtime: claude-code\n    command: ["${CLAUDE}"]\n    model: claude-sonnet-4-5\n   ` +
    ` maxCostUsd: 5\n`,
);

test.before(async () => {
  await forge.start();
  await model.start();
});
test.after.always(async () => {
  await forge.stop();
  await model.stop();
});

for (const leg of DATABASE_LEGS) {
  test.serial(
    `${leg}: Claude Code writes and commits; svc pushes, opens the PR and records cost and tokens`,
    async (t) => {
      if (!postgresOrSkip(t, leg)) return;
      const repo = `claude-${leg}`;
      github.createRepo('acme', repo);
      model.setScript([
        {
          toolUse: {
            name: 'Bash',
            input: {
              command:
                'printf "hello from claude\\n" > greeting.txt && git add greeting.txt && git commit -q -m "Add ' +
                'greeting" && echo committed',
              description: 'write and commit',
            },
          },
        },
        { text: 'I added greeting.txt and committed it.' },
      ]);
      const svc = await startTestStack({
        database: leg,
        env: {
          SVC_AGENTS_FILE: agentsFile,
          SVC_GIT_TOKEN: 'ghp_test',
          SVC_GITHUB_API_URL: forge.url,
          ANTHROPIC_BASE_URL: model.url,
          ANTHROPIC_API_KEY: 'sk-test-key',
        },
      });
      t.teardown(() => svc.stop());
      // The runtime reads the model credentials from the worker's environment.
      process.env.ANTHROPIC_BASE_URL = model.url;
      process.env.ANTHROPIC_API_KEY = 'sk-test-key';
      const project = (await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${repo}` } }))
        .body.project.id;

      const { body } = await svc.request('POST', '/runs', {
        body: { agent: 'claude', project, prompt: 'Add a greeting file', maxCostUsd: 1.25 },
      });
      t.is(body.run.renderedAgentJson.maxCostUsd, 1.25);
      const run = await waitForRunState(svc, body.run.id, undefined, 120_000);
      t.is(run.state, 'succeeded', JSON.stringify(run));
      t.like(run, {
        commitsAhead: 1,
        filesChanged: 1,
        insertions: 1,
        deletions: 0,
        prState: 'open',
        costBasis: 'api',
        model: 'claude-sonnet-4-5',
      });
      t.regex(run.prUrl, new RegExp(`/acme/${repo}/pull/\\d+$`));
      t.is(
        github.git(join(github.root, 'acme', `${repo}.git`), 'show', `svc/${run.id}:greeting.txt`),
        'hello from claude',
      );
      // Two model turns of the scripted usage, as Claude Code itself summed them in its result line.
      t.like(run, { tokensInput: 240, tokensOutput: 60, tokensCacheRead: 16, tokensCacheWrite: 8 });
      t.true(run.costUsd > 0);
      const events = await runEvents(svc, run.id);
      t.like(
        events.find((event) => event.kind === 'tool_use'),
        { payload: { name: 'Bash' } },
      );
      t.true(
        events.some(
          (event) => event.kind === 'state_change' && event.payload.type === 'result' && event.stream === 'stdout',
        ),
      );
      t.true(model.requests.some((request) => request.model === 'claude-sonnet-4-5' && request.tools.includes('Bash')));
    },
  );
}

test.serial('a model provider that fails the turn makes the run fail with provider_error', async (t) => {
  github.createRepo('acme', 'claude-overloaded');
  model.setScript([{ error: { status: 400, type: 'invalid_request_error', message: 'scripted provider failure' } }]);
  const svc = await startTestStack({ env: { SVC_AGENTS_FILE: agentsFile } });
  t.teardown(() => svc.stop());
  process.env.ANTHROPIC_BASE_URL = model.url;
  process.env.ANTHROPIC_API_KEY = 'sk-test-key';
  const project = (
    await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/claude-overloaded' } })
  ).body.project.id;
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'claude', project, prompt: 'anything' } });
  const run = await waitForRunState(svc, body.run.id, undefined, 120_000);
  t.like(run, { state: 'failed', failureReason: 'provider_error' });
});
