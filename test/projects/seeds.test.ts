// Seeds, plans and ready plans read from a project's .seeds/ files, made with the real `sd` CLI.
import test from 'ava';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlanRunEntity } from '../../db/entities/index.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'tracked');
github.createRepo('acme', 'untracked');
github.sd('acme', 'tracked', 'init');
const first = github.createSeed('acme', 'tracked', 'First step', ['--description', 'Do the first thing']);
const second = github.createSeed('acme', 'tracked', 'Second step');
const third = github.createSeed('acme', 'tracked', 'Third step');
github.sd('acme', 'tracked', 'block', second, '--by', first);
const epic = github.createSeed('acme', 'tracked', 'The epic', ['--type', 'epic']);
github.sd('acme', 'tracked', 'plan', 'create', epic);
const workdir = github.workdir('acme', 'tracked');
const planLine = (file: string) =>
  JSON.parse(
    readFileSync(join(workdir, '.seeds', file), 'utf8')
      .trim()
      .split('\n')
      .at(-1)!,
  ) as { id: string };
const planId = planLine('plans.jsonl').id;
github.sd('acme', 'tracked', 'plan', 'adopt', planId, first, second, third);
github.sd('acme', 'tracked', 'close', first);
// Hand-written lines the reader must survive: garbage, a record with no id, and a duplicate id
// whose later line wins.
appendFileSync(
  join(workdir, '.seeds', 'issues.jsonl'),
  'this is not json\n{"title":"no id"}\n' +
    JSON.stringify({ id: third, title: 'Third step, renamed', status: 'open' }) +
    '\n',
);
appendFileSync(
  join(workdir, '.seeds', 'plans.jsonl'),
  '{broken\n' +
    JSON.stringify({ id: 'pl-draft', status: 'draft', children: [third] }) +
    '\n' +
    JSON.stringify({ id: 'pl-done', status: 'approved', children: [first] }) +
    '\n',
);
github.pushAll('acme', 'tracked', 'seeds');

let svc: TestStack;
let tracked: string;
let untracked: string;
test.before(async () => {
  svc = await startTestStack();
  tracked = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/tracked' } })).body
    .project.id;
  untracked = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/untracked' } })).body
    .project.id;
});
test.after.always(() => svc?.stop());

test('hasSeeds follows the .seeds/ directory', async (t) => {
  t.true((await svc.request('GET', `/projects/${tracked}`)).body.project.hasSeeds);
  t.false((await svc.request('GET', `/projects/${untracked}`)).body.project.hasSeeds);
});

test('a seed reads as the last line for its id, with its blockers', async (t) => {
  const renamed = await svc.request('GET', `/projects/${tracked}/seeds/${third}`);
  t.is(renamed.status, 200);
  t.deepEqual(renamed.body, { id: third, title: 'Third step, renamed', status: 'open', blockedBy: [] });
  const closed = await svc.request('GET', `/projects/${tracked}/seeds/${first}`);
  t.like(closed.body, { id: first, status: 'closed' });
});

test('an unknown seed is 404 not_found, not a 500', async (t) => {
  const response = await svc.request('GET', `/projects/${tracked}/seeds/nope-0000`);
  t.is(response.status, 404);
  t.is(response.body.error.code, 'not_found');
});

test('seeds/plans is the plans list, never a seed called "plans"', async (t) => {
  const response = await svc.request('GET', `/projects/${tracked}/seeds/plans`);
  t.is(response.status, 200);
  const plans = response.body.plans as { id: string; status: string; childCount: number; name?: string }[];
  t.deepEqual(plans.map((plan) => plan.id).sort(), [planId, 'pl-done', 'pl-draft'].sort());
  t.like(
    plans.find((plan) => plan.id === planId),
    { status: 'approved', childCount: 3, name: 'The epic' },
  );
});

test.serial('ready plans: approved, with an open child, not dispatched yet', async (t) => {
  const response = await svc.request('GET', `/projects/${tracked}/ready-plans`);
  t.is(response.status, 200);
  t.deepEqual(response.body.plans, [{ id: planId, name: 'The epic', status: 'approved', openChildCount: 2 }]);
});

test.serial('a plan that was dispatched once is no longer ready', async (t) => {
  const em = svc.stack.readModel.em();
  const now = new Date();
  em.create(PlanRunEntity, {
    id: 'plnr_000000000000',
    planId,
    source: 'plan',
    projectId: tracked,
    agentName: 'shell',
    promptTemplate: 'work on sd {seed_id}',
    ref: null,
    providerOverride: null,
    modelOverride: null,
    maxCostUsd: null,
    dispatcherHandle: 'operator',
    trigger: 'manual',
    state: 'succeeded',
    failureReason: null,
    createdAt: now,
    startedAt: now,
    endedAt: now,
    resumedAt: null,
    updatedAt: now,
  });
  await em.flush();
  t.teardown(() => svc.stack.readModel.em().nativeDelete(PlanRunEntity, { id: 'plnr_000000000000' }));
  t.deepEqual((await svc.request('GET', `/projects/${tracked}/ready-plans`)).body.plans, []);
});

test('a project without .seeds/ is 400 project_lacks_seeds on all three routes; an unknown project 404', async (t) => {
  for (const path of ['seeds/plans', `seeds/${first}`, 'ready-plans']) {
    const response = await svc.request('GET', `/projects/${untracked}/${path}`);
    t.is(response.status, 400, path);
    t.is(response.body.error.code, 'project_lacks_seeds');
    t.is((await svc.request('GET', `/projects/prj_000000000000/${path}`)).status, 404);
  }
});

test('seed routes need the operator', async (t) => {
  t.is((await svc.request('GET', `/projects/${tracked}/seeds/plans`, { token: null })).status, 401);
});
