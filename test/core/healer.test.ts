// The pure part of alert healing: real Sentry and Grafana webhook samples parsed into alerts,
// projects' claims and mapping rules, and the cooldown / retry / concurrency rule the healer
// workflow keeps.
import test from 'ava';
import { readFileSync } from 'node:fs';
import {
  chooseHealer,
  healerMemoryKey,
  healerPrompt,
  parseAlert,
  projectTakesAlert,
  ruleMatches,
  type AlertSource,
} from '../../core/healer.ts';
import {
  decideHeal,
  EMPTY_HEALER_MEMORY,
  UNCONFIRMED_ATTEMPT_GRACE_MS,
  type HealerMemoryState,
} from '../../core/healer-policy.ts';

const sample = (name: string) => JSON.parse(readFileSync(`test/fixtures/alerts/${name}.json`, 'utf8'));
const parsed = (source: AlertSource, name: string) => parseAlert(source, sample(name))!;

test('the three Sentry shapes name the issue, its culprit and its project', (t) => {
  const issue = parsed('sentry', 'sentry-issue-created');
  t.like(issue, {
    fingerprint: 'sentry-1170820242',
    fingerprintTrusted: true,
    title: 'ZeroDivisionError: division by zero',
    culprit: 'shop.checkout in apply_discount',
    sourceProject: 'shop',
    level: 'error',
    url: 'https://sentry.io/organizations/acme/issues/1170820242/',
    details: 'division by zero',
  });
  // The alert-rule action for the same issue shares its fingerprint: one memory per problem.
  const event = parsed('sentry', 'sentry-event-alert');
  t.is(event.fingerprint, issue.fingerprint);
  t.is(event.culprit, issue.culprit);
  t.is(event.labels.environment, 'production');
  t.is(event.sourceProject, 'shop');
  const plugin = parsed('sentry', 'sentry-plugin');
  t.like(plugin, {
    fingerprint: 'sentry-541485531',
    sourceProject: 'billing',
    culprit: 'raven.scripts.runner in main',
  });
});

test('a Grafana group is named by its first firing alert', (t) => {
  const alert = parsed('grafana', 'grafana-firing');
  t.like(alert, {
    fingerprint: 'grafana-c6eadffa33fcdf37',
    title: 'High error rate on /api/report',
    sourceProject: 'metrics-app',
    level: 'critical',
    details: '5xx ratio of /api/report above 5% for 10 minutes (now 12.4%)',
  });
  t.is(alert.labels.team, 'blue');
});

test('a body of neither shape is no alert', (t) => {
  t.is(parseAlert('sentry', { hello: 'world' }), null);
  t.is(parseAlert('grafana', { alerts: 'nope' }), null);
});

test('mapping rules: every condition must hold, a rule that names nothing takes nothing', (t) => {
  const alert = parsed('sentry', 'sentry-issue-created');
  t.true(ruleMatches({ source: 'sentry', culprit: 'SHOP.checkout' }, alert));
  t.false(ruleMatches({ source: 'grafana', culprit: 'shop.checkout' }, alert));
  t.false(ruleMatches({ culprit: 'shop.cart' }, alert));
  t.true(ruleMatches({ title: 'division by' }, alert));
  t.false(ruleMatches({ source: 'sentry' }, alert));
  t.false(ruleMatches({ labels: {} }, alert));
  t.true(ruleMatches({ labels: { service: 'metrics-app' } }, parsed('grafana', 'grafana-firing')));
});

test('a project takes only alerts of the source projects it claims, its repository name by default', (t) => {
  const alert = parsed('sentry', 'sentry-issue-created');
  t.is(projectTakesAlert({ projectMapping: [] }, 'shop', alert), 0);
  t.is(projectTakesAlert({ projectMapping: [] }, 'billing', alert), null);
  t.is(projectTakesAlert({ sourceProjects: ['SHOP'], projectMapping: [] }, 'storefront', alert), 0);
  // A rule narrows the claim; it never reaches past it.
  t.is(projectTakesAlert({ projectMapping: [{ title: 'division' }] }, 'billing', alert), null);
  t.is(
    projectTakesAlert({ projectMapping: [{ title: 'division' }, { culprit: 'shop', title: 'zero' }] }, 'shop', alert),
    2,
  );
  t.is(projectTakesAlert({ projectMapping: [{ title: 'overflow' }] }, 'shop', alert), null);
  // Without sourceProjects, a rule's own source project is the project's claim too.
  t.is(projectTakesAlert({ projectMapping: [{ sourceProject: 'shop', title: 'division' }] }, 'web', alert), 2);
  t.is(projectTakesAlert({ sourceProjects: ['web'], projectMapping: [{ title: 'division' }] }, 'web', alert), null);
  // An alert that names no source project is nobody's.
  const anonymous = parseAlert('grafana', { alerts: [{ status: 'firing', labels: { alertname: 'Disk full' } }] })!;
  t.is(anonymous.sourceProject, null);
  t.is(projectTakesAlert({ projectMapping: [{ title: 'Disk' }] }, 'shop', anonymous), null);
});

test('one project heals: the most specific enabled one; a tie is ambiguous, a disabled one holds only its own', (t) => {
  const project = (name: string, enabled: boolean, specificity: number | null) => ({ name, enabled, specificity });
  t.like(chooseHealer([project('a', true, 1), project('b', true, 3), project('c', true, null)]), {
    status: 'chosen',
    candidate: { name: 'b' },
  });
  t.deepEqual(chooseHealer([project('a', true, 2), project('b', true, 2)]), { status: 'skipped', reason: 'ambiguous' });
  t.like(chooseHealer([project('off', false, 5), project('a', true, 1)]), {
    status: 'chosen',
    candidate: { name: 'a' },
  });
  t.deepEqual(chooseHealer([project('off', false, 5), project('a', true, null)]), {
    status: 'skipped',
    reason: 'disabled',
  });
  t.deepEqual(chooseHealer([project('a', true, null)]), { status: 'skipped', reason: 'no_match' });
  t.deepEqual(chooseHealer([project('off', false, 1)]), { status: 'skipped', reason: 'disabled' });
});

const keep = (text: string) => text;

test('the prompt quotes the alert as bounded JSON data inside a fixed instruction', (t) => {
  const prompt = healerPrompt(parsed('sentry', 'sentry-issue-created'), keep);
  t.regex(prompt, /"title": "ZeroDivisionError: division by zero"/);
  t.regex(prompt, /"culprit": "shop\.checkout in apply_discount"/);
  t.regex(prompt, /^You are asked to fix/);
  const huge = parseAlert('sentry', { id: '1', message: '"'.repeat(100_000), culprit: 'y'.repeat(100_000) })!;
  const labels = Object.fromEntries(
    Array.from({ length: 100 }, (_, index) => [`k${index}${'"'.repeat(99)}`, '"'.repeat(999)]),
  );
  huge.labels = labels;
  t.true(healerPrompt(huge, keep).length < 16_000);
});

test('fingerprints chosen by alert text share one memory per source', (t) => {
  const issue = parsed('sentry', 'sentry-issue-created');
  t.is(healerMemoryKey(issue), 'sentry-1170820242');
  const byText = (message: string) => parseAlert('sentry', { message, project: 'shop' })!;
  t.false(byText('boom 1').fingerprintTrusted);
  t.not(byText('boom 1').fingerprint, byText('boom 2').fingerprint);
  t.is(healerMemoryKey(byText('boom 1')), healerMemoryKey(byText('boom 2')));
  t.true(parsed('grafana', 'grafana-firing').fingerprintTrusted);
});

const request = {
  fingerprint: 'f1',
  prompt: 'fix it',
  cooldownMinutes: 30,
  maxRetries: 1,
  projectCooldownMinutes: 0,
  maxConcurrentRuns: 5,
  finishedRunIds: [] as string[],
};
const minutes = (n: number) => n * 60_000;
const confirm = (memory: HealerMemoryState, runId: string): HealerMemoryState => ({
  ...memory,
  attempts: memory.attempts.map((entry) => (entry.runId === null ? { ...entry, runId } : entry)),
});

test('the first alert dispatches; a repeat inside the cooldown is skipped, after it dispatches again', (t) => {
  const first = decideHeal(EMPTY_HEALER_MEMORY, request, 0, 'm');
  t.deepEqual(first.decision, { decision: 'dispatch', attempt: 1, prompt: 'fix it', key: 'm:1' });
  const confirmed = confirm(first.memory, 'run_a');
  t.deepEqual(decideHeal(confirmed, request, minutes(29), 'm').decision, {
    decision: 'skip',
    reason: 'cooldown',
    runId: 'run_a',
  });
  const second = decideHeal(confirmed, { ...request, prompt: 'again' }, minutes(31), 'm');
  t.deepEqual(second.decision, { decision: 'dispatch', attempt: 2, prompt: 'again', key: 'm:2' });
  const both = confirm(second.memory, 'run_b');
  // 1 + maxRetries runs, then no more, whatever the time.
  t.like(decideHeal(both, request, minutes(10_000), 'm').decision, { decision: 'skip', reason: 'max_retries' });
});

test('an attempt in flight holds others off, and is offered again (same prompt) when its dispatcher died', (t) => {
  const { memory } = decideHeal(EMPTY_HEALER_MEMORY, request, 0, 'm');
  t.like(decideHeal(memory, { ...request, prompt: 'other' }, 1000, 'm').decision, {
    decision: 'skip',
    reason: 'cooldown',
  });
  const again = decideHeal(memory, { ...request, prompt: 'other' }, UNCONFIRMED_ATTEMPT_GRACE_MS + 1, 'm');
  t.deepEqual(again.decision, { decision: 'dispatch', attempt: 1, prompt: 'fix it', key: 'm:1' });
  t.is(again.memory.attempts.length, 1);
});

test('per project: a cooldown and a limit of unfinished runs, whatever the fingerprints', (t) => {
  const project = { ...request, projectCooldownMinutes: 10, maxConcurrentRuns: 1 };
  const first = decideHeal(EMPTY_HEALER_MEMORY, project, 0, 'm');
  t.like(first.decision, { decision: 'dispatch' });
  const running = confirm(first.memory, 'run_a');
  t.like(decideHeal(running, { ...project, fingerprint: 'f2' }, minutes(5), 'm').decision, { reason: 'cooldown' });
  // Past the project cooldown, the first run still unfinished holds the next one off.
  t.like(decideHeal(running, { ...project, fingerprint: 'f2' }, minutes(11), 'm').decision, { reason: 'busy' });
  const done = decideHeal(running, { ...project, fingerprint: 'f2', finishedRunIds: ['run_a'] }, minutes(11), 'm');
  t.like(done.decision, { decision: 'dispatch', attempt: 2 });
  // A forgotten fingerprint never hands its attempt number out again.
  const later = decideHeal(
    confirm(done.memory, 'run_b'),
    { ...project, fingerprint: 'f3', finishedRunIds: ['run_b'] },
    minutes(30 * 24 * 60),
    'm',
  );
  t.like(later.decision, { decision: 'dispatch', attempt: 3 });
  t.deepEqual(
    later.memory.attempts.map((entry) => entry.fingerprint),
    ['f3'],
  );
});
