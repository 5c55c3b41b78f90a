// The real Claude Code CLI, as installed in svc's agent image, run in an image-backed sandbox
// (a container, a pod) against the scripted model server, reached through the sandbox's proxies:
// it writes and commits through its Bash tool, svc pushes and opens the PR, and cost and tokens
// come from its own result envelope. One scenario, every backend.
import type { ExecutionContext } from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHubStandIn } from './github-stand-in.ts';
import { PullRequestsStandIn } from './pull-requests-stand-in.ts';
import { ScriptedModel } from './scripted-model.ts';
import { startTestStack, waitForRunState } from './stack.ts';

/** Runs the scenario on a stack with `backendEnv`; answers the finished run. */
export async function claudeCommitsAndOpensPr(
  t: ExecutionContext,
  backendEnv: Record<string, string>,
  repo: string,
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
    'agents:\n  - name: claude\n    runtime: claude-code\n    command: ["claude"]\n    model: claude-sonnet-4-5\n',
  );
  github.createRepo('acme', repo);
  model.setScript([
    {
      toolUse: {
        name: 'Bash',
        input: {
          command:
            'printf "hello from a sandbox\\n" > greeting.txt && git add greeting.txt && git commit -q -m "Add greeting"',
          description: 'write and commit',
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
  const run = await waitForRunState(svc, body.run.id, undefined, 120_000);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.like(run, { commitsAhead: 1, filesChanged: 1, prState: 'open', model: 'claude-sonnet-4-5' });
  t.like(run, { tokensInput: 240, tokensOutput: 60 });
  t.true(run.costUsd > 0);
  t.is(
    github.git(join(github.root, 'acme', `${repo}.git`), 'show', `svc/${run.id}:greeting.txt`),
    'hello from a sandbox',
  );
  t.true(model.requests.some((request) => request.model === 'claude-sonnet-4-5'));
  return run;
}
