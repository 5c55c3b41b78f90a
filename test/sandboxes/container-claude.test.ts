// The real Claude Code CLI, as installed in svc's agent image, run in a container against the
// scripted model server (reached through the sandbox's proxies): it writes and commits through its
// Bash tool, svc pushes and opens the PR, and cost and tokens come from its own result envelope.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startContainerEngine, waitUntilRemoved, type TestContainerEngine } from '../support/container-engine.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { ScriptedModel } from '../support/scripted-model.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
const model = new ScriptedModel([]);
let engine: TestContainerEngine;
const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
// `claude` as the image has it on its PATH: nothing of the host's toolchain is in a container.
writeFileSync(
  agentsFile,
  'agents:\n  - name: claude\n    runtime: claude-code\n    command: ["claude"]\n    model: claude-sonnet-4-5\n',
);

test.before(async () => {
  engine = await startContainerEngine();
  await forge.start();
  await model.start();
});
test.after.always(async () => {
  await forge.stop();
  await model.stop();
  await engine?.stop();
});

test.serial('Claude Code in a container writes and commits; svc pushes, opens the PR, records cost', async (t) => {
  github.createRepo('acme', 'claude-boxed');
  model.setScript([
    {
      toolUse: {
        name: 'Bash',
        input: {
          command:
            'printf "hello from a container\\n" > greeting.txt && git add greeting.txt && git commit -q -m "Add greeting"',
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
      ...engine.env,
      SVC_AGENTS_FILE: agentsFile,
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'sk-test-key',
    },
  });
  t.teardown(() => svc.stop());
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/claude-boxed' } }))
    .body.project.id;
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'claude', project, prompt: 'Add a greeting' } });
  const run = await waitForRunState(svc, body.run.id, undefined, 120_000);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.regex(run.sandboxRunId, /^container:/);
  t.like(run, { commitsAhead: 1, filesChanged: 1, prState: 'open', model: 'claude-sonnet-4-5' });
  t.like(run, { tokensInput: 240, tokensOutput: 60 });
  t.true(run.costUsd > 0);
  t.is(
    github.git(join(github.root, 'acme', 'claude-boxed.git'), 'show', `svc/${run.id}:greeting.txt`),
    'hello from a container',
  );
  t.true(model.requests.some((request) => request.model === 'claude-sonnet-4-5'));
  // The finalizer's container ends after it posted its result: gone before the engine is.
  for (const name of [`svc-${run.id}`, `svc-${run.id}-finalize`]) await waitUntilRemoved(engine.engine, name, 20_000);
});
