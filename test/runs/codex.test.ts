// The real OpenAI Codex CLI (@openai/codex from npm) as a run's agent, pointed (OPENAI_BASE_URL,
// as a custom Responses-API provider) at the scripted model server: it runs the scripted shell
// command, svc pushes the commit and records the tokens Codex reports.
import test from 'ava';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { ScriptedModel } from '../support/scripted-model.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';

const CODEX = resolve('node_modules/.bin/codex');

test('Codex runs the scripted command, commits, and svc pushes and opens the PR', async (t) => {
  if (!existsSync(CODEX)) return t.fail('the @openai/codex dev dependency is not installed');
  const github = new GitHubStandIn();
  github.createRepo('acme', 'codex-work');
  const forge = new PullRequestsStandIn();
  await forge.start();
  t.teardown(() => forge.stop());
  const model = new ScriptedModel([
    {
      toolUse: {
        name: 'Bash',
        input: {
          command:
            'printf "hi from codex\\n" > codex.txt && git add codex.txt && git commit -q -m "Codex change" && echo ' +
            'committed',
        },
      },
    },
    { text: 'Committed codex.txt.' },
  ]);
  await model.start();
  t.teardown(() => model.stop());
  const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
  writeFileSync(
    agentsFile,
    `agents:\n  - name: codex\n    runtime: codex\n    command: ["${CODEX}"]\n    model: gpt-test\n`,
  );
  process.env.OPENAI_BASE_URL = `${model.url}/v1`;
  process.env.OPENAI_API_KEY = 'sk-test-key';
  const svc = await startTestStack({
    env: { SVC_AGENTS_FILE: agentsFile, SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url },
  });
  t.teardown(() => svc.stop());
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/codex-work' } }))
    .body.project.id;
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'codex', project, prompt: 'Add codex.txt' } });
  const run = await waitForRunState(svc, body.run.id, undefined, 120_000);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.like(run, { commitsAhead: 1, filesChanged: 1, prState: 'open', costUsd: null });
  t.true(run.tokensInput >= 120 && run.tokensOutput >= 30, JSON.stringify(run));
  t.is(github.git(join(github.root, 'acme', 'codex-work.git'), 'show', `svc/${run.id}:codex.txt`), 'hi from codex');
  t.true(model.requests.some((request) => request.path === '/v1/responses' && request.tools.includes('exec_command')));
});
