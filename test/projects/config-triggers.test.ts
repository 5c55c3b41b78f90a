// A project's .svc/ files through the API: validation problems, cron triggers carried by Temporal
// Schedules (created, fired, removed on refresh), a trigger dispatched by hand, and the project
// policy applied to dispatch.
import test from 'ava';
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { triggerScheduleId } from '../../activities/triggers/schedules.ts';
import { waitFor } from '../support/processes.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { runStdout, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'configured', {
  files: {
    '.svc/config.yaml': 'defaultRole: shell\nmaxCostUsd: 3\ndefaultPrompt: echo default prompt\n',
    '.svc/triggers.yaml': [
      '- id: nightly',
      '  kind: cron',
      '  cron: "0 3 * * *"',
      '  timezone: Europe/Paris',
      '  role: shell',
      '  seed: acme-0001',
      '  prompt: echo nightly for $SVC_RUN_ID',
      '  maxCostUsd: 1.5',
      '- id: hourly',
      '  kind: cron',
      '  cron: "0 * * * *"',
      '  role: shell',
    ].join('\n'),
  },
});
github.createRepo('acme', 'contextual', {
  files: { '.svc/config.yaml': 'defaultRole: shell\nrepoContext: |\n  Use pnpm, never npm.\n  Tests: pnpm test.\n' },
});
github.createRepo('acme', 'broken', {
  files: {
    '.svc/config.yaml': 'defaultRole: shell\nunknownKey: true\n',
    '.svc/triggers.yaml': '- id: Bad Id\n  kind: cron\n  cron: "* *"\n  role: shell\n',
  },
});

let svc: TestStack;
let client: Client;
let connection: Connection;
test.before(async () => {
  svc = await startTestStack();
  connection = await Connection.connect({ address: svc.stack.temporalAddress });
  client = new Client({ connection });
});
test.after.always(async () => {
  await connection?.close();
  await svc?.stop();
});

const register = async (name: string) =>
  (await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } })).body.project
    .id as string;

test.serial('svc-config returns the parsed files, and each broken file as a typed problem', async (t) => {
  const good = await register('configured');
  const config = await svc.request('GET', `/projects/${good}/svc-config`);
  t.is(config.status, 200);
  t.is(config.body.sourceFile, '.svc/config.yaml');
  t.is(config.body.defaults.maxCostUsd, 3);
  t.deepEqual(
    config.body.triggers.map((trigger: { id: string }) => trigger.id),
    ['nightly', 'hourly'],
  );
  t.deepEqual(config.body.errors, []);

  const bad = await register('broken');
  const broken = await svc.request('GET', `/projects/${bad}/svc-config`);
  t.is(broken.status, 200);
  t.deepEqual(
    broken.body.errors.map((problem: { file: string; code: string }) => [problem.file, problem.code]).sort(),
    [
      ['.svc/config.yaml', 'svc_config_schema_error'],
      ['.svc/triggers.yaml', 'svc_config_schema_error'],
    ],
  );
  t.regex(
    broken.body.errors.find((problem: { file: string }) => problem.file === '.svc/config.yaml').message,
    /unknownKey/,
  );

  // The environment file is the project's configuration too: its problem shows here, named.
  github.createRepo('acme', 'env-broken', { files: { '.svc/environment.yaml': 'setup: npm ci\nsetuptimeout: 1m\n' } });
  const envBroken = (await svc.request('GET', `/projects/${await register('env-broken')}/svc-config`)).body;
  t.deepEqual(envBroken.errors, [
    { file: '.svc/environment.yaml', code: 'svc_config_schema_error', message: 'unknown key setuptimeout' },
  ]);

  const blocked = await svc.request('POST', '/runs', { body: { agent: 'shell', project: bad, prompt: 'echo hi' } });
  t.is(blocked.status, 422);
  t.is(blocked.body.error.code, 'svc_config_invalid');
  const triggers = await svc.request('GET', `/projects/${bad}/triggers`);
  t.deepEqual(triggers.body.triggers, []);
  t.is(triggers.body.errors[0].code, 'svc_config_schema_error');
});

test.serial(
  'triggers are Temporal Schedules: next fire computed, fired by Temporal, dispatched by hand, removed on refresh',
  async (t) => {
    const projectId = (await svc.request('GET', '/projects')).body.projects.find((p: { gitUrl: string }) =>
      p.gitUrl.endsWith('/configured'),
    ).id as string;
    const listed = await svc.request('GET', `/projects/${projectId}/triggers`);
    t.is(listed.status, 200);
    const nightly = listed.body.triggers.find((trigger: { id: string }) => trigger.id === 'nightly');
    t.like(nightly, {
      kind: 'cron',
      cron: '0 3 * * *',
      seed: 'acme-0001',
      role: 'shell',
      timezone: 'Europe/Paris',
      lastFiredAt: null,
      lastRunId: null,
      parseError: null,
    });
    const next = new Date(nightly.nextFireAt);
    t.true(next.getTime() > Date.now());
    t.is(
      new Intl.DateTimeFormat('en-GB', {
        timeZone: 'Europe/Paris',
        hour: '2-digit',
        minute: '2-digit',
        hour12: false,
      }).format(next),
      '03:00',
      'next fire at 03:00 Paris time',
    );

    // By hand: POST …/triggers/{id}/run dispatches what the trigger says, as trigger "manual".
    const manual = await svc.request('POST', `/projects/${projectId}/triggers/nightly/run`);
    t.is(manual.status, 201, JSON.stringify(manual.body));
    t.like(manual.body.run, {
      trigger: 'manual',
      seedId: 'acme-0001',
      projectId,
      prompt: 'echo nightly for $SVC_RUN_ID',
    });
    t.is(manual.body.run.renderedAgentJson.maxCostUsd, 1.5, "the trigger's cap wins over the project default");
    t.is((await waitForRunState(svc, manual.body.run.id)).state, 'succeeded');
    const afterManual = (await svc.request('GET', `/projects/${projectId}/triggers`)).body.triggers.find(
      (trigger: { id: string }) => trigger.id === 'nightly',
    );
    t.is(afterManual.lastRunId, manual.body.run.id);
    t.truthy(afterManual.lastFiredAt);

    // By Temporal: trigger the schedule now instead of waiting for the hour.
    await client.schedule.getHandle(triggerScheduleId(projectId, 'hourly')).trigger();
    const fired = await waitFor(async () => {
      const row = (await svc.request('GET', `/projects/${projectId}/triggers`)).body.triggers.find(
        (trigger: { id: string }) => trigger.id === 'hourly',
      );
      return row.lastRunId ? row : undefined;
    }, 'the schedule to fire a run');
    const cronRun = await waitForRunState(svc, fired.lastRunId);
    t.like(cronRun, { trigger: 'cron', state: 'succeeded', prompt: 'echo default prompt', projectId });
    t.is(cronRun.renderedAgentJson.maxCostUsd, 3, 'the project default cap applies when nothing else sets one');

    // Removing a trigger from the file and refreshing deletes its schedule.
    github.commit(
      'acme',
      'configured',
      { '.svc/triggers.yaml': '- {id: nightly, kind: cron, cron: "0 3 * * *", role: shell}\n' },
      'drop hourly',
    );
    t.is((await svc.request('POST', `/projects/${projectId}/refresh`)).status, 200);
    await t.throwsAsync(client.schedule.getHandle(triggerScheduleId(projectId, 'hourly')).describe(), {
      instanceOf: ScheduleNotFoundError,
    });
    t.deepEqual(
      (await svc.request('GET', `/projects/${projectId}/triggers`)).body.triggers.map(
        (trigger: { id: string }) => trigger.id,
      ),
      ['nightly'],
    );

    t.is((await svc.request('POST', `/projects/${projectId}/triggers/hourly/run`)).status, 404);

    // Deleting the project deletes the remaining schedules.
    await svc.request('DELETE', `/projects/${projectId}`);
    await t.throwsAsync(client.schedule.getHandle(triggerScheduleId(projectId, 'nightly')).describe(), {
      instanceOf: ScheduleNotFoundError,
    });
  },
);

test.serial("every run of a project is given its repoContext; the run's prompt stays as asked", async (t) => {
  const project = await register('contextual');
  const prompt = 'printf "context: %s" "$SVC_REPO_CONTEXT"';
  const dispatched = await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } });
  t.is(dispatched.status, 201, dispatched.text);
  const run = await waitForRunState(svc, dispatched.body.run.id);
  t.like(run, { state: 'succeeded', prompt });
  t.deepEqual(await runStdout(svc, run.id), ['context: Use pnpm, never npm.', 'Tests: pnpm test.']);
});

test.serial('init and config migrate on the server clone', async (t) => {
  github.createRepo('acme', 'legacy', {
    files: {
      '.svc/defaults.json': JSON.stringify({
        defaultRole: 'shell',
        preview: { type: 'server', command: 'npm start', port: 3000 },
      }),
    },
  });
  const legacy = await register('legacy');
  const warnings = (await svc.request('GET', `/projects/${legacy}/svc-config`)).body.warnings;
  t.is(warnings[0].code, 'svc_config_deprecated');
  const migrated = await svc.request('POST', `/projects/${legacy}/config-migrate`);
  t.is(migrated.status, 200);
  t.deepEqual(migrated.body.files.sort(), ['.svc/config.yaml', '.svc/preview.yaml']);
  const after = (await svc.request('GET', `/projects/${legacy}/svc-config`)).body;
  t.deepEqual(after.warnings, []);
  t.is(after.defaults.preview.port, 3000);
  t.is((await svc.request('POST', `/projects/${legacy}/config-migrate`)).status, 400, 'nothing left to migrate');

  github.createRepo('acme', 'fresh');
  const fresh = await register('fresh');
  const init = await svc.request('POST', `/projects/${fresh}/init`, { body: { defaultRole: 'shell' } });
  t.is(init.status, 201);
  t.deepEqual(init.body, { files: ['.svc/triggers.yaml', '.svc/config.yaml'], defaultRole: 'shell' });
  t.is((await svc.request('POST', `/projects/${fresh}/init`, { body: {} })).status, 400, 'never overwrites');
  t.is((await svc.request('POST', `/projects/${fresh}/refresh`)).status, 200);
  t.is(
    (await svc.request('GET', `/projects/${fresh}/svc-config`)).body.defaults.defaultRole,
    'shell',
    'untracked .svc/ files survive a refresh',
  );
  t.is((await svc.request('POST', `/projects/${fresh}/init`, { body: { defaultRole: 'nobody' } })).status, 404);
});
