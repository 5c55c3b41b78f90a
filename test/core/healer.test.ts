// The pure part of alert healing: real Sentry and Grafana webhook samples parsed into alerts,
// projects' mapping rules, and the cooldown / retry rule the healer workflow keeps.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { healerPrompt, parseAlert, projectTakesAlert, ruleMatches, type AlertSource } from '../../core/healer.ts';
import { decideHeal, UNCONFIRMED_ATTEMPT_GRACE_MS, type HealAttempt } from '../../core/healer-policy.ts';

const sample = (name: string) => JSON.parse(readFileSync(`test/fixtures/alerts/${name}.json`, 'utf8'));
const parsed = (source: AlertSource, name: string) => parseAlert(source, sample(name))!;

test('the three Sentry shapes name the issue, its culprit and its project', (t) => {
  const issue = parsed('sentry', 'sentry-issue-created');
  t.like(issue, {
    fingerprint: 'sentry-1170820242',
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

test('mapping rules: every condition must hold, a rule without one takes nothing', (t) => {
  const alert = parsed('sentry', 'sentry-issue-created');
  t.true(ruleMatches({ source: 'sentry', culprit: 'SHOP.checkout' }, alert));
  t.false(ruleMatches({ source: 'grafana', culprit: 'shop.checkout' }, alert));
  t.false(ruleMatches({ culprit: 'shop.cart' }, alert));
  t.true(ruleMatches({ title: 'division by' }, alert));
  t.false(ruleMatches({ source: 'sentry' }, alert));
  t.true(ruleMatches({ labels: { service: 'metrics-app' } }, parsed('grafana', 'grafana-firing')));
  // Without rules a project takes the alerts whose source project is its repository's name.
  t.true(projectTakesAlert([], 'shop', alert));
  t.false(projectTakesAlert([], 'billing', alert));
});

test('the prompt carries the alert, bounded', (t) => {
  const prompt = healerPrompt(parsed('sentry', 'sentry-issue-created'));
  t.regex(prompt, /ZeroDivisionError: division by zero/);
  t.regex(prompt, /Culprit: shop\.checkout in apply_discount/);
  const huge = parseAlert('sentry', { id: '1', message: 'x'.repeat(100_000), culprit: 'y'.repeat(100_000) })!;
  t.true(healerPrompt(huge).length < 6000);
});

const request = { prompt: 'fix it', cooldownMinutes: 30, maxRetries: 1 };
const minutes = (n: number) => n * 60_000;

test('the first alert dispatches; a repeat inside the cooldown is skipped, after it dispatches again', (t) => {
  const first = decideHeal([], request, 0);
  t.deepEqual(first.decision, { decision: 'dispatch', attempt: 1, prompt: 'fix it' });
  const confirmed: HealAttempt[] = first.attempts.map((entry) => ({ ...entry, runId: 'run_a' }));
  t.deepEqual(decideHeal(confirmed, request, minutes(29)).decision, {
    decision: 'skip',
    reason: 'cooldown',
    runId: 'run_a',
  });
  const second = decideHeal(confirmed, { ...request, prompt: 'again' }, minutes(31));
  t.deepEqual(second.decision, { decision: 'dispatch', attempt: 2, prompt: 'again' });
  const both = second.attempts.map((entry) => ({ ...entry, runId: entry.runId ?? 'run_b' }));
  // 1 + maxRetries runs, then no more, whatever the time.
  t.like(decideHeal(both, request, minutes(10_000)).decision, { decision: 'skip', reason: 'max_retries' });
});

test('an attempt in flight holds others off, and is offered again (same prompt) when its dispatcher died', (t) => {
  const { attempts } = decideHeal([], request, 0);
  t.like(decideHeal(attempts, { ...request, prompt: 'other' }, 1000).decision, {
    decision: 'skip',
    reason: 'cooldown',
  });
  const again = decideHeal(attempts, { ...request, prompt: 'other' }, UNCONFIRMED_ATTEMPT_GRACE_MS + 1);
  t.deepEqual(again.decision, { decision: 'dispatch', attempt: 1, prompt: 'fix it' });
  t.is(again.attempts.length, 1);
});
