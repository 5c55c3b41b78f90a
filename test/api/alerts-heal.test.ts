// POST /alerts/heal end to end: real Sentry and Grafana webhook samples, projects whose
// `.svc/config.yaml` `healer` takes them, healer runs dispatched through the real workflow path,
// cooldowns and retry limits kept by Temporal across a restart of API and worker.
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { join } from 'node:path';
import { healerWorkflowId } from '../../core/healer.ts';
import { RELEASE_HISTORIES } from '../support/histories.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const sample = (name: string) => JSON.parse(readFileSync(`test/fixtures/alerts/${name}.json`, 'utf8'));
// The healer agent prints its prompt, so the run's log shows what it was asked.
const healerAgent = { '.svc/agents/healer.yaml': 'runtime: command\ncommand: ["cat"]\n' };

const github = new GitHubStandIn();
github.createRepo('acme', 'shop', {
  files: {
    ...healerAgent,
    '.svc/config.yaml': [
      'healer:',
      '  enabled: true',
      '  cooldownMinutes: 30',
      '  maxRetries: 2',
      '  projectMapping:',
      '    - source: sentry',
      '      culprit: shop.checkout',
    ].join('\n'),
  },
});
// No mapping: takes the alerts whose source project is named like the repository.
github.createRepo('acme', 'metrics-app', {
  files: {
    ...healerAgent,
    '.svc/config.yaml': [
      'healer:',
      '  enabled: true',
      '  cooldownMinutes: 0',
      '  projectCooldownMinutes: 0',
      '  maxConcurrentRuns: 2',
      '  maxRetries: 1',
    ].join('\n'),
  },
});
github.createRepo('acme', 'quiet', {
  files: { '.svc/config.yaml': 'healer:\n  enabled: false\n  sourceProjects: [billing]\n' },
});
github.createRepo('acme', 'misconfigured', {
  files: {
    '.svc/config.yaml': 'healer:\n  enabled: true\n  role: nobody\n  projectMapping:\n    - title: Misconfigured\n',
  },
});

let svc: TestStack;
let dataDir: string;
const projects: Record<string, string> = {};
test.before(async () => {
  svc = await startTestStack();
  dataDir = svc.config.dataDir;
});
test.after.always(async () => {
  await svc?.stop();
});

const heal = (source: string, body: unknown) =>
  svc.request('POST', `/alerts/heal?source=${source}`, { body: body as Record<string, unknown> });

test.serial('with no project healing, every alert is skipped as disabled', async (t) => {
  const response = await heal('sentry', sample('sentry-issue-created'));
  t.is(response.status, 200);
  t.deepEqual(response.body, {
    status: 'skipped',
    reason: 'disabled',
    fingerprint: 'sentry-1170820242',
    source: 'sentry',
  });
  for (const name of ['shop', 'metrics-app', 'quiet', 'misconfigured']) {
    const added = await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } });
    t.is(added.status, 201, JSON.stringify(added.body));
    projects[name] = added.body.project.id;
  }
});

test.serial('a Sentry issue dispatches a healer run on the project that takes it', async (t) => {
  const response = await heal('sentry', sample('sentry-issue-created'));
  t.is(response.status, 202, JSON.stringify(response.body));
  t.like(response.body, {
    status: 'dispatched',
    fingerprint: 'sentry-1170820242',
    projectId: projects.shop,
    source: 'sentry',
  });
  const run = await waitForRunState(svc, response.body.runId);
  t.is(run.state, 'succeeded');
  t.is(run.trigger, 'healer');
  t.is(run.agentName, 'healer');
  t.regex(run.prompt, /"title": "ZeroDivisionError: division by zero"/);
  t.regex(run.prompt, /"culprit": "shop\.checkout in apply_discount"/);
});

test.serial('the same issue again (as an alert-rule event) is in its cooldown, even after a restart', async (t) => {
  const again = await heal('sentry', sample('sentry-event-alert'));
  t.is(again.status, 200);
  t.like(again.body, { status: 'skipped', reason: 'cooldown', fingerprint: 'sentry-1170820242' });

  // API and worker restart on the same data and task queue: the cooldown is Temporal's, not memory.
  await svc.stack.stop();
  svc = await startTestStack({ dataDir, env: { SVC_TASK_QUEUE: svc.config.taskQueue } });
  const afterRestart = await heal('sentry', sample('sentry-event-alert'));
  t.like(afterRestart.body, { status: 'skipped', reason: 'cooldown' });

  const connection = await Connection.connect({ address: svc.stack.temporalAddress });
  try {
    const handle = new Client({ connection }).workflow.getHandle(healerWorkflowId(projects.shop!));
    const description = await handle.describe();
    t.is(description.type, 'healerWorkflow');
    t.is(description.status.name, 'RUNNING');
    // Kept as a replay fixture (test/workflows/replay.test.ts) when asked to record.
    if (process.env.SVC_RECORD_HISTORIES)
      writeFileSync(join(RELEASE_HISTORIES, 'healer.prefix.json'), historyToJSON(await handle.fetchHistory()));
  } finally {
    await connection.close();
  }
});

test.serial('Grafana: 1 + maxRetries healer runs per fingerprint, then max_retries', async (t) => {
  const alert = sample('grafana-firing');
  const first = await heal('grafana', alert);
  t.is(first.status, 202, JSON.stringify(first.body));
  t.like(first.body, { fingerprint: 'grafana-c6eadffa33fcdf37', projectId: projects['metrics-app'] });
  // cooldownMinutes 0: a retry may follow at once.
  const second = await heal('grafana', alert);
  t.is(second.status, 202);
  t.not(second.body.runId, first.body.runId);
  const third = await heal('grafana', alert);
  t.is(third.status, 200);
  t.like(third.body, { status: 'skipped', reason: 'max_retries', source: 'grafana' });
  const run = await waitForRunState(svc, second.body.runId);
  t.regex(run.prompt, /High error rate on \/api\/report/);
});

test.serial('an alert no project takes is no_match; the project that takes it but is off is disabled', async (t) => {
  const plugin = sample('sentry-plugin');
  const disabled = await heal('sentry', plugin);
  t.like(disabled.body, { status: 'skipped', reason: 'disabled', fingerprint: 'sentry-541485531' });
  const unmatched = await heal('sentry', { ...plugin, id: '9', project_slug: 'elsewhere', project: 'elsewhere' });
  t.is(unmatched.status, 200);
  t.like(unmatched.body, { status: 'skipped', reason: 'no_match' });
});

test.serial('bad input is a 400 envelope and dispatches nothing', async (t) => {
  const runsBefore = (await svc.request('GET', '/runs')).body.runs.length;
  const cases: [string, unknown, RegExp][] = [
    ['pagerduty', sample('sentry-issue-created'), /source/],
    ['sentry', {}, /non-empty JSON object/],
    ['sentry', [1, 2], /expected record/],
    ['sentry', { hello: 'world' }, /not a sentry webhook/],
    ['sentry', { id: '77', message: 'Misconfigured thing broke', project: 'misconfigured' }, /healer role "nobody"/],
  ];
  for (const [source, body, message] of cases) {
    const response = await heal(source, body);
    t.is(response.status, 400, `${source} ${JSON.stringify(body).slice(0, 60)}`);
    t.is(response.body.error.code, 'validation_error');
    t.regex(`${response.body.error.message} ${response.body.error.hint ?? ''}`, message);
  }
  t.is((await svc.request('GET', '/runs')).body.runs.length, runsBefore);
});
