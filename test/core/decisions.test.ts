// The pure decisions, table by table: the finalize verdict (the reference's reap order), what a
// resumed plan-run starts from, a child's failure, the steering inbox's order, and a trigger's run.
import test from 'ava';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { finalizeVerdict, unpostedResult, type FinalizeResult } from '../../core/finalize.ts';
import { claimAll, foldIntoPrompt, unreadInClaimOrder, type InboxItem } from '../../core/inbox.ts';
import {
  childFailureFor,
  childrenToResume,
  renderPlanPrompt,
  sanitizeHandle,
  type PlanChild,
} from '../../core/plan-model.ts';
import { triggerPrompt, triggerRunRequest } from '../../core/trigger-run.ts';

const result = (overrides: Partial<FinalizeResult>): FinalizeResult => ({
  pushed: true,
  commitsAhead: 2,
  emptyPush: false,
  dirty: false,
  events: [],
  artifacts: {},
  prBranch: 'svc/run_x',
  stages: [{ stage: 'branch_push', status: 'ok' }],
  ...overrides,
});

const pushFailed = (error: string) => ({
  pushed: false,
  stages: [{ stage: 'branch_push' as const, status: 'failed' as const, error }],
});

for (const [name, input, onExistingRef, state, reason, extra] of [
  ['pushed commits', result({}), false, 'succeeded', null, { pushedBranch: 'svc/run_x' }],
  ['never posted', unpostedResult('timeout'), false, 'failed', 'finalize_unposted', {}],
  ['no commits, dirty tree', result({ commitsAhead: 0, dirty: true }), false, 'failed', 'dropped_commit', {}],
  ['no commits, onto an existing ref', result({ commitsAhead: 0 }), true, 'failed', 'no_changes', {}],
  ['no commits on a fresh branch', result({ commitsAhead: 0 }), false, 'succeeded', null, { noChanges: true }],
  [
    'dropped work beats the existing ref',
    result({ commitsAhead: 0, dirty: true }),
    true,
    'failed',
    'dropped_commit',
    {},
  ],
  [
    'a protected branch',
    result(pushFailed('remote: GH006: Protected branch update failed')),
    false,
    'failed',
    'push_rejected_policy',
    {},
  ],
  [
    'push protection',
    result(pushFailed('push declined due to repository rule violations')),
    false,
    'failed',
    'push_rejected_policy',
    {},
  ],
  ['any other push failure', result(pushFailed('non-fast-forward')), false, 'failed', 'finalize_failed', {}],
  ['commits unknown', result({ commitsAhead: null }), false, 'failed', 'finalize_failed', {}],
] as const) {
  test(`finalize verdict: ${name}`, (t) => {
    const verdict = finalizeVerdict(input as FinalizeResult, onExistingRef);
    t.like(verdict, { state, failureReason: reason, ...extra });
  });
}

const child = (seq: number, overrides: Partial<PlanChild>): PlanChild => ({
  seq,
  seedId: `s-${seq}`,
  runId: `run_${seq}`,
  state: 'pending',
  createdAt: 'c',
  updatedAt: 'u',
  startedAt: 's',
  endedAt: null,
  prUrl: null,
  prMergedAt: null,
  failureReason: null,
  retryCount: 0,
  ...overrides,
});

test('resume: merged and skipped stay; a merge timeout or an open PR waits again; the rest starts afresh', (t) => {
  const resumed = childrenToResume(
    [
      child(1, { state: 'merged' }),
      child(2, { state: 'skipped', runId: null }),
      child(3, { state: 'failed', failureReason: 'child_pr_merge_timeout', prUrl: 'pr/3', endedAt: 'e' }),
      child(4, { state: 'failed', failureReason: 'child_crashed', retryCount: 1, prUrl: 'pr/4' }),
      child(5, { state: 'pending', runId: null }),
    ],
    'now',
  )!;
  t.deepEqual(
    resumed.map((one) => [one.state, one.runId, one.failureReason, one.prUrl]),
    [
      ['merged', 'run_1', null, null],
      ['skipped', null, null, null],
      ['pr_open', 'run_3', null, 'pr/3'],
      ['pending', null, null, null],
      ['pending', null, null, null],
    ],
  );
  t.is(resumed[3]!.retryCount, 0, 'a fresh start has its retry again');
  t.is(childrenToResume([child(1, { state: 'merged' })], 'now'), null, 'nothing left: null');
});

for (const [state, failureReason, expected] of [
  ['succeeded', null, null],
  ['failed', 'crashed', 'child_crashed'],
  ['cancelled', null, 'child_cancelled'],
  ['failed', null, 'child_failed'],
] as const) {
  test(`child failure of a ${state} run (${failureReason ?? 'no reason'}) is ${expected}`, (t) => {
    t.is(childFailureFor({ state, failureReason }), expected);
  });
}

test('plan prompts and handles', (t) => {
  const seed = { id: 'acme-1', title: ' Fix it ', description: ' The details. ' };
  t.is(renderPlanPrompt('work on {seed_id}: {seed_body}', seed), 'work on acme-1: Fix it\n\nThe details.');
  t.is(sanitizeHandle('night-bot_2'), 'night-bot_2');
  for (const bad of ['-x', 'a b', '', null, undefined]) t.is(sanitizeHandle(bad), 'operator', String(bad));
});

const message = (id: string, priority: InboxItem['priority'], seq: number): InboxItem => ({
  id,
  body: `body ${id}`,
  priority,
  fromActor: 'op',
  createdAt: 't',
  seq,
  state: 'unread',
  deliveredAt: null,
  deliveredRunId: null,
});

test('the inbox: most important first, then oldest; each message claimed once; folded after the prompt', (t) => {
  const inbox = [
    message('a', 'normal', 1),
    message('b', 'urgent', 2),
    message('c', 'normal', 3),
    message('d', 'low', 4),
  ];
  t.deepEqual(
    unreadInClaimOrder(inbox).map((item) => item.id),
    ['b', 'a', 'c', 'd'],
  );
  const claimed = claimAll(inbox, 'run_x', 'at');
  t.deepEqual(
    claimed.map((item) => [item.id, item.state, item.deliveredRunId]),
    ['b', 'a', 'c', 'd'].map((id) => [id, 'delivered', 'run_x']),
  );
  t.deepEqual(claimAll(inbox, 'run_x', 'later'), [], 'never twice');
  t.is(foldIntoPrompt('do it', []), 'do it');
  t.regex(
    foldIntoPrompt('do it', claimed.slice(0, 1)),
    /^do it\n\nSteering messages[^\n]*\n- \[urgent\] op: body b\n$/,
  );
});

test('a trigger: its prompt, else the project default, else its seed; none at all is a problem', (t) => {
  t.is(triggerPrompt({ prompt: 'p', seed: 's' }, 'd'), 'p');
  t.is(triggerPrompt({ seed: 's' }, 'd'), 'd');
  t.is(triggerPrompt({ seed: 's' }, undefined), 'work on sd s');
  t.is(triggerPrompt({}, undefined), undefined);
  const agent = BUILTIN_AGENTS.find((one) => one.name === 'shell')!;
  const base = { defaults: null, project: { id: 'prj_x', defaultBranch: 'main' }, agent, runBranchPrefix: 'svc' };
  const trigger = {
    id: 'nightly',
    kind: 'cron' as const,
    cron: '0 3 * * *',
    role: 'shell',
    seed: 'acme-1',
    maxCostUsd: 2,
  };
  t.like(triggerRunRequest({ ...base, trigger, label: 'schedule' }), {
    prompt: 'work on sd acme-1',
    trigger: 'schedule',
    seedId: 'acme-1',
    maxCostUsd: 2,
    triggerFire: { projectId: 'prj_x', triggerId: 'nightly' },
  });
  t.deepEqual(triggerRunRequest({ ...base, trigger: { ...trigger, seed: undefined }, label: 'manual' }), {
    problem: 'trigger "nightly" has no prompt, seed or project defaultPrompt',
  });
});
