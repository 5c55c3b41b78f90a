// Pause at the cost cap (core/cost-pause.ts): how generations' usage adds up, which raises are taken.
import test from 'ava';
import { addUsage, capRaiseProblem, pausedReason, resumePrompt } from '../../core/cost-pause.ts';

const usage = (costUsd: number | null, tokensInput: number | null = null) => ({
  costUsd,
  tokensInput,
  tokensOutput: null,
  tokensCacheRead: null,
  tokensCacheWrite: null,
});

test('generations add up, to the nano-dollar; what nobody reported stays unknown', (t) => {
  t.deepEqual(addUsage(null, usage(0.6)), usage(0.6));
  t.deepEqual(addUsage(usage(0.6, 300), usage(0.3, 50)), usage(0.9, 350));
  t.deepEqual(addUsage(usage(0.1), usage(0.2)), usage(0.3));
  t.deepEqual(addUsage(usage(null), usage(null)), usage(null));
  t.deepEqual(addUsage(usage(0.5), null), usage(0.5));
});

test('a raise is taken only by a paused run, and only above what it spent', (t) => {
  t.regex(capRaiseProblem(false, 0.6, 5)!, /not paused/);
  t.regex(capRaiseProblem(true, 0.6, 0.6)!, /must be above what the run has spent \(\$0\.60\)/);
  t.regex(capRaiseProblem(true, 0.6, 0.5)!, /above/);
  t.is(capRaiseProblem(true, 0.6, 0.61), null);
  t.is(capRaiseProblem(true, null, 0.01), null);
});

test('the paused run says why and how to go on; the next agent is told where it stands', (t) => {
  t.is(pausedReason(0.6, 0.5), 'its cost ($0.60) crossed its cap ($0.50): raise the cap to resume, or cancel');
  const prompt = resumePrompt('Fix the bug.', 0.6, 2);
  t.regex(prompt, /after spending \$0\.60[\s\S]*now \$2\.00[\s\S]*\n\nFix the bug\.$/);
});
