// Attack: read secrets as a spectator. In public mode, a credential-less caller sees runs of the
// allowlisted projects, but not their prompts (unless the project opts in, and then with secrets
// masked), not svc's local paths, and no secret an agent printed: svc's own tokens by value, DB
// URL passwords, private keys and the common key formats by shape.
import test from 'ava';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { runEventLines, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import { redactSecrets } from '../../core/redaction.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'quiet');
github.createRepo('acme', 'chatty');
github.createRepo('acme', 'open-book', { files: { '.svc/config.yaml': 'spectators:\n  showPrompts: true\n' } });

const SHAPES = {
  github: 'ghp_0123456789abcdefghijABCDEFGHIJ012345',
  githubPat: 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz',
  openai: 'sk-proj-abcdefghijklmnop0123456789',
  anthropic: 'sk-ant-api03-abcdefghijklmnop0123456789',
  slack: 'xoxb-123456789012-abcdefghijkl',
  aws: 'AKIAIOSFODNN7EXAMPLE',
  gitlab: 'glpat-abcdefghij0123456789',
  google: 'AIzaSyA-abcdefghijklmnopqrstuvwxyz01234',
  dbPassword: 'hunter2-db-password',
  privateKey: 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC',
};

let svc: TestStack;
test.before(async () => {
  svc = await startTestStack({ env: { SVC_AUTH: 'public', SVC_PUBLIC_ALLOWLIST: 'acme' } });
});
test.after.always(() => svc?.stop());

function leakyPrompt(operatorToken: string): string {
  return [
    `echo operator=${operatorToken}`,
    `echo github=${SHAPES.github} pat=${SHAPES.githubPat}`,
    `echo openai=${SHAPES.openai} anthropic=${SHAPES.anthropic}`,
    `echo slack=${SHAPES.slack} aws=${SHAPES.aws} gitlab=${SHAPES.gitlab} google=${SHAPES.google}`,
    `echo db=postgres://svc:${SHAPES.dbPassword}@db.internal:5432/svc`,
    `printf -- '-----BEGIN RSA PRIVATE KEY-----\\n${SHAPES.privateKey}\\n-----END RSA PRIVATE KEY-----\\n'`,
    'echo here=$(pwd)',
  ].join('\n');
}

async function spectate(path: string) {
  return svc.request('GET', path, { token: null });
}

test.serial('spectators see no prompt, no local path and no secret of a run', async (t) => {
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/quiet' } })).body
    .project.id;
  const runId = (
    await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt: leakyPrompt(svc.token) } })
  ).body.run.id;
  await waitForRunState(svc, runId);
  const operatorView = (await runEventLines(svc, runId)).join('\n');
  t.true(operatorView.includes(SHAPES.github), 'the operator sees what the agent printed');

  const run = (await spectate(`/runs/${runId}`)).body.run;
  t.is(run.prompt, '[prompt hidden from spectators]');
  t.is(
    (await spectate('/runs')).body.runs.find((row: any) => row.id === runId).prompt,
    '[prompt hidden from spectators]',
  );
  const events = (await runEventLines(svc, runId, { token: null })).join('\n');
  t.true(events.includes('sandbox.started'), 'spectators do see the events');
  for (const [name, secret] of Object.entries({ ...SHAPES, operator: svc.token }))
    t.false(events.includes(secret), `${name} leaked to a spectator`);
  t.false(events.includes(svc.config.dataDir), 'no local path of svc');
  t.regex(events, /postgres:\/\/svc:\[redacted\]@db\.internal/);
});

test.serial('a project that opts in shows its prompts to spectators, secrets still masked', async (t) => {
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/open-book' } }))
    .body.project.id;
  const runId = (
    await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt: leakyPrompt(svc.token) } })
  ).body.run.id;
  await waitForRunState(svc, runId);
  const prompt: string = (await spectate(`/runs/${runId}`)).body.run.prompt;
  t.true(prompt.startsWith('echo operator=[redacted]'), prompt);
  for (const [name, secret] of Object.entries({ ...SHAPES, operator: svc.token }))
    t.false(prompt.includes(secret), `${name} leaked in the prompt`);
});

test.serial(
  "credentials as name=value and svc's secrets by value are masked for spectators and in the run log",
  async (t) => {
    const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/chatty' } }))
      .body.project.id;
    const prompt = [
      'echo pass=hunter2hunter2',
      'echo DB_PASS: hunter2hunter2',
      `echo operator-token ${svc.token}`,
      'echo the word bypass=kept-visible stays',
    ].join('\n');
    const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
    await waitForRunState(svc, runId);
    for (const path of [`/runs/${runId}/events?follow=0`, `/runs/${runId}/log`]) {
      const spectator = (await spectate(path)).text;
      t.regex(spectator, /pass=\[redacted\]/, path);
      t.false(spectator.includes('hunter2hunter2'), `${path}: a password leaked to a spectator`);
      t.false(spectator.includes(svc.token), `${path}: the operator token leaked to a spectator`);
      t.true(spectator.includes('bypass=kept-visible'), `${path}: a word that only ends in "pass" stays`);
      // The operator's own views never show svc's secrets either (what an agent printed otherwise stays).
      const operator = (await svc.request('GET', path)).text;
      t.false(operator.includes(svc.token), `${path}: the operator token in the operator's view`);
      t.true(operator.includes('operator-token [redacted]'), path);
    }
  },
);

test('the redactor keeps what is readable around a secret', (t) => {
  t.is(redactSecrets('Authorization: Bearer abcdefgh12345678'), 'Authorization: Bearer [redacted]');
  t.is(redactSecrets('mysql://root:pw123456@host/db'), 'mysql://root:[redacted]@host/db');
  t.is(redactSecrets('token=0123456789 and more'), 'token=[redacted] and more');
  t.is(redactSecrets('plain words stay'), 'plain words stay');
  t.is(redactSecrets('the value s3cr3t-v4lue', ['s3cr3t-v4lue']), 'the value [redacted]');
  t.is(redactSecrets('a short one: abc1234', ['abc1234']), 'a short one: abc1234', 'values under 8 characters stay');
  for (const [text, masked] of [
    ['pass=hunter2hunter2', 'pass=[redacted]'],
    ['MYSQL_PWD=hunter22', 'MYSQL_PWD=[redacted]'],
    ['{"password": "hunter2hunter2"}', '{"password": "[redacted]"}'],
    ['secret=abcdefgh123', 'secret=[redacted]'],
    ['credentials: s3cr3t99', 'credentials: [redacted]'],
    [`signing with whsec_${'ab'.repeat(32)}`, 'signing with [redacted]'],
    ['compass: northwest and bypass=everything', 'compass: northwest and bypass=everything'],
  ])
    t.is(redactSecrets(text), masked, text);
});
