// A project's secrets: set, replaced, listed (names only) and removed through the API; sealed at
// rest in both databases; handed to the project's runs' agents as environment variables, and to
// nobody else: masked in the run's events, its log and a spectator's view, absent from the run's
// Temporal history, and not given to a run of another project.
import test from 'ava';
import { createHash } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { ProjectSecretEntity } from '../../db/entities/index.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { runEventLines, runEvents, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'vault');
github.createRepo('acme', 'other');

const VALUE = 'reg-token-4f9a2c71e0b8d6';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let svc: TestStack;
test.before(async () => {
  // Public mode: spectators read the runs of acme's projects.
  svc = await startTestStack({ env: { SVC_AUTH: 'public', SVC_PUBLIC_ALLOWLIST: 'acme' } });
});
test.after.always(() => svc?.stop());

async function register(stack: TestStack, name: string): Promise<string> {
  const created = await stack.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } });
  if (created.status !== 201) throw new Error(created.text);
  return created.body.project.id;
}

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: set, replace, list without values, remove; sealed at rest`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const stack = leg === 'sqlite' ? svc : await startTestStack({ database: 'postgresql' });
    if (leg !== 'sqlite') t.teardown(() => stack.stop());
    github.createRepo('acme', `store-${leg}`);
    const project = await register(stack, `store-${leg}`);
    const path = `/projects/${project}/secrets`;

    // Bad input: a clear envelope, nothing stored.
    const refusals: [string, unknown][] = [
      ['lower_case', { value: 'x' }],
      ['9LIVES', { value: 'x' }],
      ['SVC_API_TOKEN', { value: 'x' }],
      ['PATH', { value: 'x' }],
      ['LD_PRELOAD', { value: 'x' }],
      ['GOOD', { value: '' }],
      ['GOOD', { value: 'x'.repeat(64 * 1024 + 1) }],
      ['GOOD', { value: 'x', scope: 'build' }],
      ['GOOD', { value: 'x', extra: true }],
      ['GOOD', {}],
    ];
    for (const [name, body] of refusals) {
      const refused = await stack.request('PUT', `${path}/${name}`, { body });
      t.is(refused.status, 400, `${name} ${JSON.stringify(body).slice(0, 80)}: ${refused.text.slice(0, 200)}`);
      t.is(refused.body.error.code, 'validation_error');
    }
    const reserved = await stack.request('PUT', `${path}/SVC_RUN_ID`, { body: { value: 'x' } });
    t.regex(reserved.body.error.hint, /"name": is set by svc in the sandbox/);
    t.deepEqual((await stack.request('GET', path)).body, { secrets: [] });
    t.is(
      (await stack.request('PUT', `/projects/prj_nosuchproject/secrets/GOOD`, { body: { value: 'x' } })).status,
      404,
    );

    const created = await stack.request('PUT', `${path}/NPM_TOKEN`, { body: { value: VALUE } });
    t.is(created.status, 201, created.text);
    t.like(created.body.secret, { name: 'NPM_TOKEN', scope: 'run' });
    t.false(created.text.includes(VALUE), 'the value is never answered');
    const replaced = await stack.request('PUT', `${path}/NPM_TOKEN`, { body: { value: `${VALUE}-2`, scope: 'setup' } });
    t.is(replaced.status, 200, replaced.text);
    t.is(replaced.body.secret.createdAt, created.body.secret.createdAt, 'a replacement keeps its creation time');
    t.is((await stack.request('PUT', `${path}/ANOTHER_KEY`, { body: { value: VALUE } })).status, 201);

    const listed = await stack.request('GET', path);
    t.deepEqual(
      listed.body.secrets.map(({ name, scope }: { name: string; scope: string }) => ({ name, scope })),
      [
        { name: 'ANOTHER_KEY', scope: 'run' },
        { name: 'NPM_TOKEN', scope: 'setup' },
      ],
    );
    t.false(listed.text.includes(VALUE), 'a list holds no value');

    // At rest: the rows hold sealed forms, neither value nor its base64.
    const rows = await stack.stack.readModel.em().find(ProjectSecretEntity, { projectId: project });
    t.is(rows.length, 2);
    for (const row of rows) {
      t.regex(row.sealed, /^v1:/);
      t.false(JSON.stringify(row).includes(VALUE));
      t.false(row.sealed.includes(Buffer.from(VALUE).toString('base64').slice(0, 16)));
    }

    t.is((await stack.request('DELETE', `${path}/NPM_TOKEN`)).status, 204);
    const gone = await stack.request('DELETE', `${path}/NPM_TOKEN`);
    t.is(gone.status, 404);
    t.is(gone.body.error.code, 'not_found');
    t.deepEqual(
      (await stack.request('GET', path)).body.secrets.map((secret: { name: string }) => secret.name),
      ['ANOTHER_KEY'],
    );

    // A spectator, or no credential at all in token mode, never reads the list.
    t.true([401, 403].includes((await stack.request('GET', path, { token: null })).status));

    // A deleted project takes its secrets with it.
    t.is((await stack.request('DELETE', `/projects/${project}`)).status, 200);
    t.is(await stack.stack.readModel.em().count(ProjectSecretEntity, { projectId: project }), 0);
  });
}

test.serial("a run's agent gets its project's run secrets, masked everywhere it could show", async (t) => {
  const project = await register(svc, 'vault');
  const other = await register(svc, 'other');
  t.is(
    (await svc.request('PUT', `/projects/${project}/secrets/REGISTRY_TOKEN`, { body: { value: VALUE } })).status,
    201,
  );
  const setupOnly = 'setup-only-93c1d7aa5e';
  await svc.request('PUT', `/projects/${project}/secrets/SETUP_ONLY`, { body: { value: setupOnly, scope: 'setup' } });

  // The agent proves it holds the value (its hash), prints it on both streams, and fails.
  const prompt = [
    'printf %s "$REGISTRY_TOKEN" | sha256sum | cut -c1-64',
    'echo "token=$REGISTRY_TOKEN in a line"',
    'echo "{\\"key\\": \\"$REGISTRY_TOKEN\\"}"',
    'echo "stderr $REGISTRY_TOKEN" >&2',
    'echo "setup:${SETUP_ONLY:-unset}"',
    'exit 3',
  ].join('; ');
  const dispatched = await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } });
  t.is(dispatched.status, 201, dispatched.text);
  const runId = dispatched.body.run.id;
  const run = await waitForRunState(svc, runId);
  t.is(run.state, 'failed');

  const events = await runEvents(svc, runId);
  const stdout = events.filter((event) => event.stream === 'stdout').map((event) => event.payload.text);
  t.true(stdout.includes(sha256(VALUE)), `the agent saw the value: ${stdout.join(' | ')}`);
  t.true(stdout.includes('token=[redacted] in a line'), stdout.join(' | '));
  t.true(stdout.includes('setup:unset'), 'a setup secret reaches no run');

  const views = {
    events: (await runEventLines(svc, runId)).join('\n'),
    log: (await svc.request('GET', `/runs/${runId}/log`)).text,
    run: (await svc.request('GET', `/runs/${runId}`)).text,
    spectatorEvents: (await runEventLines(svc, runId, { token: null })).join('\n'),
    spectatorLog: (await svc.request('GET', `/runs/${runId}/log`, { token: null })).text,
  };
  t.true(views.log.includes('[redacted]'), views.log);
  t.true(views.spectatorEvents.length > 0 && views.spectatorLog.length > 0);
  for (const [view, text] of Object.entries(views)) t.false(text.includes(VALUE), `${view} shows no value`);
  // The stored rows too: masked at ingest, not only when read.
  const stored = await svc.stack.readModel
    .em()
    .getConnection()
    .execute('select payload from run_events where run_id = ?', [runId]);
  t.false(JSON.stringify(stored).includes(VALUE), 'no stored event holds the value');

  // Temporal carries references only: the value is in no event of the run's history.
  const connection = await Connection.connect({ address: svc.stack.temporalAddress });
  t.teardown(() => connection.close());
  const history = await new Client({ connection }).workflow.getHandle(runId).fetchHistory();
  // Every payload's data (input, results, heartbeat details, failures), as text.
  const text = JSON.stringify(history, (key, value) => {
    if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
    if (key === 'data' && typeof value === 'string') return Buffer.from(value, 'base64').toString('utf8');
    return value;
  });
  t.true(text.includes('REGISTRY_TOKEN'), 'the history is readable (the prompt names the variable)');
  t.false(text.includes(VALUE), 'no value in the workflow history');
  t.false(text.includes(setupOnly));

  // A run of another project gets nothing of this one's.
  const elsewhere = await svc.request('POST', '/runs', {
    body: { agent: 'shell', project: other, prompt: 'echo "other:${REGISTRY_TOKEN:-unset}"' },
  });
  t.is((await waitForRunState(svc, elsewhere.body.run.id)).state, 'succeeded');
  const otherOut = (await runEvents(svc, elsewhere.body.run.id)).map((event) => event.payload?.text);
  t.true(otherOut.includes('other:unset'), otherOut.join(' | '));
});
