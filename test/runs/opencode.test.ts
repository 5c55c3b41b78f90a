// The real OpenCode CLI (opencode-ai from npm) as a run's agent, pointed (ANTHROPIC_BASE_URL,
// passed to it as an inline provider override) at the scripted Anthropic-API server: it runs the
// scripted bash tool call, svc pushes the commit, and the tokens and cost OpenCode reports per step
// are summed on the run.
import test from 'ava';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { ScriptedModel } from '../support/scripted-model.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';

const OPENCODE = resolve('node_modules/.bin/opencode');

test('OpenCode runs the scripted tool call, commits, and svc pushes, opens the PR and records cost', async (t) => {
  if (!existsSync(OPENCODE)) return t.fail('the opencode-ai dev dependency is not installed');
  const github = new GitHubStandIn();
  github.createRepo('acme', 'opencode-work');
  const forge = new PullRequestsStandIn();
  await forge.start();
  t.teardown(() => forge.stop());
  const model = new ScriptedModel([
    {
      toolUse: {
        name: 'bash',
        input: {
          command:
            'printf "hi from opencode\\n" > opencode.txt && git add opencode.txt && git commit -q -m "OpenCode ' +
            'change" && echo committed',
          description: 'Commit opencode.txt',
        },
      },
    },
    { text: 'Committed opencode.txt.' },
  ]);
  await model.start();
  t.teardown(() => model.stop());
  const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
  writeFileSync(
    agentsFile,
    `agents:\n  - name: opencode\n    runtime: opencode\n    command: ["${OPENCODE}"]\n    provider: anthropic\n    ` +
      `model: claude-sonnet-4-5\n`,
  );
  process.env.ANTHROPIC_BASE_URL = model.url;
  process.env.ANTHROPIC_API_KEY = 'sk-ant-test';
  const svc = await startTestStack({
    env: { SVC_AGENTS_FILE: agentsFile, SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url },
  });
  t.teardown(() => svc.stop());
  const project = (
    await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/opencode-work' } })
  ).body.project.id;
  const { body } = await svc.request('POST', '/runs', {
    body: { agent: 'opencode', project, prompt: 'Add opencode.txt' },
  });
  const run = await waitForRunState(svc, body.run.id, undefined, 120_000);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.like(run, { commitsAhead: 1, filesChanged: 1, prState: 'open', costBasis: 'api' });
  // Two steps of the scripted usage (120 in / 30 out / 8 cache read / 4 cache write each).
  t.like(run, { tokensInput: 240, tokensOutput: 60, tokensCacheRead: 16, tokensCacheWrite: 8 });
  t.true(run.costUsd > 0, JSON.stringify(run));
  t.is(
    github.git(join(github.root, 'acme', 'opencode-work.git'), 'show', `svc/${run.id}:opencode.txt`),
    'hi from opencode',
  );
  const main = model.requests.filter((request) => request.tools.includes('bash'));
  t.true(
    main.length >= 2 && main.every((request) => request.model === 'claude-sonnet-4-5'),
    JSON.stringify(model.requests),
  );
  const events = (await svc.request('GET', `/runs/${run.id}/events`)).text
    .trim()
    .split('\n')
    .map((line: string) => JSON.parse(line));
  t.true(
    events.some(
      (event: { kind: string; payload: { name?: string } }) =>
        event.kind === 'tool_use' && event.payload.name === 'bash',
    ),
  );
});
